"""
Which buffer a memref value is: the ops that only view a buffer (a subview, a reshape,
a cast) and the ops that make one, shared by the passes that reason about buffers
(`promote-accumulators`, `linalg-tile`'s row blocks, `convert-to-llvm`'s noalias marks).
"""

from xdsl.dialects import memref
from xdsl.ir import SSAValue

VIEWS = (
    memref.SubviewOp,
    memref.ExpandShapeOp,
    memref.CollapseShapeOp,
    memref.CastOp,
    memref.ReinterpretCastOp,
)
ALLOCATIONS = (memref.AllocOp, memref.AllocaOp)


def viewed_buffer(value: SSAValue) -> SSAValue:
    """The buffer that `value` views (itself if it is no view)."""
    while isinstance(owner := value.owner, VIEWS):
        value = owner.operands[0]
    return value

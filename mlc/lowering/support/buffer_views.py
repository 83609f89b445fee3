"""
Which buffer a memref value is: the ops that only view a buffer (a subview, a reshape,
a cast) and the ops that make one, shared by the passes that reason about buffers
(`promote-accumulators`, `linalg-tile`'s row blocks and absorbed paddings,
`convert-to-llvm`'s noalias marks).
"""

from xdsl.dialects import memref
from xdsl.ir import Operation, SSAValue

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


def aliases(value: SSAValue) -> list[SSAValue]:
    """Every value naming `value`'s memory, in a fixed order: the buffer it views and
    all views of that buffer, through any chain of views (a free or a write may go
    through any of them)."""
    found: dict[SSAValue, None] = {}
    pending = [viewed_buffer(value)]
    while pending:
        current = pending.pop(0)
        if current in found:
            continue
        found[current] = None
        pending.extend(u.operation.results[0] for u in current.uses if _views(u.operation, current))
    return list(found)


def _views(op: Operation, source: SSAValue) -> bool:
    return isinstance(op, VIEWS) and op.operands[0] is source

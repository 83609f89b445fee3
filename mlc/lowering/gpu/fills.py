"""
Fill generics that the GPU kernel after them can absorb.

`convert-ml-to-linalg` starts a matmul from zeros and a reduction from its identity
(`-inf` for a max, 0 for a sum) with a fill generic: an input-less, all-parallel
generic writing one constant to its whole output. On the GPU that is a kernel of its
own. When the next generic writing that buffer keeps its outputs in registers (a
contraction's accumulators, a reduction's `iter_args`), it can start them at the
constant instead of loading the buffer, and the fill goes: one launch and one pass
over the output fewer.
"""

from xdsl.dialects import arith, memref
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap


def filled_with(op: GenericOp) -> SSAValue | None:
    """The constant an input-less, all-parallel, identity generic fills its output with."""
    if op.inputs or len(op.outputs) != 1 or op.res:
        return None
    if any(it.data != IteratorType.PARALLEL for it in op.iterator_types):
        return None
    affine_map = op.get_indexing_maps().data[0].data
    if affine_map != AffineMap.identity(affine_map.num_dims):
        return None
    yielded = op.body.block.last_op
    assert isinstance(yielded, YieldOp)
    value = yielded.operands[0]
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and owner.parent_block() is op.body.block:
        return value
    return None


def fill_before(op: GenericOp, output: int = 0) -> GenericOp | None:
    """The fill generic that writes `op`'s output `output` last before it, if nothing
    reads or writes that buffer in between."""
    buffer = op.outputs[output]
    previous = op.prev_op
    while previous is not None:
        if isinstance(previous, GenericOp) and list(previous.outputs) == [buffer]:
            return previous if filled_with(previous) is not None else None
        if isinstance(previous, memref.DimOp):
            pass  # reads the sizes, not the elements
        elif any(buffer in inner.operands for inner in previous.walk()):
            return None  # read or written in between, maybe inside a region
        previous = previous.prev_op
    return None

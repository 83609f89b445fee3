"""
Fill generics that the GPU kernel after them can absorb.

`convert-ml-to-linalg` starts a matmul from zeros and a reduction from its identity
(`-inf` for a max, 0 for a sum) with a fill generic: an input-less, all-parallel
generic writing one constant to its whole output. On the GPU that is a kernel of its
own. When the next generic writing that buffer keeps its outputs in registers (a
contraction's accumulators, a reduction's `iter_args`, a scan's running totals), it
can start them at the constant instead of loading the buffer, and the fill goes: one
launch and one pass over the output fewer.

`absorbable_fills` finds them for `convert-linalg-to-parallel-loops`, whose reductions
carry their outputs; `convert-contractions-to-gpu` asks `fill_before` per contraction.
"""

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from mlc.lowering.gpu.loop_analysis import (
    outputs_independent_of,
    scan_carried_outputs,
    split_iterators,
)


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


def _covers(op: GenericOp, output: int) -> bool:
    """Whether the parallel loops write every element of output `output` (each result
    of its map a parallel dim, or 0 on a dim of static size 1)."""
    operand = op.outputs[output]
    affine_map = op.get_indexing_maps().data[len(op.inputs) + output].data
    shape = operand.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    dims: list[int] = []
    for size, expr in zip(shape, affine_map.results, strict=True):
        if isinstance(expr, AffineDimExpr):
            dims.append(expr.position)
        elif not (isinstance(expr, AffineConstantExpr) and expr.value == 0 and size == 1):
            return False
    return len(set(dims)) == len(dims)


def absorbable_fills(module: ModuleOp) -> tuple[dict[int, dict[int, Attribute]], set[int]]:
    """The fills that reductions carrying their outputs can start from (module docstring):
    per reduction (by id) its outputs' starting constants, and the fills' ids."""
    starts: dict[int, dict[int, Attribute]] = {}
    absorbed: set[int] = set()
    for op in module.walk():
        if not isinstance(op, GenericOp) or op.res:
            continue
        _, reduction = split_iterators(op)
        if not reduction:
            continue
        if outputs_independent_of(op, reduction):
            carried = range(len(op.outputs))
        elif (carried := scan_carried_outputs(op, reduction)) is None:
            continue
        for output in carried:
            fill = fill_before(op, output)
            if fill is None or id(fill) in absorbed or not _covers(op, output):
                continue
            constant = filled_with(fill)
            assert constant is not None and isinstance(constant.owner, arith.ConstantOp)
            starts.setdefault(id(op), {})[output] = constant.owner.value
            absorbed.add(id(fill))
    return starts, absorbed

"""
A scatter that compacts a mask's elements (NonZero's, as the ONNX importer writes it)
as one loop of plain writes, without the index check's reductions and the winners'
table: its indices are in range and distinct by construction.

The importer lists the coordinates of a mask `m` of `N` elements (`data_sized.py`) by a
scatter whose column of element `t` is `select(m, exclusive_cumsum(m), N)` broadcast
over the coordinates' rows:

    %c = ml.cumsum (ml.cast %m to i64) {axis = 0, exclusive = true}
    %s = ml.select %m, %c, (tensor.from_elements %n)   // %n: the count of %m
    %i = ml.broadcast_to (ml.reshape %s to [1, N]) to [R, N]
    %r = ml.scatter_elements %data, %i, %u {axis = 1}   // reduction none

The exclusive cumsum of a 0/1 mask takes each value in `[0, N)` at most once where the
mask is set, so the set elements land on distinct columns below `N`; every other
element lands on column `N`, where the last of them stays. That last one is known
without a table: the element `t` with the mask clear whose clear elements before it,
`t - c[t]`, number all the clear elements but itself, `N - (c[N-1] + m[N-1]) - 1`.
The only run-time check left is the host's `N < data dim 1`, with no device read (the
column is clamped below the dim all the same: a failed check does not stop the call).

Generic GPU scatters with reduction `none` take three kernels and the check two more
(`scatter_atomic`, `index_checks`); this one is a single kernel whose threads write
their column under `scf.if` (`mlc.lowering.gpu.atomic_loops`'s `select`).
"""

from dataclasses import dataclass

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, IntegerAttr, i1, i64
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from mlc import shapes
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.common import element_type, size_of, tensor_type
from mlc.lowering.convert_ml_to_linalg.index_checks import (
    emit_check,
    highest_index,
    range_text,
)
from mlc.lowering.convert_ml_to_linalg.scatter_atomic import (
    combined_at,
    coordinates,
    element_count,
    update_loop,
)
from mlc.lowering.support.index_calc import Index, IndexCalc


@dataclass
class Compaction:
    """The mask (i1, [N]), its exclusive cumsum (i64, [N]) and the spare column (N, an
    i64 the host holds)."""

    mask: SSAValue
    columns: SSAValue
    spare: SSAValue | int


def compaction_of(op: ml.ScatterElementsOp) -> Compaction | None:
    """The compaction `op` is (see the module docstring), or None."""
    select = column_select(op)
    if select is None:
        return None
    mask, cumsum = select.cond, select.a.owner
    if element_type(mask) != i1 or not isinstance(cumsum, ml.CumSumOp):
        return None
    if not cumsum.exclusive.value.data or cumsum.axis.value.data != 0:
        return None
    cast = cumsum.x.owner
    if not isinstance(cast, ml.CastOp) or cast.x != mask or element_type(cumsum.x) != i64:
        return None
    spare = host_scalar(select.b)
    if spare is None or not counts(spare, mask):
        return None
    return Compaction(mask, cumsum.result, spare)


def column_select(op: ml.ScatterElementsOp) -> ml.SelectOp | None:
    """The 1-D `ml.select` whose [1, N] reshape, copied over a static number of rows,
    is `op`'s indices along its axis 1 (reduction `none`), or None."""
    if op.reduction.data != "none" or tensor_type(op.data).get_num_dims() != 2:
        return None
    rows = tensor_type(op.indices).get_shape()[0]
    if op.axis.value.data not in (1, -1) or not shapes.is_static(rows):
        return None
    row = op.indices.owner
    if isinstance(row, ml.BroadcastToOp):
        if not same_columns(row):
            return None
        row = row.x.owner
    if not isinstance(row, ml.ReshapeOp) or tensor_type(row.result).get_shape()[0] != 1:
        return None
    select = row.x.owner
    if not isinstance(select, ml.SelectOp) or tensor_type(select.result).get_num_dims() != 1:
        return None
    return select


def same_columns(broadcast: ml.BroadcastToOp) -> bool:
    """Whether `broadcast` copies its [1, N] rows without widening them (N static on
    both sides, or both shapes built from one count)."""
    before = tensor_type(broadcast.x).get_shape()[1]
    after = tensor_type(broadcast.result).get_shape()[1]
    if shapes.is_static(before) or shapes.is_static(after):
        return before == after
    reshape = broadcast.x.owner
    if not isinstance(reshape, ml.ReshapeOp) or reshape.shape is None:
        return False
    built = [v.owner for v in (reshape.shape, broadcast.shape)]
    if not all(isinstance(b, tensor.FromElementsOp) and len(b.elements) == 2 for b in built):
        return False
    return built[0].elements[1] == built[1].elements[1]  # pyright: ignore[reportAttributeAccessIssue]


def host_scalar(value: SSAValue) -> SSAValue | int | None:
    """The i64 a rank-0 tensor holds when the host has it (an element or a constant)."""
    owner = value.owner
    if isinstance(owner, tensor.FromElementsOp) and len(owner.elements) == 1:
        element = owner.elements[0]
        return element if element.type == i64 else None
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        if tensor_type(value).get_num_dims() == 0 and element_type(value) == i64:
            (number,) = owner.value.get_values()
            return int(number)
    return None


def counts(spare: SSAValue | int, mask: SSAValue) -> bool:
    """Whether `spare` is the element count of the 1-D `mask` (as the importer built it)."""
    length = tensor_type(mask).get_shape()[0]
    if isinstance(spare, int):
        return length >= 0 and spare == length
    reshape = mask.owner
    if isinstance(reshape, ml.ReshapeOp) and reshape.shape is not None:
        shape = reshape.shape.owner
        if isinstance(shape, tensor.FromElementsOp) and list(shape.elements) == [spare]:
            return True
    owner = spare.owner
    if isinstance(owner, arith.IndexCastOp):
        dim = owner.input.owner
        if isinstance(dim, tensor.DimOp) and dim.source == mask:
            index = dim.index.owner
            return isinstance(index, arith.ConstantOp) and index.value == IntegerAttr(
                0, IndexType()
            )
    return False


def compaction_scatter(
    rewriter: PatternRewriter, op: ml.ScatterElementsOp, found: Compaction, bound: Index
) -> SSAValue:
    """`op` as one loop of writes (see the module docstring); the host checks that the
    spare column, the highest index, lies below `bound`."""
    spare = found.spare
    if isinstance(spare, int):
        spare = rewriter.insert(arith.ConstantOp(IntegerAttr(spare, i64))).result
    emit_check(
        rewriter,
        op.indices,
        spare,
        bound,
        f"'{op.name}' op index {{}} is out of range {range_text(bound)} of data dim 1",
    )
    sizes = [size_of(rewriter, op.updates, d) for d in range(2)]
    calc = IndexCalc(rewriter.insert)
    n = calc.value(size_of(rewriter, found.mask, 0))
    last = rewriter.insert(arith.SubiOp(n, calc.value(1))).result
    highest = highest_index(rewriter, bound)  # a failed check does not stop the call
    element = element_type(op.data)

    def write(t: SSAValue, acc: SSAValue) -> SSAValue:
        row, column = coordinates(t, sizes)
        set_ = tensor.ExtractOp(found.mask, [column], i1).result
        rank = tensor.ExtractOp(found.columns, [column], i64).result
        column_at = arith.IndexCastOp(arith.SelectOp(set_, rank, spare).result, IndexType())
        at = arith.MinUIOp(column_at.result, highest)
        update = tensor.ExtractOp(op.updates, [row, column], element).result
        kept = stays(column, set_, rank, found, n, last)
        return combined_at(
            acc, [row, at.result], lambda old: arith.SelectOp(kept, update, old).result
        )

    return update_loop(rewriter, element_count(rewriter, sizes), op.data, write)


def stays(
    column: SSAValue, set_: SSAValue, rank: SSAValue, found: Compaction, n: SSAValue, last: SSAValue
) -> SSAValue:
    """In the body: whether the write of mask element `column` stays (set, or the last
    one clear)."""
    set_total = arith.AddiOp(
        tensor.ExtractOp(found.columns, [last], i64).result,
        arith.ExtUIOp(tensor.ExtractOp(found.mask, [last], i1).result, i64).result,
    ).result
    n64 = arith.IndexCastOp(n, i64).result
    one = arith.ConstantOp(IntegerAttr(1, i64)).result
    clear_before = arith.SubiOp(arith.IndexCastOp(column, i64).result, rank).result
    clear_last = arith.SubiOp(arith.SubiOp(n64, set_total).result, one).result
    is_last = arith.CmpiOp(clear_before, clear_last, "eq").result
    return arith.OrIOp(set_, is_last).result

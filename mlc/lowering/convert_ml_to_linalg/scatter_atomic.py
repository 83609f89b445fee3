"""
A scatter as loops over its updates that a GPU runs one thread an update, with atomics:
O(updates), where the walk of `scatter.py` is O(result x updates) and the grouping of
`scatter_grouped.py` runs its counting loops on one thread. `convert-ml-to-linalg`'s
option `scatter-atomic` picks it (the GPU pipeline's choice; the CPU keeps the grouped
form).

Each loop is an `scf.for` over the update elements (row-major) carrying the result,
marked `mlc.atomic_updates`; its body reads the destination, combines and writes it
back, so that run as written (the CPU, or a GPU that cannot make it parallel) it is
the scatter itself, in the updates' order:

    %r = scf.for %t = %c0 to %T step %c1 iter_args(%acc = %data) -> (tensor<...>) {
      %u = <updates at %t> ; %p = <destination of %t, wrapped and clamped>
      %old = tensor.extract %acc[%p...] ; %new = arith.addf %old, %u
      %acc2 = tensor.insert %new into %acc[%p...] ; scf.yield %acc2
    } {mlc.atomic_updates}

`mlc.lowering.gpu.atomic_loops` turns such a loop, once bufferized, into a parallel loop
whose read-combine-write is one atomic (`atom.add`, `atom.max`, ...). Reductions `add`,
`max` and `min` on 32- and 64-bit elements take this form (`atomic_reduction`); `mul`
and narrower types keep the walk.

Reduction `none` keeps ONNX's (and onnxruntime's) order: of the updates landing on one
destination, the last in row-major order stays. A first loop takes, for each
destination, the highest update number landing there (an atomic max into an i64 tensor
of -1s shaped as the destinations: the result's elements for `scatter_elements`, the
rows `data[:q]` for `scatter_nd`); a second writes each update whose number won, as a
`select` of the update and the old value, which the GPU makes a conditional store:

    %w = scf.for %t ... iter_args(%win = <-1s>) {
      ... arith.maxsi %old, %t ... } {mlc.atomic_updates}
    %r = scf.for %t ... iter_args(%acc = %data) {
      %hit = arith.cmpi eq, %w[%p...], %t
      ... arith.select %hit, %u, %old ... } {mlc.atomic_updates}

Float sums in atomics are not in a fixed order: the GPU's results may differ in the last
bits from run to run (max, min and `none` are exact).
"""

from collections.abc import Callable, Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerType, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    dynamic_dims,
    element_type,
    fill,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.index_checks import safe_index
from mlc.lowering.convert_ml_to_linalg.scatter_grouped import Combine, delinearize
from mlc.lowering.support.index_calc import Index, IndexCalc

# Marks a loop over updates whose iterations conflict only in their read-combine-write
# of one destination (`mlc.lowering.gpu.atomic_loops` reads it).
ATOMIC = "mlc.atomic_updates"

ATOMIC_REDUCTIONS = ("add", "max", "min")

# In a loop body: the destination coordinates and the update of update element `t`.
Placement = Callable[[SSAValue], tuple[list[SSAValue], SSAValue]]


def atomic_reduction(reduction: str, element: Attribute) -> bool:
    """Whether a GPU applies `reduction` on `element` atomically (or `none`, any type)."""
    if reduction == "none":
        return True
    if reduction not in ATOMIC_REDUCTIONS:
        return False
    if is_float(element):
        return element.bitwidth in (32, 64)  # pyright: ignore[reportAttributeAccessIssue]
    return isinstance(element, IntegerType) and element.width.data in (32, 64)


def update_loop(
    rewriter: PatternRewriter,
    count: Index,
    init: SSAValue,
    step: Callable[[SSAValue, SSAValue], SSAValue],
) -> SSAValue:
    """
    A marked `scf.for` over `count` update elements carrying `init`; `step(t, acc)`
    builds (in the body) the carried tensor after update element `t`.
    """
    calc = IndexCalc(rewriter.insert)
    block = Block(arg_types=[IndexType(), init.type])
    with ImplicitBuilder(block):
        scf.YieldOp(step(block.args[0], block.args[1]))
    loop = scf.ForOp(calc.value(0), calc.value(count), calc.value(1), [init], block)
    loop.attributes[ATOMIC] = UnitAttr()
    rewriter.insert(loop)
    return loop.results[0]


def combined_at(
    acc: SSAValue, at: Sequence[SSAValue], combine: Callable[[SSAValue], SSAValue]
) -> SSAValue:
    """In a body: `acc` with `combine(acc[at])` written at `at`."""
    element = tensor_type(acc).element_type
    old = tensor.ExtractOp(acc, at, element).result
    return tensor.InsertOp(combine(old), acc, at).result


def atomic_scatter(
    rewriter: PatternRewriter,
    data: SSAValue,
    count: Index,
    place: Placement,
    combine: Combine | None,
    winners: tuple[SSAValue, Callable[[SSAValue], list[SSAValue]], Callable[[SSAValue], SSAValue]]
    | None = None,
) -> SSAValue:
    """
    `data` with `count` update elements combined in (`combine(old, update)`), or, for
    reduction `none` (`combine` None), the last of each destination written.

    `winners` (reduction `none` only): the -1s tensor of destinations, the destination
    of update element `t` in it, and the number that competes for it (the element's
    own for `scatter_elements`, its tuple's for `scatter_nd`).
    """
    if combine is not None:

        def step(t: SSAValue, acc: SSAValue) -> SSAValue:
            at, update = place(t)
            return combined_at(acc, at, lambda old: combine(old, update))

        return update_loop(rewriter, count, data, step)
    assert winners is not None
    table, slot_of, number_of = winners

    def claim(t: SSAValue, win: SSAValue) -> SSAValue:
        number = arith.IndexCastOp(number_of(t), i64).result
        return combined_at(win, slot_of(t), lambda old: arith.MaxSIOp(old, number).result)

    won = update_loop(rewriter, count, table, claim)

    def write(t: SSAValue, acc: SSAValue) -> SSAValue:
        at, update = place(t)
        winner = tensor.ExtractOp(won, slot_of(t), i64).result
        number = arith.IndexCastOp(number_of(t), i64).result
        hit = arith.CmpiOp(winner, number, "eq").result
        return combined_at(acc, at, lambda old: arith.SelectOp(hit, update, old).result)

    return update_loop(rewriter, count, data, write)


def winner_table(rewriter: PatternRewriter, data: SSAValue, dims: int) -> SSAValue:
    """-1s (i64) shaped as the first `dims` dims of `data`: no update has landed yet."""
    shape = tensor_type(data).get_shape()[:dims]
    sizes = dynamic_dims(rewriter, data)[:dims]
    return fill(rewriter, TensorType(i64, shape), sizes, -1)


def coordinates(t: SSAValue, sizes: Sequence[Index]) -> list[SSAValue]:
    """In a body: the row-major coordinates of element `t` in a tensor of `sizes`."""
    if not sizes:
        return []
    return delinearize(t, sizes)


def element_count(rewriter: PatternRewriter, sizes: Sequence[Index]) -> Index:
    calc = IndexCalc(rewriter.insert)
    total: Index = 1
    for n in sizes:
        total = calc.mul(total, n)
    return total


def tuple_number(t: SSAValue, slice_count: Index) -> SSAValue:
    """In a body: the index tuple of update element `t` (`t // slice_count`)."""
    if isinstance(slice_count, int) and slice_count == 1:
        return t
    return arith.DivUIOp(t, IndexCalc.in_body().value(slice_count)).result


def elements_atomic(
    rewriter: PatternRewriter,
    op: ml.ScatterElementsOp,
    axis: int,
    bound: Index,
    highest: SSAValue,
    sizes: Sequence[Index],
    combine: Combine | None,
) -> SSAValue:
    """`ml.scatter_elements` (indices checked, `sizes` theirs) one loop step an update."""
    element, index_element = element_type(op.data), element_type(op.indices)

    def place(t: SSAValue) -> tuple[list[SSAValue], SSAValue]:
        coords = coordinates(t, sizes)
        index = tensor.ExtractOp(op.indices, coords, index_element).result
        target = safe_index(index, bound, highest)
        at = [target if d == axis else c for d, c in enumerate(coords)]
        return at, tensor.ExtractOp(op.updates, coords, element).result

    winners = None
    if combine is None:
        table = winner_table(rewriter, op.data, len(sizes))
        winners = (table, lambda t: place(t)[0], lambda t: t)
    count = element_count(rewriter, sizes)
    return atomic_scatter(rewriter, op.data, count, place, combine, winners)


def nd_atomic(
    rewriter: PatternRewriter,
    op: ml.ScatterNdOp,
    bounds: Sequence[Index],
    highest: Sequence[SSAValue],
    index_sizes: Sequence[Index],
    data_sizes: Sequence[Index],
    combine: Combine | None,
) -> SSAValue:
    """`ml.scatter_nd` (tuples checked) one loop step an update element; `none`: the
    last tuple of a row stays."""
    q, element = len(bounds), element_type(op.data)
    index_element = element_type(op.indices)
    slice_sizes = data_sizes[q:]
    slice_count = element_count(rewriter, slice_sizes)

    def row(tuple_at: Sequence[SSAValue]) -> list[SSAValue]:
        calc = IndexCalc.in_body()
        entries = [
            tensor.ExtractOp(op.indices, [*tuple_at, calc.value(j)], index_element).result
            for j in range(q)
        ]
        return [safe_index(e, b, h) for e, b, h in zip(entries, bounds, highest, strict=True)]

    def place(t: SSAValue) -> tuple[list[SSAValue], SSAValue]:
        coords = coordinates(t, [*index_sizes, *slice_sizes])
        at = [*row(coords[: len(index_sizes)]), *coords[len(index_sizes) :]]
        return at, tensor.ExtractOp(op.updates, coords, element).result

    winners = None
    if combine is None:
        table = winner_table(rewriter, op.data, q)
        winners = (
            table,
            lambda t: row(coordinates(tuple_number(t, slice_count), index_sizes)),
            lambda t: tuple_number(t, slice_count),
        )
    count = element_count(rewriter, [*index_sizes, slice_count])
    return atomic_scatter(rewriter, op.data, count, place, combine, winners)

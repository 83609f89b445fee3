"""
A scatter grouped by destination, CSR-style: O(result + updates) where the generic of
`scatter.py` costs O(result x updates). `scatter.py` picks it by `grouped_pays`.

The updates come as a tensor `dest` (i64, one entry per update tuple, in the row-major
order of the tuples) of their destinations, numbered `[0, count)`; then

    %zeros = <count + 1 zeros (i64)>
    // (a) count the updates of each destination, at the slot after it
    %n = scf.for %t = 0 to T iter_args(%s = %zeros) { %s[dest[t] + 1] += 1 }
    // (b) an inclusive prefix sum: %start[p] is where destination p's updates begin
    %start, %_ = scf.for %p = 0 to count + 1 iter_args(%s = %n, %run = 0) { ... }
    // (c) each update's id at its destination's next slot (row-major within one
    //     destination); the cursors end at the next destination's beginning
    %end, %order = scf.for %t = 0 to T iter_args(%s = %start, %o = <T ids>) {
      %c = %s[dest[t]] ; %o[%c] = t ; %s[dest[t]] = %c + 1 }
    // (d) a parallel generic over the result: element x of destination p walks only
    //     [p ? end[p - 1] : 0, end[p]) of %order, in order
    linalg.generic {iterator_types = ["parallel", ...]} outs(%data) {
    ^bb0(%acc):
      %r = scf.for %s = %first to end[p] iter_args(%a = %acc) {
        combine(%a, updates[order[%s], ...]) }
      linalg.yield %r
    }

With reduction `none` the loop of (d) starts at the last update (`end[p] - 1`), so the
last one in row-major order stays, as in onnxruntime; `add`, `mul`, `max` and `min`
combine in the updates' order, as `scatter.py` does: the results are the same, bit for
bit, deterministic. (a)-(c) are sequential `scf.for`s over the tuples (the tensors they
carry are updated in place once bufferized, and marked `mlc.sequential` so that the
GPU runs each as a one-thread kernel: `mlc.lowering.gpu.sequential_loops`); (d) is
parallel over the result.

The threshold: the walk of `scatter.py` costs a result element one step per update
tuple that may land on it; grouping costs three sequential passes (over the tuples,
the destinations, the tuples) and two reads of the offsets a result element. Below a
few thousand destination x tuple pairs the walk's steps are fewer than the grouping
loops' fixed work, so small scatters (a top-k's routing weights, the lit tests' shapes)
keep it; the MoE and embedding-gradient scatters are 10^5-10^9 pairs, far above.
"""

from collections.abc import Callable, Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, UnitAttr, i64
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import PatternRewriter

from mlc import shapes
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    empty_of,
    fill,
    iterator_types,
    tensor_type,
)
from mlc.lowering.support.index_calc import Index, IndexCalc

# Grouping pays above this many destination x update-tuple pairs (module docstring).
GROUPED_MIN_PAIRS = 4096

# Marks the grouping loops (`mlc.lowering.gpu.sequential_loops` reads it).
SEQUENTIAL = "mlc.sequential"

Combine = Callable[[SSAValue, SSAValue], SSAValue]


def grouped_pays(
    destinations: Sequence[int], tuples: Sequence[int], min_pairs: int = GROUPED_MIN_PAIRS
) -> bool:
    """
    Whether the grouped form should replace the per-element walk: when the number of
    destinations times the number of update tuples is above `min_pairs` (the pass
    option `scatter-group-pairs`), or not known; never when `min_pairs` is negative.
    """
    if min_pairs < 0:
        return False
    pairs = 1
    for n in (*destinations, *tuples):
        if n < 0:
            return True
        pairs *= n
    return pairs > min_pairs


def _static(size: Index) -> int:
    return size if isinstance(size, int) else shapes.DYNAMIC


def _const(value: int, type_: Attribute = IndexType()) -> SSAValue:
    return arith.ConstantOp(IntegerAttr(value, type_)).result


def _for(
    lb: SSAValue,
    ub: SSAValue,
    inits: Sequence[SSAValue],
    body: Callable[[SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
    insert: Callable[[Operation], Operation] | None = None,
) -> Sequence[SSAValue]:
    """An `scf.for` (step 1) carrying `inits`; inside a body when `insert` is None."""
    block = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    with ImplicitBuilder(block):
        scf.YieldOp(*body(block.args[0], block.args[1:]))
    one = _const(1) if insert is None else IndexCalc(insert).value(1)
    loop = scf.ForOp(lb, ub, one, list(inits), block)
    if insert is not None:  # a loop of its own: a one-thread kernel on the GPU
        loop.attributes[SEQUENTIAL] = UnitAttr()
        insert(loop)
    return loop.results


def delinearize(linear: SSAValue, sizes: Sequence[Index]) -> list[SSAValue]:
    """In a body: the row-major coordinates of `linear` in a tensor of `sizes`."""
    calc = IndexCalc.in_body()
    coords: list[SSAValue] = []
    for size in reversed(sizes[1:]):
        coords.insert(0, arith.RemUIOp(linear, calc.value(size)).result)
        linear = arith.DivUIOp(linear, calc.value(size)).result
    return [linear, *coords]


def _add_at(s: SSAValue, at: SSAValue, step: int) -> tuple[SSAValue, SSAValue]:
    """In a body: `s[at]` before, and `s` with `step` added there."""
    old = tensor.ExtractOp(s, [at], i64).result
    new = arith.AddiOp(old, _const(step, i64)).result
    return old, tensor.InsertOp(new, s, [at]).result


def grouped_scatter(
    rewriter: PatternRewriter,
    data: SSAValue,
    dest: SSAValue,
    tuple_sizes: Sequence[Index],
    count: Index,
    destination_of: Callable[[Sequence[SSAValue]], SSAValue],
    read_update: Callable[[Sequence[SSAValue], Sequence[SSAValue]], SSAValue],
    combine: Combine | None,
) -> SSAValue:
    """
    `data` with the updates combined in (the module docstring's (a)-(d)).

    `dest` holds each update tuple's destination (shape `tuple_sizes`);
    `destination_of(loops)` gives a result element's destination in the generic's body
    and `read_update(tuple_coords, loops)` its update from tuple `tuple_coords`;
    `combine(acc, update)` is the reduction (None: the last update stays).
    """
    calc = IndexCalc(rewriter.insert)
    total: Index = 1
    for n in tuple_sizes:
        total = calc.mul(total, n)
    tuples, zero = calc.value(total), calc.value(0)
    slots = calc.add(count, 1)
    zeros = fill(rewriter, TensorType(i64, [_static(slots)]), [calc.value(slots)], 0)

    def destination(t: SSAValue) -> SSAValue:
        at = tensor.ExtractOp(dest, delinearize(t, tuple_sizes), i64).result
        return arith.IndexCastOp(at, IndexType()).result

    def counted(t: SSAValue, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        after = arith.AddiOp(destination(t), _const(1)).result
        return [_add_at(carried[0], after, 1)[1]]

    (counts,) = _for(zero, tuples, [zeros], counted, rewriter.insert)

    def summed(p: SSAValue, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        s, run = carried
        total = arith.AddiOp(tensor.ExtractOp(s, [p], i64).result, run).result
        return [tensor.InsertOp(total, s, [p]).result, total]

    run = rewriter.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
    start = _for(zero, calc.value(slots), [counts, run], summed, rewriter.insert)[0]
    order_type = TensorType(i64, [_static(total)])
    order0 = empty_of(rewriter, order_type, [total])

    def placed(t: SSAValue, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        s, order = carried
        slot, s = _add_at(s, destination(t), 1)
        at = arith.IndexCastOp(slot, IndexType()).result
        t64 = arith.IndexCastOp(t, i64).result
        return [s, tensor.InsertOp(t64, order, [at]).result]

    end, order = _for(zero, tuples, [start, order0], placed, rewriter.insert)

    rank = tensor_type(data).get_num_dims()

    def body(args: Sequence[BlockArgument]) -> SSAValue:
        loops = [IndexOp(d).result for d in range(rank)]
        p = destination_of(loops)
        last = arith.IndexCastOp(tensor.ExtractOp(end, [p], i64).result, IndexType()).result
        before = arith.MaxSIOp(arith.SubiOp(p, _const(1)).result, _const(0)).result
        first_read = tensor.ExtractOp(end, [before], i64).result
        is_first = arith.CmpiOp(p, _const(0), "eq").result
        first = arith.IndexCastOp(
            arith.SelectOp(is_first, _const(0, i64), first_read).result, IndexType()
        ).result
        if combine is None:  # only the last update of the destination
            first = arith.MaxSIOp(first, arith.SubiOp(last, _const(1)).result).result

        def walk(s: SSAValue, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
            u = arith.IndexCastOp(tensor.ExtractOp(order, [s], i64).result, IndexType()).result
            update = read_update(delinearize(u, tuple_sizes), loops)
            return [update if combine is None else combine(carried[0], update)]

        return _for(first, last, [args[0]], walk)[0]

    maps = [AffineMap.identity(rank)]
    (result,) = build_generic(rewriter, [], [data], maps, iterator_types(rank), body)
    return result

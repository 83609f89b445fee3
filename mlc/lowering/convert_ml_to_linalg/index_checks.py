"""
Bounds checks of the index operands of gathers and scatters, and the clamped index.

An index `i` into a dim of size `n` is valid in `[-n, n)`; a negative one counts from
the end (ONNX's rule). Before the op, one reduction generic over the indices finds the
index farthest out of range (by its distance from the valid range, `i ^ (i >> 63)`
compared with `n`), then a check reports it as `mlc.RuntimeCheckError` at the op's
location (`mlc.lowering.support.checks`):

    %w = linalg.generic ins(%ids) outs(%zero : tensor<i64>) {  // iterators: reduction
      ... the index of the larger `i ^ (i >> 63)` ...
    }
    %worst = tensor.extract %w[] : tensor<i64>
    %ok = arith.cmpi eq, %worst, %clamped : i64       // clamped into [-n, n - 1]
    cf.assert %ok, "'ml.gather' op index {} is out of range [-5, 5) of data dim 0"

The op itself reads at the wrapped index clamped into `[0, n - 1]` (one `minui`), so
no read or write leaves the buffer even when the check fails and the call carries on
to its end (as failed checks do, see `mlc.backend.assertions`). Indices that are
constants are checked at compile time instead, with no run-time cost. On the GPU the
reduction is a kernel and `tensor.extract` a copy of one i64 to the host.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    i64,
)
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter

from mlc import shapes
from mlc.diagnostics import op_error
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    fill,
    iterator_types,
    size_of,
    tensor_type,
    type_dims,
)
from mlc.lowering.support.checks import assert_reporting
from mlc.lowering.support.index_calc import Index, IndexCalc


def constant_indices(indices: SSAValue) -> list[int] | None:
    """The values of `indices` when it is an `arith.constant`, else None."""
    owner = indices.owner
    if not isinstance(owner, arith.ConstantOp):
        return None
    value = owner.value
    if not isinstance(value, DenseIntOrFPElementsAttr):
        return None
    values = value.get_values()
    count = shapes.num_elements(tensor_type(indices).get_shape()) or 0
    if len(values) == 1 and count > 1:  # a splat
        values = values * count
    return [int(v) for v in values]


def range_text(bound: Index) -> str:
    return f"[-{bound}, {bound})" if isinstance(bound, int) else "[-n, n) (n its size)"


def check_indices(
    rewriter: PatternRewriter, op: Operation, indices: SSAValue, bound: Index, what: str
) -> None:
    """
    Check that every element of `indices` lies in `[-bound, bound)`; `what` names the
    dim they index (`data dim 0`).
    """
    message = f"'{op.name}' op index {{}} is out of range {range_text(bound)} of {what}"
    known = constant_indices(indices)
    if known is not None and isinstance(bound, int):
        bad = [i for i in known if not -bound <= i < bound]
        if bad:
            op_error(op, message.replace("{}", str(bad[0])))
        return
    if shapes.num_elements(tensor_type(indices).get_shape()) == 0:
        return
    (worst,) = farthest_indices(rewriter, indices, per_column=False)
    emit_check(rewriter, indices, worst, bound, message)


def check_index_tuples(
    rewriter: PatternRewriter, op: Operation, indices: SSAValue, bounds: Sequence[Index], first: int
) -> None:
    """
    Check the index tuples along the last dim of `indices`: entry `k` must lie in
    `[-bounds[k], bounds[k])`, the size of data dim `first + k` (GatherND, ScatterND).
    """
    known = constant_indices(indices)
    if known is not None and all(isinstance(b, int) for b in bounds):
        for position, i in enumerate(known):
            k = position % len(bounds)
            bound = bounds[k]
            assert isinstance(bound, int)
            if not -bound <= i < bound:
                what = f"{range_text(bound)} of data dim {first + k}"
                op_error(op, f"'{op.name}' op index {i} is out of range {what}")
        return
    if shapes.num_elements(tensor_type(indices).get_shape()) == 0:
        return
    worst = farthest_indices(rewriter, indices, per_column=True)
    for k, (value, bound) in enumerate(zip(worst, bounds, strict=True)):
        what = f"{range_text(bound)} of data dim {first + k}"
        message = f"'{op.name}' op index {{}} is out of range {what}"
        emit_check(rewriter, indices, value, bound, message)


def farthest_indices(
    rewriter: PatternRewriter, indices: SSAValue, per_column: bool
) -> list[SSAValue]:
    """
    The element of `indices` farthest from `[-n, n)` for every `n`, as an i64; with
    `per_column`, one such element per entry of the last dim (which must be static).

    Without `per_column`, indices of rank 2 or more are reduced in two steps: each row
    of the first dim in parallel (the GPU's threads, the CPU's cores), then the rows.
    """
    shape = tensor_type(indices).get_shape()
    rank = len(shape)
    if rank == 0:
        element = rewriter.insert(tensor.ExtractOp(indices, [], index_element(indices))).result
        return [to_i64(rewriter.insert, element)]
    if per_column:
        kept, sizes = [rank - 1], [shape[-1]]
    elif rank >= 2:
        kept, sizes = [0], [size_of(rewriter, indices, 0)]
    else:
        kept, sizes = [], []
    result_type = TensorType(i64, [shape[d] for d in kept])
    zero = fill(rewriter, result_type, type_dims(rewriter, result_type, sizes), 0)

    def body(args: Sequence[BlockArgument]) -> SSAValue:
        value = to_i64(lambda o: o, args[0])
        larger = arith.CmpiOp(distance(value), distance(args[1]), "sgt").result
        return arith.SelectOp(larger, value, args[1]).result

    out_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(d) for d in kept))
    maps = [AffineMap.identity(rank), out_map]
    iterators = iterator_types(rank, [d for d in range(rank) if d not in kept])
    (reduced,) = build_generic(rewriter, [indices], [zero], maps, iterators, body)
    if not per_column and kept:
        return farthest_indices(rewriter, reduced, per_column=False)
    calc = IndexCalc(rewriter.insert)
    positions = [[calc.value(k)] for k in range(shape[-1])] if per_column else [[]]
    return [rewriter.insert(tensor.ExtractOp(reduced, p, i64)).result for p in positions]


def distance(value: SSAValue) -> SSAValue:
    """`i` for `i >= 0`, `-i - 1` otherwise: `i` is in `[-n, n)` iff this is below `n`."""
    sign = arith.ShRSIOp(value, arith.ConstantOp(IntegerAttr(63, i64)).result).result
    return arith.XOrIOp(value, sign).result


def index_element(indices: SSAValue) -> IntegerType:
    element = tensor_type(indices).element_type
    assert isinstance(element, IntegerType)
    return element


def to_i64(insert: Callable[[Operation], Operation], value: SSAValue) -> SSAValue:
    """An i32 or i64 index as an i64."""
    if value.type == i64:
        return value
    return insert(arith.ExtSIOp(value, i64)).result


def emit_check(
    rewriter: PatternRewriter, indices: SSAValue, worst: SSAValue, bound: Index, message: str
) -> None:
    """`cf.assert` that `worst` lies in `[-bound, bound)`, reporting it in `message`."""
    calc = IndexCalc(rewriter.insert)
    if isinstance(bound, int):
        n = rewriter.insert(arith.ConstantOp(IntegerAttr(bound, i64))).result
    else:
        n = rewriter.insert(arith.IndexCastOp(bound, i64)).result
    zero = rewriter.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
    one = rewriter.insert(arith.ConstantOp(IntegerAttr(1, i64))).result
    low = rewriter.insert(arith.SubiOp(zero, n)).result
    high = rewriter.insert(arith.SubiOp(n, one)).result
    above = rewriter.insert(arith.MaxSIOp(worst, low)).result
    clamped = rewriter.insert(arith.MinSIOp(above, high)).result
    shape = tensor_type(indices).get_shape()
    if shapes.num_elements(shape) is None:
        # No index at all is in range even of an empty dim (the reduction's 0 is not).
        count: Index = 1
        for axis in range(len(shape)):
            count = calc.mul(count, size_of(rewriter, indices, axis))
        empty = rewriter.insert(arith.CmpiOp(calc.value(count), calc.value(0), "eq")).result
        clamped = rewriter.insert(arith.SelectOp(empty, worst, clamped)).result
    for check in assert_reporting(worst, clamped, message):
        rewriter.insert(check)


def highest_index(rewriter: PatternRewriter, bound: Index) -> SSAValue:
    """`max(bound - 1, 0)` as an index: where a clamped read goes at most."""
    calc = IndexCalc(rewriter.insert)
    if isinstance(bound, int):
        return calc.value(max(bound - 1, 0))
    return calc.value(calc.max(calc.sub(bound, 1), 0))


def safe_index(index: SSAValue, bound: Index, highest: SSAValue) -> SSAValue:
    """
    In a generic body: the i32/i64 `index` wrapped (negative ones count from the end)
    and clamped into `[0, highest]`, as an `index`.
    """
    calc = IndexCalc.in_body()
    position = arith.IndexCastOp(index, IndexType()).result
    negative = arith.CmpiOp(position, calc.value(0), "slt").result
    wrapped = calc.value(calc.add(position, bound))
    chosen = arith.SelectOp(negative, wrapped, position).result
    # Still negative (below -n) is a huge unsigned number: clamped to `highest` too.
    return arith.MinUIOp(chosen, highest).result

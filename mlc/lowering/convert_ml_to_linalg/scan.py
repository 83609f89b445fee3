"""
`ml.argmax`, `ml.argmin` and `ml.cumsum` to linalg: generics that carry a pair of values.

An index reduction is one reduction generic with two outputs, the best value so far
(filled with the combiner's identity) and its index (filled with 0), both at the
reduced map; the body reads the position along the axis with `linalg.index`:

    %i = ml.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xi64>
    ==>
    %v, %i = linalg.generic {iterator_types = ["parallel", "reduction"]}
               ins(%x) outs(%minus_inf, %zero : tensor<4xf32>, tensor<4xi64>) {
    ^bb0(%x: f32, %best: f32, %at: i64):
      %k = arith.index_cast (linalg.index 1) : index to i64
      %take = x > best, or x is NaN and best is not     (>= for select_last_index)
      linalg.yield (select %take, %x, %best), (select %take, %k, %at)
    }

A scan is one generic whose scan loop is a `reduction` iterator, sequential on both
targets, parallel over the other loops. Its outputs are the running sum (at the reduced
keepdims map, a register once the loops are built) and the result at the identity map,
written each step with the sum after (inclusive) or before (exclusive) the element:

    %s = ml.cumsum %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    ==>
    %acc, %s = linalg.generic {maps = [id, (d0, d1) -> (d0, 0), id],
                               iterator_types = ["parallel", "reduction"]}
                 ins(%x) outs(%zero, %empty : tensor<4x1xf32>, tensor<4x8xf32>) {
    ^bb0(%x: f32, %acc: f32, %out: f32):
      %next = arith.addf %acc, %x
      linalg.yield %next, %next
    }

The scan's running total ends as the sum of its row: an integer cumsum's total
replaces the `ml.reduce_sum`s of its input over its axis that follow it (NonZero's
count of its positions), as it is or collapsed (a view), so they cost no kernel.

`reverse` scans the axis flipped: a generic that reads `x` with `tensor.extract` at
`size - 1 - i` before the scan and one that flips the sums back after it.

An integer cumsum of a broadcast constant `c` (a run-time `arange` is the exclusive
cumsum of ones) needs no scan: element `i` is `c * i` (exclusive) or `c * (i + 1)`,
counted from the end when `reverse`, one parallel generic. On the GPU a scan's row is
a warp's (`mlc.lowering.gpu.loop_mapping.warp_scan`: a lane a chunk, the lanes joined
by `shfl.sync.up`), not a sequential loop on one thread (72 us for a 1-D scan of 2048
elements on an H200).
"""

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IntegerAttr, IntegerType, Signedness, TensorType, i64
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc import shapes
from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    dynamic_dims,
    element_type,
    empty_like_result,
    fill,
    int_max,
    int_min,
    is_unsigned,
    iterator_types,
    size_of,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.movement import reassociation
from mlc.lowering.convert_ml_to_linalg.reduction import reduced_dims, reduced_map
from mlc.lowering.graph.patterns.ml import splat_value
from mlc.lowering.support.index_calc import IndexCalc
from mlc.lowering.support.locations import keep_location

# ---------------------------------------------------------------------------
# Index reductions
# ---------------------------------------------------------------------------


def arg_identity(largest: bool, element: Attribute) -> float | int:
    """The value every element beats: -inf / +inf, or the integer type's min / max."""
    if isinstance(element, IntegerType):
        return int_min(element) if largest else int_max(element)
    return float("-inf") if largest else float("inf")


def takes(x: SSAValue, best: SSAValue, largest: bool, last: bool, unsigned: bool) -> SSAValue:
    """Whether `x` replaces `best` (in a body): strictly better, or as good with `last`."""
    if is_float(x.type):
        order = ("oge" if last else "ogt") if largest else ("ole" if last else "olt")
        better = arith.CmpfOp(x, best, order).result
        # NaN beats every number and, but for `last`, the NaN already held.
        x_nan = arith.CmpfOp(x, x, "uno").result
        if not last:
            best_number = arith.CmpfOp(best, best, "ord").result
            x_nan = arith.AndIOp(x_nan, best_number).result
        return arith.OrIOp(better, x_nan).result
    sign = "u" if unsigned else "s"
    order = ("ge" if last else "gt") if largest else ("le" if last else "lt")
    return arith.CmpiOp(x, best, sign + order).result


class LowerArgReduce(RewritePattern):
    """`ml.argmax` / `ml.argmin` to fills and one reduction generic over (value, index)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ArgReduceOp, rewriter: PatternRewriter, /) -> None:
        x_type = tensor_type(op.x)
        rank = x_type.get_num_dims()
        axis = shapes.normalize_axis(op.axis.value.data, rank)
        keepdims = bool(op.keepdims.value.data)
        last = bool(op.select_last_index.value.data)
        largest = isinstance(op, ml.ArgMaxOp)
        element = x_type.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        unsigned = is_unsigned(element)  # pyright: ignore[reportUnknownArgumentType]
        result_type = op.result.type
        assert isinstance(result_type, TensorType)
        values_type = TensorType(element, result_type.get_shape())  # pyright: ignore[reportUnknownArgumentType]

        def body(args: Sequence[BlockArgument]) -> list[SSAValue]:
            x, best, at = args
            here = arith.IndexCastOp(IndexOp(axis).result, i64).result
            take = takes(x, best, largest, last, unsigned)
            return [arith.SelectOp(take, x, best).result, arith.SelectOp(take, here, at).result]

        with keep_location(rewriter, op):
            dims = reduced_dims(rewriter, op.x, [axis], keepdims, result_type)
            inits = [
                fill(rewriter, values_type, dims, arg_identity(largest, element)),  # pyright: ignore[reportUnknownArgumentType]
                fill(rewriter, result_type, dims, 0),
            ]
            out_map = reduced_map(rank, [axis], keepdims)
            _, index = build_generic(
                rewriter,
                [op.x],
                inits,
                [AffineMap.identity(rank), out_map, out_map],
                iterator_types(rank, [axis]),
                body,
            )
        rewriter.replace(op, (), (index,))


# ---------------------------------------------------------------------------
# Scans
# ---------------------------------------------------------------------------


def flipped(rewriter: PatternRewriter, x: SSAValue, axis: int) -> SSAValue:
    """`x` with `axis` reversed: a generic reading `x[..., size - 1 - i, ...]`."""
    rank = tensor_type(x).get_num_dims()
    last = IndexCalc(rewriter.insert).sub(size_of(rewriter, x, axis), 1)

    def body(args: Sequence[BlockArgument]) -> SSAValue:
        calc = IndexCalc.in_body()
        coords = [IndexOp(d).result for d in range(rank)]
        coords[axis] = calc.value(calc.sub(last, coords[axis]))
        return tensor.ExtractOp(x, coords, element_type(x)).result

    init = empty_like_result(rewriter, x.type, dynamic_dims(rewriter, x))
    (result,) = build_generic(
        rewriter, [], [init], [AffineMap.identity(rank)], iterator_types(rank), body
    )
    return result


def scanned(
    rewriter: PatternRewriter, x: SSAValue, axis: int, exclusive: bool
) -> tuple[SSAValue, SSAValue]:
    """The total of `x` along `axis` (keeping the axis, of size 1) and its running sums
    from its start."""
    rank = tensor_type(x).get_num_dims()
    floats = is_float(element_type(x))
    add = arith.AddfOp if floats else arith.AddiOp

    def body(args: Sequence[BlockArgument]) -> list[SSAValue]:
        value, total = args[0], args[1]
        after = add(total, value).result
        return [after, total if exclusive else after]

    kept = reduced_map(rank, [axis], True)
    acc_shape = [1 if d == axis else n for d, n in enumerate(tensor_type(x).get_shape())]
    acc_type = TensorType(element_type(x), acc_shape)
    zero = fill(rewriter, acc_type, reduced_dims(rewriter, x, [axis], True, acc_type), 0)
    init = empty_like_result(rewriter, x.type, dynamic_dims(rewriter, x))
    total, sums = build_generic(
        rewriter,
        [x],
        [zero, init],
        [AffineMap.identity(rank), kept, AffineMap.identity(rank)],
        iterator_types(rank, [axis]),
        body,
    )
    return total, sums


def sums_along(op: ml.CumSumOp, axis: int) -> list[ml.ReduceSumOp]:
    """The `ml.reduce_sum`s of an integer cumsum's input over its axis alone, after it in
    its block: the scan's total is their result (NonZero's count of its positions)."""
    if not isinstance(element_type(op.x), IntegerType):
        return []  # a float scan's total rounds in another order than a reduction's
    rank = tensor_type(op.x).get_num_dims()
    found: list[ml.ReduceSumOp] = []
    for use in op.x.uses:
        user = use.operation
        if not isinstance(user, ml.ReduceSumOp) or user.parent_block() is not op.parent_block():
            continue
        axes = [shapes.normalize_axis(a, rank) for a in user.axes.get_values()]
        if axes == [axis] and op.is_before_in_block(user):
            found.append(user)
    return found


def total_as(rewriter: PatternRewriter, total: SSAValue, axis: int, keepdims: bool) -> SSAValue:
    """A scan's `total` (the axis kept, of size 1) as a reduction's result: as it is, or
    without the axis (a `tensor.collapse_shape`, a view)."""
    if keepdims:
        return total
    shape = list(tensor_type(total).get_shape())
    rank = len(shape)
    groups: list[list[int]] = [[d] for d in range(rank) if d != axis]
    if groups:  # the size-1 axis joins a neighbour
        groups[0 if axis == 0 else axis - 1].insert(0 if axis == 0 else 1, axis)
    result_type = TensorType(element_type(total), shape[:axis] + shape[axis + 1 :])
    collapse = tensor.CollapseShapeOp.build(
        operands=[total],
        result_types=[result_type],
        properties={"reassociation": reassociation(groups)},
    )
    return rewriter.insert(collapse).result


def splat_step(x: SSAValue) -> int | None:
    """The constant every element of `x` holds, when `x` is a signless integer
    broadcast of a splat constant (an `ml.broadcast_to`, or the generic it lowers to
    when the walk reached it first); else None."""
    element, owner = element_type(x), x.owner
    if not isinstance(element, IntegerType) or element.signedness.data != Signedness.SIGNLESS:
        return None
    if isinstance(owner, ml.BroadcastToOp):
        source = owner.x
    elif isinstance(owner, GenericOp) and len(owner.inputs) == 1 and len(owner.outputs) == 1:
        body = owner.body.block
        yielded = body.last_op
        if len(body.ops) != 1 or not isinstance(yielded, YieldOp):
            return None
        if list(yielded.operands) != [body.args[0]]:
            return None
        if owner.get_indexing_maps().data[0].data.results:  # not a scalar's broadcast
            return None
        source = owner.inputs[0]
    else:
        return None
    value = splat_value(source)
    return value if isinstance(value, int) else None


def counted(
    rewriter: PatternRewriter, x: SSAValue, axis: int, step: int, exclusive: bool, reverse: bool
) -> SSAValue:
    """The cumsum of `x`, all `step`s, as `step` times each element's count (docstring)."""
    element = element_type(x)
    rank = tensor_type(x).get_num_dims()
    size = IndexCalc(rewriter.insert).value(size_of(rewriter, x, axis))

    def body(args: Sequence[BlockArgument]) -> SSAValue:
        calc = IndexCalc.in_body()
        at = IndexOp(axis).result
        if reverse:  # the elements after `at`
            at = arith.SubiOp(arith.SubiOp(size, at).result, calc.value(1)).result
        count = at if exclusive else arith.AddiOp(at, calc.value(1)).result
        value = arith.IndexCastOp(count, element).result
        return arith.MuliOp(value, arith.ConstantOp(IntegerAttr(step, element)).result).result

    init = empty_like_result(rewriter, x.type, dynamic_dims(rewriter, x))
    (result,) = build_generic(
        rewriter, [], [init], [AffineMap.identity(rank)], iterator_types(rank), body
    )
    return result


class LowerCumSum(RewritePattern):
    """`ml.cumsum` to a sequential scan generic (between two flips when `reverse`), or
    of a broadcast constant to a count (`counted`); an integer scan's total replaces
    the sums of its input along its axis that follow it (`sums_along`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.CumSumOp, rewriter: PatternRewriter, /) -> None:
        rank = tensor_type(op.x).get_num_dims()
        axis = shapes.normalize_axis(op.axis.value.data, rank)
        reverse = bool(op.reverse.value.data)
        exclusive = bool(op.exclusive.value.data)
        if (step := splat_step(op.x)) is not None:
            with keep_location(rewriter, op):
                result = counted(rewriter, op.x, axis, step, exclusive, reverse)
            rewriter.replace(op, (), (result,))
            return
        with keep_location(rewriter, op):
            x = flipped(rewriter, op.x, axis) if reverse else op.x
            total, result = scanned(rewriter, x, axis, bool(op.exclusive.value.data))
            if reverse:
                result = flipped(rewriter, result, axis)
            sums = sums_along(op, axis)
            replacements = [
                total_as(rewriter, total, axis, bool(s.keepdims.value.data)) for s in sums
            ]
        for reduction, value in zip(sums, replacements, strict=True):
            rewriter.replace(reduction, (), (value,))
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerArgReduce(), LowerCumSum()]

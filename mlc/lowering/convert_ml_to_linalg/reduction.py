"""
`ml.reduce_sum`, `reduce_mean`, `reduce_max`, `reduce_min` to linalg.

A reduction is a fill of the output with the combiner's identity (0, -inf / +inf, or
the integer type's min / max) and one generic over the input's loops, the reduced
ones `reduction`. The output map drops the reduced loops, or with `keepdims` reads
index 0 of the size-1 dims they leave:

    %s = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = false}
           : (tensor<4x8xf32>) -> tensor<4xf32>
    ==>
    %z = linalg.generic {... iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) { yield 0.0 }
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
           affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
           ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) { yield %in + %acc }

`reduce_mean` divides the sum by the number of reduced elements in a final
elementwise generic; the count is a scalar operand of that generic (from `tensor.dim`
when a reduced dim is dynamic) converted to the element type, so integer means
truncate as `arith.divsi` does. Empty `axes` reduces nothing (numpy's `axis=()`).
A bf16 sum or mean accumulates in f32 (each element extended in the body, the mean
divided in f32) and is rounded to bf16 once, in a last elementwise generic: bf16's
8-bit significand would lose a running sum after a few hundred terms.
`accumulate` and `element_count` are shared with the normalisations.
"""

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import BFloat16Type, IntegerType, TensorType, f32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlc import shapes
from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    BodyFn,
    build_generic,
    check_signless,
    dim_value,
    empty_like_result,
    fill,
    index_constant,
    int_max,
    int_min,
    iterator_types,
    scalar_constant,
    tensor_type,
)
from mlc.lowering.support.locations import keep_location


def reduced_map(rank: int, axes: Sequence[int], keepdims: bool) -> AffineMap:
    """The output map of a reduction over the loops of a rank-`rank` input."""
    if keepdims:
        results = [
            AffineExpr.constant(0) if i in axes else AffineExpr.dimension(i) for i in range(rank)
        ]
    else:
        results = [AffineExpr.dimension(i) for i in range(rank) if i not in axes]
    return AffineMap(rank, 0, tuple(results))


def reduced_dims(
    rewriter: PatternRewriter,
    x: SSAValue,
    axes: Sequence[int],
    keepdims: bool,
    result_type: Attribute,
) -> list[SSAValue | None]:
    """Sizes of the dynamic dims of the reduction's result, taken from `x`'s kept dims."""
    assert isinstance(result_type, TensorType)
    rank = tensor_type(x).get_num_dims()
    # Result dim -> the input dim it comes from (None: a kept size-1 reduced dim).
    sources = [None if i in axes else i for i in range(rank)]
    if not keepdims:
        sources = [i for i in sources if i is not None]
    return [
        None
        if shapes.is_static(size)
        else index_constant(rewriter, 1)
        if source is None
        else dim_value(rewriter, x, source)
        for size, source in zip(result_type.get_shape(), sources, strict=True)
    ]


def accumulate(
    rewriter: PatternRewriter,
    x: SSAValue,
    axes: Sequence[int],
    keepdims: bool,
    result_type: Attribute,
    identity: float | int,
    inputs: tuple[Sequence[SSAValue], Sequence[AffineMap]],
    body: BodyFn,
) -> SSAValue:
    """
    Reduce over the loops of `x`'s shape: fill `result_type` with `identity`, then one generic.

    `inputs` are the generic's inputs with their maps over those loops; `body` gets
    their scalars and the accumulator last, and returns the new accumulator.
    """
    rank = tensor_type(x).get_num_dims()
    dims = reduced_dims(rewriter, x, axes, keepdims, result_type)
    init = fill(rewriter, result_type, dims, identity)
    values, maps = inputs
    (result,) = build_generic(
        rewriter,
        values,
        [init],
        [*maps, reduced_map(rank, axes, keepdims)],
        iterator_types(rank, axes),
        body,
    )
    return result


def element_count(
    rewriter: PatternRewriter, x: SSAValue, axes: Sequence[int], element: Attribute
) -> SSAValue:
    """The number of elements of `x` over `axes`, as a scalar of type `element`."""
    shape = tensor_type(x).get_shape()
    sizes = [shape[a] for a in axes]
    if all(shapes.is_static(d) for d in sizes):
        constant = scalar_constant(shapes.num_elements(sizes) or 0, element)
        return rewriter.insert(constant.owner).results[0]  # pyright: ignore[reportArgumentType]
    count = dim_value(rewriter, x, axes[0])
    for a in axes[1:]:
        count = rewriter.insert(arith.MuliOp(count, dim_value(rewriter, x, a))).result
    if isinstance(element, IntegerType):
        return rewriter.insert(arith.IndexCastOp(count, element)).result
    as_int = rewriter.insert(arith.IndexCastOp(count, i64)).result
    return rewriter.insert(arith.SIToFPOp(as_int, element)).result


# The fill value and the combiner of each reduction; reduce_mean sums, then divides.
def identity_of(op: ml.ReduceOp, element: Attribute) -> float | int:
    is_max = isinstance(op, ml.ReduceMaxOp)
    if not isinstance(op, ml.ReduceMaxOp | ml.ReduceMinOp):
        return 0
    if isinstance(element, IntegerType):
        return int_min(element) if is_max else int_max(element)
    return float("-inf") if is_max else float("inf")


def combine(op: ml.ReduceOp, x: SSAValue, acc: SSAValue) -> SSAValue:
    floats = is_float(x.type)
    kind: type[Operation]
    if isinstance(op, ml.ReduceMaxOp):
        kind = arith.MaximumfOp if floats else arith.MaxSIOp
    elif isinstance(op, ml.ReduceMinOp):
        kind = arith.MinimumfOp if floats else arith.MinSIOp
    else:
        kind = arith.AddfOp if floats else arith.AddiOp
    return kind(x, acc).results[0]  # pyright: ignore[reportCallIssue]


def divide(rewriter: PatternRewriter, total: SSAValue, count: SSAValue) -> SSAValue:
    """`total / count` elementwise, `count` a scalar operand of the generic."""
    total_type = tensor_type(total)
    rank = total_type.get_num_dims()
    dims = [
        None if shapes.is_static(d) else dim_value(rewriter, total, i)
        for i, d in enumerate(total_type.get_shape())
    ]
    init = empty_like_result(rewriter, total_type, dims)
    floats = is_float(total_type.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    div = arith.DivfOp if floats else arith.DivSIOp
    (result,) = build_generic(
        rewriter,
        [total, count],
        [init],
        [AffineMap.identity(rank), AffineMap(rank, 0, ()), AffineMap.identity(rank)],
        iterator_types(rank),
        lambda args: div(args[0], args[1]).result,
    )
    return result


def narrow(rewriter: PatternRewriter, wide: SSAValue, element: Attribute) -> SSAValue:
    """`wide` (f32) rounded to `element` elementwise: a bf16 sum's one rounding."""
    wide_type = tensor_type(wide)
    rank = wide_type.get_num_dims()
    dims = [
        None if shapes.is_static(d) else dim_value(rewriter, wide, i)
        for i, d in enumerate(wide_type.get_shape())
    ]
    result_type = TensorType(element, wide_type.get_shape())
    init = empty_like_result(rewriter, result_type, dims)
    (result,) = build_generic(
        rewriter,
        [wide],
        [init],
        [AffineMap.identity(rank), AffineMap.identity(rank)],
        iterator_types(rank),
        lambda args: arith.TruncFOp(args[0], element).result,
    )
    return result


class LowerReduce(RewritePattern):
    """Any `ml.reduce_*` to a fill and a reduction generic (and a division for the mean)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ReduceOp, rewriter: PatternRewriter, /) -> None:
        x_type = tensor_type(op.x)
        element = x_type.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(op, ml.ReduceSumOp):  # max, min and mean have no unsigned form yet
            check_signless(op, element)  # pyright: ignore[reportUnknownArgumentType]
        rank = x_type.get_num_dims()
        axes = sorted(shapes.normalize_axes(op.axes.get_values(), rank))
        keepdims = bool(op.keepdims.value.data)
        # bf16 sums and means accumulate in f32 (the module docstring)
        widen = isinstance(element, BFloat16Type) and isinstance(
            op, ml.ReduceSumOp | ml.ReduceMeanOp
        )
        result_type = tensor_type(op.result)
        sum_type = TensorType(f32, result_type.get_shape()) if widen else result_type
        sum_element = f32 if widen else element  # pyright: ignore[reportUnknownVariableType]

        def body(args: Sequence[SSAValue]) -> SSAValue:
            x = arith.ExtFOp(args[0], f32).result if widen else args[0]
            return combine(op, x, args[1])

        with keep_location(rewriter, op):
            result = accumulate(
                rewriter,
                op.x,
                axes,
                keepdims,
                sum_type,
                identity_of(op, element),  # pyright: ignore[reportUnknownArgumentType]
                ([op.x], [AffineMap.identity(rank)]),
                body,
            )
            if isinstance(op, ml.ReduceMeanOp):
                count = element_count(rewriter, op.x, axes, sum_element)  # pyright: ignore[reportUnknownArgumentType]
                result = divide(rewriter, result, count)
            if widen:
                result = narrow(rewriter, result, element)  # pyright: ignore[reportUnknownArgumentType]
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerReduce()]

"""
`ml.softmax`, `ml.layer_norm` and `ml.batch_norm` to a few generics each.

Softmax along `axis` is numerically stable, in four generics (plus two fills):

    m = max(x, axis, keepdims)      e = exp(x - m)
    s = sum(e, axis, keepdims)      y = e / s

Layer norm over the dims `axis..rank-1` (N elements) takes three, using the biased
variance as the mean of squared deviations (two passes over `x`, which is stabler
than `E[x^2] - E[x]^2`):

    s1 = sum(x)                     s2 = sum((x - s1/N)^2)
    y  = (x - s1/N) * rsqrt(s2/N + epsilon) * scale + bias

`scale` and `bias` are read through numpy broadcasting maps against `x` (they align
with its trailing dims, which are the normalised ones). Batch norm (inference form)
is one generic, its per-channel operands read at loop `d1`. All three admit only
float element types (the `ml` verifier checks this).
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlc import shapes
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.common import (
    BodyFn,
    broadcast_map,
    build_generic,
    dim_value,
    empty_like_result,
    iterator_types,
    keep_location,
    scalar_constant,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.reduction import accumulate, element_count, reduced_map


def kept_type(x: SSAValue, axes: Sequence[int]) -> TensorType[Attribute]:
    """`x`'s type with the dims `axes` reduced to size 1 (a keepdims reduction)."""
    x_type = tensor_type(x)
    shape = [1 if i in axes else d for i, d in enumerate(x_type.get_shape())]
    return TensorType(x_type.element_type, shape)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


def map_over_x(
    rewriter: PatternRewriter,
    x: SSAValue,
    result_type: Attribute,
    inputs: tuple[Sequence[SSAValue], Sequence[AffineMap]],
    body: BodyFn,
) -> SSAValue:
    """One all-parallel generic over `x`'s shape producing `result_type`."""
    rank = tensor_type(x).get_num_dims()
    assert isinstance(result_type, TensorType)
    dims = [
        None if shapes.is_static(d) else dim_value(rewriter, x, i)
        for i, d in enumerate(result_type.get_shape())
    ]
    init = empty_like_result(rewriter, result_type, dims)
    values, maps = inputs
    (result,) = build_generic(
        rewriter,
        values,
        [init],
        [*maps, AffineMap.identity(rank)],
        iterator_types(rank),
        body,
    )
    return result


def decimal_epsilon(epsilon: FloatAttr) -> float:
    """
    The shortest decimal that the f32 `epsilon` holds, e.g. 1e-5 rather than 9.99999974e-6.

    The attribute is f32 whatever the data type; for f64 data, widening the f32 value
    would add digits that the user never wrote.
    """
    return float(str(np.float32(epsilon.value.data)))


def normalize(
    x: SSAValue, mean: SSAValue, var: SSAValue, params: tuple[SSAValue, SSAValue], epsilon: float
) -> SSAValue:
    """`(x - mean) * rsqrt(var + epsilon) * scale + bias` on scalars (in a body)."""
    scale, bias = params
    eps = scalar_constant(epsilon, x.type)
    inv_std = math.RsqrtOp(arith.AddfOp(var, eps)).result
    normalized = arith.MulfOp(arith.SubfOp(x, mean), inv_std)
    return arith.AddfOp(arith.MulfOp(normalized, scale), bias).result


class LowerSoftmax(RewritePattern):
    """`ml.softmax` to max, exp, sum and divide generics."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.SoftmaxOp, rewriter: PatternRewriter, /) -> None:
        x = op.x
        rank = tensor_type(x).get_num_dims()
        axes = [shapes.normalize_axis(op.axis.value.data, rank)]
        kept = kept_type(x, axes)
        identity, kept_map = AffineMap.identity(rank), reduced_map(rank, axes, True)
        with keep_location(rewriter, op):
            m = accumulate(
                rewriter,
                x,
                axes,
                True,
                kept,
                float("-inf"),
                ([x], [identity]),
                lambda args: arith.MaximumfOp(args[0], args[1]).result,
            )
            e = map_over_x(
                rewriter,
                x,
                x.type,
                ([x, m], [identity, kept_map]),
                lambda args: math.ExpOp(arith.SubfOp(args[0], args[1])).result,
            )
            s = accumulate(
                rewriter,
                e,
                axes,
                True,
                kept,
                0,
                ([e], [identity]),
                lambda args: arith.AddfOp(args[0], args[1]).result,
            )
            y = map_over_x(
                rewriter,
                x,
                op.result.type,
                ([e, s], [identity, kept_map]),
                lambda args: arith.DivfOp(args[0], args[1]).result,
            )
        rewriter.replace(op, (), (y,))


class LowerLayerNorm(RewritePattern):
    """`ml.layer_norm` to sum, squared-deviation sum and normalise generics."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.LayerNormOp, rewriter: PatternRewriter, /) -> None:
        x = op.x
        x_type = tensor_type(x)
        rank = x_type.get_num_dims()
        axes = list(range(shapes.normalize_axis(op.axis.value.data, rank), rank))
        kept = kept_type(x, axes)
        identity, kept_map = AffineMap.identity(rank), reduced_map(rank, axes, True)
        scalar_map = AffineMap(rank, 0, ())
        epsilon = decimal_epsilon(op.epsilon)
        with keep_location(rewriter, op):
            n = element_count(rewriter, x, axes, x_type.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            s1 = accumulate(
                rewriter,
                x,
                axes,
                True,
                kept,
                0,
                ([x], [identity]),
                lambda args: arith.AddfOp(args[0], args[1]).result,
            )
            s2 = accumulate(
                rewriter,
                x,
                axes,
                True,
                kept,
                0,
                ([x, s1, n], [identity, kept_map, scalar_map]),
                lambda args: squared_deviation(*args),
            )
            params = [op.scale, op.bias]
            param_maps = [
                broadcast_map(tensor_type(p).get_shape(), x_type.get_shape()) for p in params
            ]
            y = map_over_x(
                rewriter,
                x,
                op.result.type,
                ([x, s1, s2, n, *params], [identity, kept_map, kept_map, scalar_map, *param_maps]),
                lambda args: layer_norm_body(args, epsilon),
            )
        rewriter.replace(op, (), (y,))


def squared_deviation(x: SSAValue, total: SSAValue, n: SSAValue, acc: SSAValue) -> SSAValue:
    """`acc + (x - total / n)^2`: one step of the variance's sum."""
    deviation = arith.SubfOp(x, arith.DivfOp(total, n))
    return arith.AddfOp(acc, arith.MulfOp(deviation, deviation)).result


def layer_norm_body(args: Sequence[SSAValue], epsilon: float) -> SSAValue:
    x, s1, s2, n, scale, bias = args[:6]
    mean = arith.DivfOp(s1, n).result
    var = arith.DivfOp(s2, n).result
    return normalize(x, mean, var, (scale, bias), epsilon)


class LowerBatchNorm(RewritePattern):
    """`ml.batch_norm` to one generic reading the per-channel operands at loop `d1`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.BatchNormOp, rewriter: PatternRewriter, /) -> None:
        x = op.x
        rank = tensor_type(x).get_num_dims()
        channel_map = AffineMap(rank, 0, (AffineExpr.dimension(1),))
        epsilon = decimal_epsilon(op.epsilon)
        with keep_location(rewriter, op):
            y = map_over_x(
                rewriter,
                x,
                op.result.type,
                (
                    [x, op.scale, op.bias, op.mean, op.var],
                    [AffineMap.identity(rank), *[channel_map] * 4],
                ),
                lambda args: normalize(args[0], args[3], args[4], (args[1], args[2]), epsilon),
            )
        rewriter.replace(op, (), (y,))


PATTERNS: list[RewritePattern] = [LowerSoftmax(), LowerLayerNorm(), LowerBatchNorm()]

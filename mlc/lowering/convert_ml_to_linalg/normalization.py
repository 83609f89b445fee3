"""
`ml.softmax`, `ml.layer_norm` and `ml.batch_norm` to row kernels: at most two passes over `x`.

Softmax along `axis` is online (Milakov and Gimelshein): one reduction generic keeps
the running max `m` and the sum `s` of `exp(x - m)`, rescaling the sum when the max
grows, and a second, elementwise one normalises:

    pass 1, per element:  m' = max(m, x)
                          e  = exp(min(m, x) - m')      (one exp: the smaller side)
                          s' = x > m ? s * e + 1 : s + e
    pass 2:               y  = exp(x - m) / s

`e` is taken as 0 where `min - max` is NaN (both -inf: masked entries before the
first finite one), so a row is NaN only if it is entirely -inf, as in numpy.

That recurrence carries one state per row from element to element, which no loop
vectoriser takes apart. Along a static last axis that is a multiple of the lanes (16,
else 8), pass 1 keeps one state per lane instead: the row viewed as
`(size / lanes) x lanes`, a reduction whose innermost loop runs over the lanes
(contiguous, independent: a vector loop), then a reduction over the lanes of each row
that merges the states, `(m, s) + (m', s')` rescaling the sum with the smaller max
(`merge_softmax_states`; the step above is its `s' = 1` case), as onnxruntime and
FlashAttention combine partial softmaxes.

Layer norm over the dims `axis..rank-1` (N elements) sums the data shifted by the
row's first element `k` in one pass (sum and sum of squares of `x - k`: with `k` near
the mean, the subtraction in the variance loses nothing even for large means), turns
them into a mean and `rsqrt(var + epsilon)` per row (a generic over the rows, not a
pass over the data), then normalises:

    pass 1:     s1 = sum(x - k)            s2 = sum((x - k)^2)
    per row:    mean = k + s1/N            rstd = rsqrt(max(s2/N - (s1/N)^2, 0) + epsilon)
    pass 2:     y = (x - mean) * rstd * scale + bias

`scale` and `bias` are read through numpy broadcasting maps against `x` (they align
with its trailing dims, which are the normalised ones). Batch norm (inference form)
is one generic, its per-channel operands read at loop `d1`. All three admit only
float element types (the `ml` verifier checks this).
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math, tensor
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
    dynamic_dims,
    empty_like_result,
    fill,
    iterator_types,
    keep_location,
    scalar_constant,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.movement import reassociation
from mlc.lowering.convert_ml_to_linalg.reduction import element_count, reduced_dims, reduced_map


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


def rows_filled(
    rewriter: PatternRewriter, x: SSAValue, axes: Sequence[int], identities: Sequence[float]
) -> list[SSAValue]:
    """One keepdims tensor per identity, reduced over `axes`, filled with it."""
    kept = kept_type(x, axes)
    dims = reduced_dims(rewriter, x, axes, True, kept)
    return [fill(rewriter, kept, dims, identity) for identity in identities]


def online_softmax_step(x: SSAValue, m: SSAValue, s: SSAValue) -> list[SSAValue]:
    """The new running max and sum after element `x` (see the module docstring)."""
    new_max = arith.MaximumfOp(m, x).result
    gap = arith.SubfOp(arith.MinimumfOp(m, x), new_max).result
    ordered = arith.CmpfOp(gap, gap, "ord").result
    scale = arith.SelectOp(ordered, math.ExpOp(gap), scalar_constant(0, x.type)).result
    one = scalar_constant(1, x.type)
    grown = arith.AddfOp(arith.MulfOp(s, scale), one).result
    kept = arith.AddfOp(s, scale).result
    new_sum = arith.SelectOp(arith.CmpfOp(x, m, "ogt"), grown, kept).result
    return [new_max, new_sum]


def merge_softmax_states(m_b: SSAValue, s_b: SSAValue, m: SSAValue, s: SSAValue) -> list[SSAValue]:
    """
    The running max and sum of two parts of a row, `(m, s)` and `(m_b, s_b)`.

    As `online_softmax_step` (which is this with `s_b = 1`): one exp, of the smaller
    max minus the larger, taken as 0 where both are -inf.
    """
    new_max = arith.MaximumfOp(m, m_b).result
    gap = arith.SubfOp(arith.MinimumfOp(m, m_b), new_max).result
    ordered = arith.CmpfOp(gap, gap, "ord").result
    scale = arith.SelectOp(ordered, math.ExpOp(gap), scalar_constant(0, m.type)).result
    grown = arith.AddfOp(arith.MulfOp(s, scale), s_b).result
    kept = arith.AddfOp(s, arith.MulfOp(s_b, scale)).result
    new_sum = arith.SelectOp(arith.CmpfOp(m_b, m, "ogt"), grown, kept).result
    return [new_max, new_sum]


SOFTMAX_LANES = (16, 8)
"""Running states per row when softmax runs along the last, static axis: two AVX2 or
one AVX-512 vector of f32 (8 where the axis is a multiple of 8 only)."""


def softmax_lanes(x: SSAValue, axis: int) -> int | None:
    """The lanes of a vectorised max-and-sum for softmax over `axis`, or None (scalar)."""
    shape = tensor_type(x).get_shape()
    if axis != len(shape) - 1 or not shapes.is_static(shape[axis]):
        return None
    size = shape[axis]
    return next((n for n in SOFTMAX_LANES if size % n == 0 and size >= 2 * n), None)


def lane_max_and_sum(
    rewriter: PatternRewriter, x: SSAValue, lanes: int, inits: Sequence[SSAValue]
) -> tuple[SSAValue, ...]:
    """
    The running max and sum of each row of `x` (last axis) into `inits`, `lanes` at a time.

    The row is viewed as `(size / lanes) x lanes`; a reduction over the first of these
    keeps one running state per lane, `(..., lanes)`, whose innermost loop is over the
    lanes, contiguous and independent (a vector loop for LLVM); a second reduction
    merges the lanes of each row into `inits`.
    """
    x_type = tensor_type(x)
    rank = x_type.get_num_dims()
    lead = list(x_type.get_shape()[:-1])
    element = x_type.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    dynamic = [dim_value(rewriter, x, i) for i, d in enumerate(lead) if not shapes.is_static(d)]
    split_type = TensorType(element, [*lead, x_type.get_shape()[-1] // lanes, lanes])  # pyright: ignore[reportUnknownArgumentType]
    groups = [[i] for i in range(rank - 1)] + [[rank - 1, rank]]
    split = rewriter.insert(
        tensor.ExpandShapeOp(x, dynamic, reassociation(groups), split_type.get_shape(), split_type)
    ).result
    state_type = TensorType(element, [*lead, lanes])  # pyright: ignore[reportUnknownArgumentType]
    dims = [*dynamic_dims(rewriter, x)[:-1], None]
    states = [fill(rewriter, state_type, dims, identity) for identity in (float("-inf"), 0)]
    lane_map = AffineMap(
        rank + 1, 0, tuple(AffineExpr.dimension(i) for i in [*range(rank - 1), rank])
    )
    m_lanes, s_lanes = build_generic(
        rewriter,
        [split],
        states,
        [AffineMap.identity(rank + 1), lane_map, lane_map],
        iterator_types(rank + 1, [rank - 1]),
        lambda args: online_softmax_step(*args),
    )
    kept_map = reduced_map(rank, [rank - 1], True)
    return build_generic(
        rewriter,
        [m_lanes, s_lanes],
        inits,
        [AffineMap.identity(rank), AffineMap.identity(rank), kept_map, kept_map],
        iterator_types(rank, [rank - 1]),
        lambda args: merge_softmax_states(*args),
    )


class LowerSoftmax(RewritePattern):
    """`ml.softmax` to an online max-and-sum reduction and a normalising generic."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.SoftmaxOp, rewriter: PatternRewriter, /) -> None:
        x = op.x
        rank = tensor_type(x).get_num_dims()
        axes = [shapes.normalize_axis(op.axis.value.data, rank)]
        identity, kept_map = AffineMap.identity(rank), reduced_map(rank, axes, True)
        with keep_location(rewriter, op):
            inits = rows_filled(rewriter, x, axes, [float("-inf"), 0])
            if (lanes := softmax_lanes(x, axes[0])) is not None:
                m, s = lane_max_and_sum(rewriter, x, lanes, inits)
            else:
                m, s = build_generic(
                    rewriter,
                    [x],
                    inits,
                    [identity, kept_map, kept_map],
                    iterator_types(rank, axes),
                    lambda args: online_softmax_step(*args),
                )
            y = map_over_x(
                rewriter,
                x,
                op.result.type,
                ([x, m, s], [identity, kept_map, kept_map]),
                lambda args: (
                    arith.DivfOp(math.ExpOp(arith.SubfOp(args[0], args[1])), args[2]).result
                ),
            )
        rewriter.replace(op, (), (y,))


def shifted_sums(x: SSAValue, k: SSAValue, s1: SSAValue, s2: SSAValue) -> list[SSAValue]:
    """One step of the sums of `x - k` and of its square."""
    t = arith.SubfOp(x, k).result
    return [arith.AddfOp(s1, t).result, arith.AddfOp(s2, arith.MulfOp(t, t)).result]


def row_statistics(args: Sequence[SSAValue], epsilon: float) -> list[SSAValue]:
    """The mean and `rsqrt(var + epsilon)` of a row from its shifted sums."""
    k, s1, s2, n = args[:4]
    mean_shift = arith.DivfOp(s1, n).result
    mean = arith.AddfOp(k, mean_shift).result
    square = arith.SubfOp(arith.DivfOp(s2, n), arith.MulfOp(mean_shift, mean_shift)).result
    var = arith.MaximumfOp(square, scalar_constant(0, k.type)).result  # rounding can dip below 0
    rstd = math.RsqrtOp(arith.AddfOp(var, scalar_constant(epsilon, k.type))).result
    return [mean, rstd]


class LowerLayerNorm(RewritePattern):
    """`ml.layer_norm` to a shifted-sums reduction, per-row statistics and a normalising generic."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.LayerNormOp, rewriter: PatternRewriter, /) -> None:
        x = op.x
        x_type = tensor_type(x)
        rank = x_type.get_num_dims()
        axes = list(range(shapes.normalize_axis(op.axis.value.data, rank), rank))
        identity, kept_map = AffineMap.identity(rank), reduced_map(rank, axes, True)
        kept = kept_type(x, axes)
        epsilon = decimal_epsilon(op.epsilon)
        with keep_location(rewriter, op):
            n = element_count(rewriter, x, axes, x_type.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            s1, s2 = build_generic(
                rewriter,
                [x, x],
                rows_filled(rewriter, x, axes, [0, 0]),
                [identity, kept_map, kept_map, kept_map],
                iterator_types(rank, axes),
                lambda args: shifted_sums(*args),
            )
            dims = reduced_dims(rewriter, x, axes, True, kept)
            # Over the rows (the kept shape); `x` is read at each row's first element.
            mean, rstd = build_generic(
                rewriter,
                [x, s1, s2, n],
                [empty_like_result(rewriter, kept, dims) for _ in range(2)],
                [kept_map, identity, identity, AffineMap(rank, 0, ()), identity, identity],
                iterator_types(rank),
                lambda args: row_statistics(args, epsilon),
            )
            params = [op.scale, op.bias]
            param_maps = [
                broadcast_map(tensor_type(p).get_shape(), x_type.get_shape()) for p in params
            ]
            y = map_over_x(
                rewriter,
                x,
                op.result.type,
                ([x, mean, rstd, *params], [identity, kept_map, kept_map, *param_maps]),
                lambda args: normalized(*args[:5]),
            )
        rewriter.replace(op, (), (y,))


def normalized(
    x: SSAValue, mean: SSAValue, rstd: SSAValue, scale: SSAValue, bias: SSAValue
) -> SSAValue:
    centred = arith.SubfOp(x, mean).result
    return arith.AddfOp(arith.MulfOp(arith.MulfOp(centred, rstd), scale), bias).result


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

"""
`ml.softmax`, `ml.layer_norm` and `ml.batch_norm` to row kernels: at most two passes over `x`.

Softmax along `axis` makes three passes over each row, one `exp` per element:

    pass 1:     m = max(x)                      (NaN-propagating, as numpy's)
    pass 2:     e = exp(x - m), stored;  s = sum(e)
    per row:    r = 1 / s
    pass 3:     e = e * r                       (in place: the generic's output is `e`)

`linalg-tile` runs the four generics over blocks of rows that fit in L2
(`mlc.lowering.cpu.row_blocks`), so x is read from memory once and `e` is scaled while
still in cache, and bufferization writes pass 3 into `e`'s buffer, which is the result.
A row entirely -inf gives NaN (x - m is NaN), as in numpy; so does a row holding NaN
or +inf.

The pass option `online-softmax` (the GPU pipeline's choice) makes two passes instead:
an online max-and-sum (`mlc.lowering.support.online_softmax`: the running max `m` and the sum
`s` of `exp(x - m)`, rescaled when the max grows), then an elementwise pass
`y = exp(x - m) / s`. It reads x once less but computes `exp` twice per element: on
the CPU that made softmax bound by arithmetic at about a third of memory speed, while
a GPU has the arithmetic to spare and gains from the fewer kernels and passes over
memory, and its warps share a row's statistics through `online_softmax.merge`.

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
float element types (the `ml` verifier checks this). On bf16 they run in f32 between
casts (`InF32`): a row's sums and statistics would lose too much in bf16's 8 bits.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, FloatAttr, TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
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
    scalar_constant,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.reduction import element_count, reduced_dims, reduced_map
from mlc.lowering.support import online_softmax as online
from mlc.lowering.support.locations import keep_location


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


def exp_and_sum(x: SSAValue, m: SSAValue, s: SSAValue) -> list[SSAValue]:
    """`exp(x - m)`, stored once, and the row's sum with it added."""
    e = math.ExpOp(arith.SubfOp(x, m)).result
    return [e, arith.AddfOp(s, e).result]


@dataclass(frozen=True)
class LowerSoftmax(RewritePattern):
    """`ml.softmax` to a max pass, an exp-and-sum pass, per-row reciprocals and a scaling
    pass; with `online`, to an online max-and-sum and a normalising pass."""

    online: bool = False

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.SoftmaxOp, rewriter: PatternRewriter, /) -> None:
        x = op.x
        rank = tensor_type(x).get_num_dims()
        axes = [shapes.normalize_axis(op.axis.value.data, rank)]
        identity, kept_map = AffineMap.identity(rank), reduced_map(rank, axes, True)
        reduce = iterator_types(rank, axes)
        if self.online:
            with keep_location(rewriter, op):
                m, s = build_generic(
                    rewriter,
                    [x],
                    rows_filled(rewriter, x, axes, [float("-inf"), 0]),
                    [identity, kept_map, kept_map],
                    reduce,
                    lambda args: online.step(*args),
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
            return
        with keep_location(rewriter, op):
            low, zero = rows_filled(rewriter, x, axes, [float("-inf"), 0])
            (m,) = build_generic(
                rewriter,
                [x],
                [low],
                [identity, kept_map],
                reduce,
                lambda args: arith.MaximumfOp(args[1], args[0]).result,
            )
            empty = empty_like_result(rewriter, op.result.type, dynamic_dims(rewriter, x))
            e, s = build_generic(
                rewriter,
                [x, m],
                [empty, zero],
                [identity, kept_map, identity, kept_map],
                reduce,
                lambda args: exp_and_sum(args[0], args[1], args[3]),
            )
            (inverse,) = build_generic(
                rewriter,
                [s],
                [empty_like_result(rewriter, s.type, dynamic_dims(rewriter, s))],
                [AffineMap.identity(rank)] * 2,
                iterator_types(rank),
                lambda args: arith.DivfOp(scalar_constant(1, args[0].type), args[0]).result,
            )
            (y,) = build_generic(
                rewriter,
                [inverse],
                [e],
                [kept_map, identity],
                iterator_types(rank),
                lambda args: arith.MulfOp(args[1], args[0]).result,
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


class InF32(RewritePattern):
    """
    A bf16 or f16 softmax or norm -> the f32 one between `ml.cast`s, at the op's
    location (f16's own exp, sum and division were off the f32 result rounded once by
    one ulp, and off numpy's f16 one too).
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ml.SoftmaxOp | ml.LayerNormOp | ml.BatchNormOp):
            return
        result = tensor_type(op.results[0])
        if not isinstance(result.element_type, BFloat16Type | Float16Type):  # pyright: ignore[reportUnknownMemberType]
            return
        with keep_location(rewriter, op):
            wide = [
                rewriter.insert(ml.CastOp(v, TensorType(f32, tensor_type(v).get_shape())))
                for v in op.operands
            ]
            computed = rewriter.insert(
                op.create(
                    operands=[w.results[0] for w in wide],
                    result_types=[TensorType(f32, result.get_shape())],
                    properties=dict(op.properties),
                    attributes=dict(op.attributes),
                )
            )
            narrow = rewriter.insert(ml.CastOp(computed.results[0], result))
        rewriter.replace(op, (), (narrow.results[0],))


def patterns(online_softmax: bool = False) -> list[RewritePattern]:
    return [InF32(), LowerSoftmax(online_softmax), LowerLayerNorm(), LowerBatchNorm()]

"""
Normalisations composed of `ml` ops: LpNormalization, GroupNormalization,
RMSNormalization and LRN (InstanceNormalization and LayerNormalization: `nn`).

They are the reduce / sub / mul / rsqrt chains that LayerNormalization's statistics
outputs use, so `linalg-fuse-elementwise` and the GPU's row fusion see the same
patterns. With `stash_type` 1 (the default) f16 and bf16 data are normalised in f32
and the result cast back, as onnxruntime computes them.
"""

from collections.abc import Sequence

from xdsl.dialects.builtin import BFloat16Type, Float16Type, f32
from xdsl.ir import SSAValue

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    cast,
    element_of,
    reshape_to,
    shape_of,
    sizes,
)
from mlc.frontends.onnx.ops.padding import INT64_MAX, pad_axes, slice_along
from mlc.frontends.onnx.ops.table import converts


def _stashed(node: Node, x: SSAValue) -> SSAValue:
    """`x` in f32 where `stash_type` is 1 and `x` is f16 or bf16."""
    if node.attr("stash_type", 1) == 1 and isinstance(element_of(x), Float16Type | BFloat16Type):
        return cast(node, x, f32)
    return x


def _centred_scaled(node: Node, x: SSAValue, axes: list[int], epsilon: float) -> SSAValue:
    """`(x - mean) * rsqrt(var + epsilon)` over `axes` (the biased variance)."""
    mean = node.emit(ml.ReduceMeanOp(x, axes, keepdims=True))
    centred = node.emit(ml.SubOp(x, mean))
    var = node.emit(ml.ReduceMeanOp(node.emit(ml.MulOp(centred, centred)), axes, keepdims=True))
    inv_std = node.emit(ml.RsqrtOp(node.emit(ml.AddOp(var, node.scalar(epsilon, var)))))
    return node.emit(ml.MulOp(centred, inv_std))


@converts("LpNormalization")
def lp_normalization(node: Node) -> Sequence[Value]:
    """`x / ||x||_p` along `axis`; a zero norm gives 0 (as onnxruntime's)."""
    x = node.input(0)
    axis = shapes.normalize_axis(node.attr("axis", -1), len(shape_of(x)))
    p = node.attr("p", 2)
    if p == 1:
        norm = node.emit(ml.ReduceSumOp(node.emit(ml.AbsOp(x)), [axis], keepdims=True))
    elif p == 2:
        squares = node.emit(ml.MulOp(x, x))
        norm = node.emit(ml.SqrtOp(node.emit(ml.ReduceSumOp(squares, [axis], keepdims=True))))
    else:
        raise NodeError(f"LpNormalization supports p 1 and 2, got {p}")
    zero = node.emit(ml.CmpOp("eq", norm, node.scalar(0, norm)))
    safe = node.emit(ml.SelectOp(zero, node.scalar(1, norm), norm))
    return [node.emit(ml.DivOp(x, safe))]


@converts("GroupNormalization", since=18)
def group_normalization(node: Node) -> Sequence[Value]:
    """
    Normalise each of `num_groups` channel groups over its channels and spatial dims.

    Opset 18 scales and shifts per group (`scale`, `bias` of shape (G,)), opset 21 per
    channel (C,).
    """
    x = node.input(0)
    rank = len(shape_of(x))
    if rank < 3:
        raise NodeError(f"GroupNormalization needs an input of rank >= 3, got rank {rank}")
    groups = node.attr("num_groups")
    dims = sizes(node, x)
    channels = dims[1]
    if isinstance(channels, int) and channels % groups:
        raise NodeError(f"the channels ({channels}) are not a multiple of num_groups ({groups})")
    data = _stashed(node, x)
    per_group: Size = channels // groups if isinstance(channels, int) else shapes.DYNAMIC
    grouped = reshape_to(node, data, [dims[0], groups, per_group, *dims[2:]])
    axes = list(range(2, rank + 1))
    y = _centred_scaled(node, grouped, axes, node.attr("epsilon", 1e-5))
    scale, bias = (cast(node, node.input(i), element_of(y)) for i in (1, 2))
    if node.opset < 21:  # per group: (G,) against the grouped dims (N, G, C/G, ...)
        shape: list[Size] = [groups, *([1] * (rank - 1))]
        y = node.emit(ml.MulOp(y, reshape_to(node, scale, shape)))
        y = node.emit(ml.AddOp(y, reshape_to(node, bias, shape)))
        return [cast(node, reshape_to(node, y, dims), element_of(x))]
    y = reshape_to(node, y, dims)
    shape = [channels, *([1] * (rank - 2))]
    y = node.emit(ml.MulOp(y, reshape_to(node, scale, shape)))
    y = node.emit(ml.AddOp(y, reshape_to(node, bias, shape)))
    return [cast(node, y, element_of(x))]


@converts("RMSNormalization", since=23)
def rms_normalization(node: Node) -> Sequence[Value]:
    """`x * rsqrt(mean(x^2) + epsilon) * scale` over the dims from `axis` on."""
    x = node.input(0)
    rank = len(shape_of(x))
    axis = shapes.normalize_axis(node.attr("axis", -1), rank)
    data = _stashed(node, x)
    axes = list(range(axis, rank))
    squares = node.emit(ml.MulOp(data, data))
    mean = node.emit(ml.ReduceMeanOp(squares, axes, keepdims=True))
    epsilon = node.scalar(node.attr("epsilon", 1e-5), mean)
    inv_rms = node.emit(ml.RsqrtOp(node.emit(ml.AddOp(mean, epsilon))))
    y = cast(node, node.emit(ml.MulOp(data, inv_rms)), element_of(x))
    return [node.emit(ml.MulOp(y, node.input(1)))]


@converts("LRN")
def lrn(node: Node) -> Sequence[Value]:
    """
    `x / (bias + alpha / size * sum of x^2 over the size channels around)^beta`: the
    squares padded with zeros along the channels and `size` shifted slices added.
    """
    x = node.input(0)
    if len(shape_of(x)) < 3:
        raise NodeError(f"LRN needs an input of rank >= 3, got rank {len(shape_of(x))}")
    size = node.attr("size")
    alpha, beta, bias = node.attr("alpha", 1e-4), node.attr("beta", 0.75), node.attr("bias", 1.0)
    squares = node.emit(ml.MulOp(x, x))
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    padded = pad_axes(node, squares, [1], [before, after], node.scalar(0, x))
    # Window element i of channel c is padded channel c + i: slice [i, i + C).
    total = None
    for i in range(size):
        end = INT64_MAX if i == size - 1 else i - (size - 1)
        part = slice_along(node, padded, 1, i, end)
        total = part if total is None else node.emit(ml.AddOp(total, part))
    assert total is not None
    scaled = node.emit(ml.MulOp(total, node.scalar(alpha / size, total)))
    base = node.emit(ml.AddOp(scaled, node.scalar(bias, scaled)))
    denominator = node.emit(ml.PowOp(base, node.scalar(beta, base)))
    return [node.emit(ml.DivOp(x, denominator))]

"""
Neural-network op functions: softmax, layer norm, batch norm, matmul, convolution and
pooling.

They compute integers in float64 as numpy would (`widened`); `matmul` takes 1-D
operands as numpy does, through reshapes around a 2-D `ml.matmul`. Convolution and
pooling take NCHW arrays, OIHW weights and onnx's strides, dilations and pads.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.dispatch import array_function, ufunc
from mlc.frontends.trace.functions.reductions import mean as reduce_mean
from mlc.frontends.trace.recording import active_tracer, lift, promote, record, reshape_to, widened
from mlc.frontends.trace.tracer import trace_error


def softmax(x: Any, axis: int = -1) -> TracedArray:
    a = widened(x, np.float64)
    return record(a.tracer, "softmax", lambda: ml.SoftmaxOp(a.value, axis), (a,))


def layer_norm(
    x: Any, scale: Any = None, bias: Any = None, axis: int = -1, epsilon: float = 1e-5
) -> TracedArray:
    """Normalise over dims `axis..rank-1`, then `* scale + bias` (both broadcast)."""
    a = widened(x, np.float64)
    g = lift(a.tracer, 1.0 if scale is None else scale, a.dtype)
    b = lift(a.tracer, 0.0 if bias is None else bias, a.dtype)
    return record(
        a.tracer,
        "layer_norm",
        lambda: ml.LayerNormOp(a.value, g.value, b.value, axis, epsilon),
        (a, g, b),
    )


@ufunc("matmul")
@array_function("matmul")
def matmul(a: Any, b: Any) -> TracedArray:
    """numpy.matmul, 1-D operands included."""
    x, y = promote(a, b)
    if not x.ndim or not y.ndim:
        trace_error("matmul: operands must not be scalars (use '*')")
    if x.dtype == np.bool_:
        trace_error("matmul of bool arrays: cast with .astype first")
    lhs = reshape_to(x, (1, *x.raw_shape)) if x.ndim == 1 else x
    rhs = reshape_to(y, (*y.raw_shape, 1)) if y.ndim == 1 else y
    out = record(x.tracer, "matmul", lambda: ml.MatmulOp(lhs.value, rhs.value), (x, y))
    dims = list(out.raw_shape)
    if y.ndim == 1:
        del dims[-1]
    if x.ndim == 1:
        del dims[-1 if y.ndim == 1 else -2]
    return out if len(dims) == out.ndim else reshape_to(out, dims)


def _pair(value: int | Sequence[int], what: str) -> tuple[int, int]:
    if np.ndim(value) == 0:
        return int(value), int(value)  # pyright: ignore[reportArgumentType]
    if len(value) != 2:
        trace_error(f"{what} must be an int or a pair, got {value}")
    return int(value[0]), int(value[1])


def _pads(padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    """An int, a pair (h, w) padded on both sides, or (top, left, bottom, right)."""
    if np.ndim(padding) == 1 and len(padding) == 4:  # pyright: ignore[reportArgumentType]
        top, left, bottom, right = (int(p) for p in padding)
        return top, left, bottom, right
    h, w = _pair(padding, "padding")
    return h, w, h, w


def conv2d(
    x: Any,
    w: Any,
    bias: Any = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> TracedArray:
    """2-D convolution, NCHW input and OIHW weights (onnx Conv)."""
    tracer = active_tracer(x, w, bias)
    a, k = promote(x, w)
    operands = [a, k]
    if bias is not None:
        operands.append(lift(tracer, bias, a.dtype))
    bias_value = operands[2].value if bias is not None else None

    def make() -> ml.Conv2dOp:
        return ml.Conv2dOp(
            a.value,
            k.value,
            bias_value,
            strides=_pair(stride, "stride"),
            dilations=_pair(dilation, "dilation"),
            pads=_pads(padding),
            groups=groups,
        )

    return record(tracer, "conv2d", make, operands)


def _pool(
    name: str,
    op: type[ml.PoolOp],
    x: Any,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None,
    padding: int | Sequence[int],
) -> TracedArray:
    a = widened(x, np.float64)
    kernel = _pair(kernel_size, "kernel_size")
    strides = kernel if stride is None else _pair(stride, "stride")
    pads = _pads(padding)
    return record(a.tracer, name, lambda: op(a.value, kernel, strides=strides, pads=pads), (a,))


def max_pool2d(
    x: Any,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
) -> TracedArray:
    """Max pooling over H and W of an NCHW array; the stride defaults to the kernel."""
    return _pool("max_pool2d", ml.MaxPool2dOp, x, kernel_size, stride, padding)


def avg_pool2d(
    x: Any,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
) -> TracedArray:
    """Average pooling (padding not counted) over H and W; the stride defaults to the kernel."""
    return _pool("avg_pool2d", ml.AvgPool2dOp, x, kernel_size, stride, padding)


def scaled_dot_product_attention(
    q: Any, k: Any, v: Any, mask: Any = None, is_causal: bool = False, scale: float | None = None
) -> TracedArray:
    """
    torch's `scaled_dot_product_attention`: `softmax(q @ kᵀ * scale + mask) @ v`.

    q `(..., H, L, D)`, k `(..., Hkv, S, D)`, v `(..., Hkv, S, Dv)` with `H % Hkv == 0`
    (grouped K/V heads, torch's `enable_gqa`). A bool mask keeps where true, a float
    one is added; `is_causal` keeps key `j` for query `i` where `j <= i` (torch's
    top-left band); `scale` defaults to `1 / sqrt(D)`. One `ml.attention`.
    """
    a, b, c = promote(widened(q, np.float64), k, v)
    if a.ndim < 3 or not a.ndim == b.ndim == c.ndim:
        trace_error(
            "scaled_dot_product_attention: q, k and v need one rank >= 3, "
            f"got ranks {a.ndim}, {b.ndim} and {c.ndim}"
        )
    if scale is None:
        if not shapes.is_static(head_size := a.raw_shape[-1]):
            trace_error("scaled_dot_product_attention: a dynamic head size needs a scale")
        scale = 1 / float(np.sqrt(head_size))
    m = None if mask is None else lift(a.tracer, mask)
    if m is not None and m.dtype != np.bool_:
        m = lift(a.tracer, m, a.dtype)
    causal = bool(is_causal)
    if causal and a.raw_shape[-2] != b.raw_shape[-2]:
        m = _top_left_band(a, b, m)  # ml.attention's band is bottom-right
        causal = False
    operands = (a, b, c) if m is None else (a, b, c, m)
    return record(
        a.tracer,
        "scaled_dot_product_attention",
        lambda: ml.AttentionOp(
            a.value, b.value, c.value, None if m is None else m.value, scale=scale, causal=causal
        ),
        operands,
    )


def _top_left_band(q: TracedArray, k: TracedArray, mask: TracedArray | None) -> TracedArray:
    """torch's causal band `j <= i` as a bool mask (and the mask), for static lengths."""
    queries, keys = q.raw_shape[-2], k.raw_shape[-2]
    if queries < 0 or keys < 0:
        trace_error(
            "scaled_dot_product_attention: is_causal with query and key lengths that may "
            "differ needs static lengths"
        )
    band = lift(q.tracer, np.tril(np.ones((queries, keys), np.bool_)))
    if mask is None:
        return band
    if mask.dtype == np.bool_:
        return record(
            q.tracer, "and", lambda: ml.BitwiseAndOp(band.value, mask.value), (band, mask)
        )
    minus_inf = lift(q.tracer, -np.inf, mask.dtype)
    return record(
        q.tracer,
        "where",
        lambda: ml.SelectOp(band.value, mask.value, minus_inf.value),
        (band, mask, minus_inf),
    )


def batch_norm(
    x: Any,
    scale: Any = None,
    bias: Any = None,
    mean: Any = None,
    var: Any = None,
    training: bool = False,
    epsilon: float = 1e-5,
) -> TracedArray:
    """
    Batch normalisation over channel dim 1 of an N, C, ... array (torch's
    `F.batch_norm`, onnx BatchNormalization): `(x - mean) / sqrt(var + epsilon) * scale
    + bias`, the per-channel operands of C elements (scale 1 and bias 0 when omitted).
    With `training=True`, or without `mean` and `var`, the batch statistics are used:
    the mean and the biased variance over every dim but 1, computed with reductions, so
    `mlc.grad` differentiates through them (training mode). Running statistics are the
    caller's to keep, from `ops.mean` of the batch as torch does.
    """
    a = widened(x, np.float64)
    if a.ndim < 2:
        trace_error(f"batch_norm: expects an N, C, ... array of rank >= 2, got rank {a.ndim}")
    channels = a.raw_shape[1]
    if (scale is None or bias is None) and channels < 0:
        trace_error("batch_norm: give scale and bias when the channel dim is dynamic")
    g = lift(a.tracer, np.ones(channels) if scale is None else scale, a.dtype)
    b = lift(a.tracer, np.zeros(channels) if bias is None else bias, a.dtype)
    if training or mean is None or var is None:
        others = (0, *range(2, a.ndim))
        m = reduce_mean(a, axis=others)
        centred = a - reshape_to(m, (channels, *[1] * (a.ndim - 2)))
        v = reduce_mean(centred * centred, axis=others)
    else:
        m, v = lift(a.tracer, mean, a.dtype), lift(a.tracer, var, a.dtype)
    return record(
        a.tracer,
        "batch_norm",
        lambda: ml.BatchNormOp(a.value, g.value, b.value, m.value, v.value, epsilon),
        (a, g, b, m, v),
    )

"""
Neural-network ONNX ops: MatMul, Gemm, Conv, pools, softmax and the normalisations.

`ml` convolutions and pools are 2-D (NCHW): 1-D ones are imported as 2-D ops over an
added trailing dim of size 1. `auto_pad` and `ceil_mode` become explicit pads, which
needs static spatial sizes.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.onnx.graph import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import cast, element_of, product, shape_of, sizes
from mlc.frontends.onnx.ops.table import converts
from mlc.frontends.onnx.ops.tensor import DYN, _pad, reshape_to


@converts("MatMul")
def matmul(node: Node) -> Sequence[Value]:
    a, b = node.input(0), node.input(1)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 1:
        a = reshape_to(node, a, [1, *sizes(node, a)])
    if len(sb) == 1:
        b = reshape_to(node, b, [*sizes(node, b), 1])
    result = node.emit(ml.MatmulOp(a, b))
    if len(sa) == 1 or len(sb) == 1:
        dims = sizes(node, result)
        drop = ([len(dims) - 2] if len(sa) == 1 else []) + ([len(dims) - 1] if len(sb) == 1 else [])
        result = reshape_to(node, result, [d for i, d in enumerate(dims) if i not in drop])
    return [result]


@converts("Gemm")
def gemm(node: Node) -> Sequence[Value]:
    a, b = node.input(0), node.input(1)
    if node.attr("transA", 0):
        a = node.emit(ml.TransposeOp(a, [1, 0]))
    if node.attr("transB", 0):
        b = node.emit(ml.TransposeOp(b, [1, 0]))
    result = node.emit(ml.MatmulOp(a, b))
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        result = node.emit(ml.MulOp(result, node.scalar(alpha, result)))
    if node.has(2) and beta != 0.0:
        c = node.input(2)
        if beta != 1.0:
            c = node.emit(ml.MulOp(c, node.scalar(beta, c)))
        result = node.emit(ml.AddOp(result, c))
    return [result]


# ---------------------------------------------------------------------------
# Windows: convolution and pooling
# ---------------------------------------------------------------------------


def _window_pads(
    node: Node,
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """ONNX `pads` (begins then ends), with `auto_pad` resolved."""
    rank = len(kernel)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        return list(node.attr("pads", [0] * (2 * rank)))
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise NodeError(f"unknown auto_pad '{auto_pad}'")
    if DYN in spatial:
        raise NodeError(f"auto_pad {auto_pad} needs static spatial sizes")
    begins, ends = [], []
    for size, k, s, d in zip(spatial, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small = total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else total - small)
        ends.append(total - begins[-1])
    return begins + ends


def _to_2d(node: Node, x: SSAValue, what: str) -> SSAValue:
    """A rank-3 (1-D window) operand as rank 4, with a trailing dim of 1."""
    rank = len(shape_of(x))
    if rank == 4:
        return x
    if rank == 3:
        return reshape_to(node, x, [*sizes(node, x), 1])
    raise NodeError(f"only 1-D and 2-D windows are supported, got a rank-{rank} {what}")


def _pairs(values: Sequence[int], fill: int) -> list[int]:
    """Window attributes of a 1-D op, extended to 2-D."""
    return list(values) if len(values) == 2 else [*values, fill]


def _pads_2d(pads: Sequence[int]) -> list[int]:
    if len(pads) == 4:
        return list(pads)
    return [pads[0], 0, pads[1], 0]


def _from_2d(node: Node, result: SSAValue, rank: int) -> SSAValue:
    return result if rank == 4 else reshape_to(node, result, sizes(node, result)[:3])


@converts("Conv")
def conv(node: Node) -> Sequence[Value]:
    x, w = node.input(0), node.input(1)
    rank = len(shape_of(x))
    kernel = list(node.attr("kernel_shape", shape_of(w)[2:]))
    window = len(kernel)
    strides = list(node.attr("strides", [1] * window))
    dilations = list(node.attr("dilations", [1] * window))
    pads = _window_pads(node, shape_of(x)[2:], kernel, strides, dilations)
    bias = node.input(2) if node.has(2) else None
    result = node.emit(
        ml.Conv2dOp(
            _to_2d(node, x, "input"),
            _to_2d(node, w, "weight"),
            bias,
            strides=_pairs(strides, 1),
            dilations=_pairs(dilations, 1),
            pads=_pads_2d(pads),
            groups=node.attr("group", 1),
        )
    )
    return [_from_2d(node, result, rank)]


def _ceil_pads(
    spatial: Sequence[int], kernel: Sequence[int], strides: Sequence[int], pads: list[int]
) -> list[int]:
    """End pads grown so that the floor-mode output size equals ceil mode's."""
    rank = len(kernel)
    grown = list(pads)
    for i, (size, k, s) in enumerate(zip(spatial, kernel, strides, strict=True)):
        padded = size + pads[i] + pads[i + rank]
        out = -(-(padded - k) // s) + 1
        if (out - 1) * s >= size + pads[i]:
            out -= 1  # the last window would start in the end padding
        grown[i + rank] += max(0, (out - 1) * s + k - padded)
    return grown


def _pool(node: Node, op: type[ml.Pool2dOp], count_pads: bool = False) -> SSAValue:
    x = node.input(0)
    rank = len(shape_of(x))
    kernel = list(node.attr("kernel_shape"))
    strides = list(node.attr("strides", [1] * len(kernel)))
    dilations = list(node.attr("dilations", [1] * len(kernel)))
    if any(d != 1 for d in dilations):
        raise NodeError("pooling with dilations is not supported")
    spatial = shape_of(x)[2:]
    pads = _window_pads(node, spatial, kernel, strides, dilations)
    window_pads = pads
    if node.attr("ceil_mode", 0):
        if DYN in spatial:
            raise NodeError("ceil_mode needs static spatial sizes")
        window_pads = _ceil_pads(spatial, kernel, strides, pads)
    if count_pads and any(pads):
        # Zeros the average counts; ceil mode's extra end pads stay uncounted.
        x = _pad(node, x, list(range(2, rank)), pads, node.scalar(0, x))
        window_pads = [grown - given for grown, given in zip(window_pads, pads, strict=True)]
    pads = window_pads
    result = node.emit(
        op(
            _to_2d(node, x, "input"),
            _pairs(kernel, 1),
            strides=_pairs(strides, 1),
            pads=_pads_2d(pads),
        )
    )
    return _from_2d(node, result, rank)


@converts("MaxPool")
def max_pool(node: Node) -> Sequence[Value]:
    if len(node.proto.output) > 1 and node.proto.output[1]:
        raise NodeError("the Indices output of MaxPool is not supported")
    if node.attr("storage_order", 0):
        raise NodeError("storage_order 1 is not supported")
    return [_pool(node, ml.MaxPool2dOp)]


@converts("AveragePool")
def average_pool(node: Node) -> Sequence[Value]:
    return [_pool(node, ml.AvgPool2dOp, bool(node.attr("count_include_pad", 0)))]


@converts("GlobalAveragePool", "GlobalMaxPool")
def global_pool(node: Node) -> Sequence[Value]:
    x = node.input(0)
    axes = list(range(2, len(shape_of(x))))
    op = ml.ReduceMeanOp if node.proto.op_type == "GlobalAveragePool" else ml.ReduceMaxOp
    return [node.emit(op(x, axes, keepdims=True))]


# ---------------------------------------------------------------------------
# Softmax and normalisation
# ---------------------------------------------------------------------------


def _log_softmax(node: Node, x: SSAValue, axis: int) -> SSAValue:
    """`x - max - log(sum(exp(x - max)))` along `axis`: stable, and exact for large x."""
    peak = node.emit(ml.ReduceMaxOp(x, [axis], keepdims=True))
    shifted = node.emit(ml.SubOp(x, peak))
    total = node.emit(ml.ReduceSumOp(node.emit(ml.ExpOp(shifted)), [axis], keepdims=True))
    return node.emit(ml.SubOp(shifted, node.emit(ml.LogOp(total))))


def _softmax_along(node: Node, x: SSAValue, axis: int) -> SSAValue:
    if node.proto.op_type == "LogSoftmax":
        return _log_softmax(node, x, axis)
    return node.emit(ml.SoftmaxOp(x, axis))


@converts("Softmax", "LogSoftmax", since=13)
def softmax(node: Node) -> Sequence[Value]:
    return [_softmax_along(node, node.input(0), node.attr("axis", -1))]


@converts("Softmax", "LogSoftmax", since=1)
def softmax_coerced(node: Node) -> Sequence[Value]:
    """Before opset 13: over all dims from `axis` on, as a 2-D (outer, inner) matrix."""
    x = node.input(0)
    source = shape_of(x)
    axis = shapes.normalize_axis(node.attr("axis", 1), len(source))
    if axis == len(source) - 1:
        return [_softmax_along(node, x, -1)]
    current = sizes(node, x)
    flat = reshape_to(node, x, [product(node, current[:axis]), product(node, current[axis:])])
    return [reshape_to(node, _softmax_along(node, flat, 1), current)]


def _normalize(node: Node, x: SSAValue, axes: list[int], epsilon: float) -> tuple[SSAValue, ...]:
    """`(x - mean) * inv_std`, the mean and the inverse standard deviation over `axes`."""
    mean = node.emit(ml.ReduceMeanOp(x, axes, keepdims=True))
    centered = node.emit(ml.SubOp(x, mean))
    var = node.emit(ml.ReduceMeanOp(node.emit(ml.MulOp(centered, centered)), axes, keepdims=True))
    inv_std = node.emit(ml.RsqrtOp(node.emit(ml.AddOp(var, node.scalar(epsilon, var)))))
    return node.emit(ml.MulOp(centered, inv_std)), mean, inv_std


@converts("LayerNormalization", since=17)
def layer_norm(node: Node) -> Sequence[Value]:
    x, scale = node.input(0), node.input(1)
    rank = len(shape_of(x))
    axis = shapes.normalize_axis(node.attr("axis", -1), rank)
    epsilon = node.attr("epsilon", 1e-5)
    wants_stats = len([o for o in node.proto.output[1:] if o]) > 0
    if not wants_stats and node.has(2):
        return [node.emit(ml.LayerNormOp(x, scale, node.input(2), axis, epsilon))]
    normalized, mean, inv_std = _normalize(node, x, list(range(axis, rank)), epsilon)
    y = node.emit(ml.MulOp(normalized, scale))
    if node.has(2):
        y = node.emit(ml.AddOp(y, node.input(2)))
    return [y, mean, inv_std]


@converts("BatchNormalization")
def batch_norm(node: Node) -> Sequence[Value]:
    if node.attr("training_mode", 0) or any(node.proto.output[1:]):
        raise NodeError("training mode is not supported (inference only)")
    x = node.input(0)
    params = [cast(node, node.input(i), element_of(x)) for i in range(1, 5)]
    return [node.emit(ml.BatchNormOp(x, *params, epsilon=node.attr("epsilon", 1e-5)))]


@converts("InstanceNormalization")
def instance_norm(node: Node) -> Sequence[Value]:
    x, scale, bias = node.input(0), node.input(1), node.input(2)
    rank = len(shape_of(x))
    normalized, _, _ = _normalize(node, x, list(range(2, rank)), node.attr("epsilon", 1e-5))
    channels = [shape_of(scale)[0], *([1] * (rank - 2))]
    scaled = node.emit(ml.MulOp(normalized, reshape_to(node, scale, channels)))
    return [node.emit(ml.AddOp(scaled, reshape_to(node, bias, channels)))]


# ---------------------------------------------------------------------------
# Transposed convolution
# ---------------------------------------------------------------------------


def _transposed_pads(node: Node, spatial: Sequence[int], kernel: Sequence[int]) -> list[int]:
    """ConvTranspose's pads (begins then ends), from `pads` or `output_shape`/`auto_pad`."""
    rank = len(kernel)
    strides = list(node.attr("strides", [1] * rank))
    dilations = list(node.attr("dilations", [1] * rank))
    extra = list(node.attr("output_padding", [0] * rank))
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape")
    if output_shape is None and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        return list(node.attr("pads", [0] * (2 * rank)))
    wanted = (
        list(output_shape)[-rank:]
        if output_shape
        else [n * s for n, s in zip(spatial, strides, strict=True)]
    )
    begins, ends = [], []
    for i in range(rank):
        total = (
            strides[i] * (spatial[i] - 1)
            + extra[i]
            + (kernel[i] - 1) * dilations[i]
            + 1
            - wanted[i]
        )
        small = total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else total - small)
        ends.append(total - begins[-1])
    return begins + ends


def _dilate(node: Node, x: SSAValue, strides: Sequence[int]) -> SSAValue:
    """`x` (N, C, H, W) with `stride - 1` zeros between neighbours along H and W."""
    n, c, h, w = shape_of(x)
    sh, sw = strides
    if sh == sw == 1:
        return x
    zero = node.scalar(0, x)
    grid = reshape_to(node, x, [n, c, h, 1, w, 1])
    for axis, s in ((3, sh), (5, sw)):
        if s > 1:
            dims = list(shape_of(grid))
            dims[axis] = s - 1
            block = node.emit(ml.BroadcastToOp(zero, TensorType(element_of(x), dims)))
            grid = node.emit(ml.ConcatOp([grid, block], axis))
    flat = reshape_to(node, grid, [n, c, h * sh, w * sw])
    return node.emit(
        ml.SliceOp(flat, [0, 0, 0, 0], [n, c, (h - 1) * sh + 1, (w - 1) * sw + 1], [1, 1, 1, 1])
    )


@converts("ConvTranspose")
def conv_transpose(node: Node) -> Sequence[Value]:
    """A convolution with stride 1 over the zero-dilated, re-padded input and flipped weights."""
    x, w = _to_2d(node, node.input(0), "input"), _to_2d(node, node.input(1), "weight")
    rank = len(shape_of(node.input(0)))
    if DYN in shape_of(x) or DYN in shape_of(w):
        raise NodeError("ConvTranspose needs static input and weight shapes")
    window = rank - 2
    kernel = list(node.attr("kernel_shape", shape_of(node.input(1))[2:]))
    strides = _pairs(list(node.attr("strides", [1] * window)), 1)
    dilations = _pairs(list(node.attr("dilations", [1] * window)), 1)
    extra = _pairs(list(node.attr("output_padding", [0] * window)), 0)
    pads = _pads_2d(_transposed_pads(node, shape_of(node.input(0))[2:], kernel))
    groups = node.attr("group", 1)
    c_in, c_out_per_group, kh, kw = shape_of(w)
    weights = reshape_to(node, w, [groups, c_in // groups, c_out_per_group, kh, kw])
    weights = node.emit(ml.TransposeOp(weights, [0, 2, 1, 3, 4]))
    weights = reshape_to(node, weights, [groups * c_out_per_group, c_in // groups, kh, kw])
    big = np.iinfo(np.int64)
    weights = node.emit(
        ml.SliceOp(weights, [0, 0, -1, -1], [big.max, big.max, big.min, big.min], [1, 1, -1, -1])
    )
    k = [(kh - 1) * dilations[0], (kw - 1) * dilations[1]]
    full = [k[0] - pads[0], k[1] - pads[1], k[0] - pads[2] + extra[0], k[1] - pads[3] + extra[1]]
    padded = _pad(node, _dilate(node, x, strides), [2, 3], full, node.scalar(0, x))
    bias = node.input(2) if node.has(2) else None
    result = node.emit(ml.Conv2dOp(padded, weights, bias, dilations=dilations, groups=groups))
    return [_from_2d(node, result, rank)]

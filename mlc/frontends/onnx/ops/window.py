"""
Sliding-window ONNX ops: Conv, ConvTranspose, MaxPool, AveragePool and the global pools.

1-D, 2-D and 3-D windows map to `ml.conv1d/2d/3d` and the pools of the same rank.
`auto_pad` and `ceil_mode` become pads. Where those depend on dynamic dims (a stride
above 1 over a `?` dim), they are computed at run time and the input is padded
explicitly (with zeros, or the lowest value for max pooling) before a window op
without pads; average pooling then divides by a pooled mask of the counted
elements instead of relying on the op's own count.
"""

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    dtype,
    is_float,
    reshape_to,
    shape_of,
    sizes,
    types_text,
)
from mlc.frontends.onnx.ops.padding import INT64_MAX, full, pad_axes, pad_constant
from mlc.frontends.onnx.ops.table import converts

CONVS: dict[int, type[ml.ConvOp]] = {1: ml.Conv1dOp, 2: ml.Conv2dOp, 3: ml.Conv3dOp}
MAX_POOLS: dict[int, type[ml.PoolOp]] = {1: ml.MaxPool1dOp, 2: ml.MaxPool2dOp, 3: ml.MaxPool3dOp}
AVG_POOLS: dict[int, type[ml.PoolOp]] = {1: ml.AvgPool1dOp, 2: ml.AvgPool2dOp, 3: ml.AvgPool3dOp}


def spatial_rank(x: SSAValue, what: str) -> int:
    """The number of spatial dims of an N, C, spatial... operand."""
    rank = len(shape_of(x))
    if rank not in (3, 4, 5):
        raise NodeError(f"only 1-D to 3-D windows are supported, got a rank-{rank} {what}")
    return rank - 2


def _kernel(node: Node, w: SSAValue) -> list[Size]:
    """The kernel's sizes: the `kernel_shape` attribute, or the weights' spatial dims."""
    return list(node.attr("kernel_shape", [])) or sizes(node, w)[2:]


def _is_static(sizes: Sequence[Size]) -> bool:
    return all(isinstance(s, int) for s in sizes)


def resolve_pads(
    node: Node,
    x: SSAValue,
    kernel: Callable[[], Sequence[Size]],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[Size]:
    """
    ONNX `pads` (begins then ends), with `auto_pad` resolved (at run time if need be).

    The input's and the kernel's sizes are read only for SAME_*, so that no unused
    `tensor.dim` is left behind.
    """
    rank = len(strides)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        return list(node.attr("pads", [0] * (2 * rank)))
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise NodeError(f"unknown auto_pad '{auto_pad}'")
    spatial = sizes(node, x)[2:]
    calc = SizeCalc(node)
    begins: list[Size] = []
    ends: list[Size] = []
    for size, k, s, d in zip(spatial, kernel(), strides, dilations, strict=True):
        # out = ceil(size / s); total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        last = calc.mul(calc.sub(calc.ceildiv(size, s), 1), s)
        extent = calc.add(calc.mul(calc.sub(k, 1), d), 1)
        total = calc.max(calc.sub(calc.add(last, extent), size), 0)
        small = calc.floordiv(total, 2)
        large = calc.sub(total, small)
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def grow_for_ceil(
    node: Node,
    spatial: Sequence[Size],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[Size],
) -> list[Size]:
    """
    End pads grown so that the floor-mode output size equals ceil mode's.

    Ceil mode rounds the window count up, except that the last window must start
    inside the input or its begin pad: `out = min(ceil((padded - extent) / s) + 1,
    floor((size + begin - 1) / s) + 1)`.
    """
    calc = SizeCalc(node)
    rank = len(kernel)
    grown = list(pads)
    for i, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dilations, strict=True)):
        extent = (k - 1) * d + 1
        padded = calc.add(size, calc.add(pads[i], pads[i + rank]))
        ceil_out = calc.add(calc.ceildiv(calc.sub(padded, extent), s), 1)
        start_limit = calc.add(calc.floordiv(calc.sub(calc.add(size, pads[i]), 1), s), 1)
        out = calc.min(ceil_out, start_limit)
        missing = calc.sub(calc.add(calc.mul(calc.sub(out, 1), s), extent), padded)
        grown[i + rank] = calc.add(pads[i + rank], calc.max(missing, 0))
    return grown


@converts("Conv")
def conv(node: Node) -> Sequence[Value]:
    x, w = node.input(0), node.input(1)
    spatial = spatial_rank(x, "input")
    strides = list(node.attr("strides", [1] * spatial))
    dilations = list(node.attr("dilations", [1] * spatial))
    pads = resolve_pads(node, x, lambda: _kernel(node, w), strides, dilations)
    if not _is_static(pads):
        x = pad_constant(node, x, list(range(2, spatial + 2)), pads, node.scalar(0, x))
        pads = [0] * (2 * spatial)
    bias = node.input(2) if node.has(2) else None
    op = CONVS[spatial](
        x,
        w,
        bias,
        strides=strides,
        dilations=dilations,
        pads=[int(p) for p in pads if isinstance(p, int)],
        groups=node.attr("group", 1),
    )
    return [node.emit(op)]


def _fits(pads: Sequence[Size], kernel: Sequence[int], dilations: Sequence[int]) -> bool:
    """Whether `ml` pooling takes these static pads: each smaller than the dilated kernel."""
    rank = len(kernel)
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    return all(max(pads[i], pads[i + rank]) < extents[i] for i in range(rank))


def lowest_value(node: Node, x: SSAValue) -> SSAValue:
    """The value padding never wins a maximum with: -inf, or the integer minimum."""
    if is_float(x):
        return node.scalar(-np.inf, x)
    return node.scalar(int(np.iinfo(dtype(x)).min), x)


def pool_window(node: Node, average: bool) -> SSAValue:
    x = node.input(0)
    spatial = spatial_rank(x, "input")
    axes = list(range(2, spatial + 2))
    kernel = list(node.attr("kernel_shape"))
    strides = list(node.attr("strides", [1] * spatial))
    dilations = list(node.attr("dilations", [1] * spatial))
    pads = resolve_pads(node, x, lambda: kernel, strides, dilations)
    window_pads = pads
    if node.attr("ceil_mode", 0):
        window_pads = grow_for_ceil(node, sizes(node, x)[2:], kernel, strides, dilations, pads)
    op = (AVG_POOLS if average else MAX_POOLS)[spatial]
    zero, no_pads = node.scalar(0, x), [0] * (2 * spatial)

    def pool(value: SSAValue, pads: Sequence[Size]) -> SSAValue:
        static = [int(p) for p in pads if isinstance(p, int)]
        return node.emit(op(value, kernel, strides=strides, dilations=dilations, pads=static))

    if average and node.attr("count_include_pad", 0):
        # The pads count: make them part of the input (ceil mode's extra end pads do not).
        calc = SizeCalc(node)
        x = pad_constant(node, x, axes, pads, zero)
        window_pads = [calc.sub(w, p) for w, p in zip(window_pads, pads, strict=True)]
    if _is_static(window_pads) and _fits(window_pads, kernel, dilations):
        return pool(x, window_pads)
    # Pads known at run time (or too large for `ml` pooling): pad, then pool without.
    if not average:
        return pool(pad_constant(node, x, axes, window_pads, lowest_value(node, x)), no_pads)
    total = pool(pad_constant(node, x, axes, window_pads, zero), no_pads)
    ones = full(node, sizes(node, x), node.scalar(1, x))
    counts = pool(pad_constant(node, ones, axes, window_pads, zero), no_pads)
    return node.emit(ml.DivOp(total, counts))


@converts("AveragePool")
def average_pool(node: Node) -> Sequence[Value]:
    return [pool_window(node, average=True)]


@converts("GlobalAveragePool", "GlobalMaxPool")
def global_pool(node: Node) -> Sequence[Value]:
    x = node.input(0)
    axes = list(range(2, len(shape_of(x))))
    op = ml.ReduceMeanOp if node.proto.op_type == "GlobalAveragePool" else ml.ReduceMaxOp
    return [node.emit(op(x, axes, keepdims=True))]


# ---------------------------------------------------------------------------
# Transposed convolution
# ---------------------------------------------------------------------------


def _transposed_pads(
    node: Node,
    x: SSAValue,
    kernel: Sequence[Size],
    strides: Sequence[int],
    dilations: Sequence[int],
    extra: Sequence[int],
) -> list[Size]:
    """ConvTranspose's pads (begins then ends), from `pads` or `output_shape`/`auto_pad`."""
    rank = len(kernel)
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape")
    if output_shape is None and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        return list(node.attr("pads", [0] * (2 * rank)))
    spatial = sizes(node, x)[2:]
    calc = SizeCalc(node)
    wanted: list[Size] = (
        list(output_shape)[-rank:]
        if output_shape
        else [calc.mul(n, s) for n, s in zip(spatial, strides, strict=True)]
    )
    begins: list[Size] = []
    ends: list[Size] = []
    for i in range(rank):
        # total = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - wanted
        span = calc.mul(calc.sub(spatial[i], 1), strides[i])
        extent = calc.add(calc.mul(calc.sub(kernel[i], 1), dilations[i]), 1)
        total = calc.sub(calc.add(calc.add(span, extra[i]), extent), wanted[i])
        small = calc.floordiv(total, 2)
        large = calc.sub(total, small)
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def _dilate(node: Node, x: SSAValue, strides: Sequence[int]) -> SSAValue:
    """`x` (N, C, spatial...) with `stride - 1` zeros between neighbours along each spatial dim."""
    calc = SizeCalc(node)
    zero = node.scalar(0, x)
    for d, s in enumerate(strides):
        if s == 1:
            continue
        axis = d + 2
        dims = sizes(node, x)
        # (..., n, ...) -> (..., n, 1, ...) ++ zeros (..., n, s - 1, ...) -> (..., n * s, ...)
        column = reshape_to(node, x, [*dims[: axis + 1], 1, *dims[axis + 1 :]])
        block = full(node, [*dims[: axis + 1], s - 1, *dims[axis + 1 :]], zero)
        grid = node.emit(ml.ConcatOp([column, block], axis + 1))
        flat = reshape_to(node, grid, [*dims[:axis], calc.mul(dims[axis], s), *dims[axis + 1 :]])
        starts, ends, steps = [0] * len(dims), [INT64_MAX] * len(dims), [1] * len(dims)
        ends[axis] = -(s - 1)  # drop the zeros after the last element
        x = node.emit(ml.SliceOp(flat, starts, ends, steps))
    return x


@converts("ConvTranspose")
def conv_transpose(node: Node) -> Sequence[Value]:
    """A convolution with stride 1 over the zero-dilated, re-padded input and flipped weights."""
    x, w = node.input(0), node.input(1)
    spatial = spatial_rank(x, "input")
    calc = SizeCalc(node)
    c_in, per_group, *window = sizes(node, w)
    kernel = list(node.attr("kernel_shape", [])) or window
    strides = list(node.attr("strides", [1] * spatial))
    dilations = list(node.attr("dilations", [1] * spatial))
    extra = list(node.attr("output_padding", [0] * spatial))
    pads = _transposed_pads(node, x, kernel, strides, dilations, extra)
    groups = node.attr("group", 1)
    if groups > 1 and not (isinstance(c_in, int) and isinstance(per_group, int)):
        # the grouped convolution's lowering splits static channel counts
        raise node.dynamic_dims(
            1, f"a grouped ConvTranspose needs static channel counts, got {types_text(w)}"
        )
    # (C, O/G, k...) -> (G, C/G, O/G, k...) -> (G, O/G, C/G, k...) -> (O, C/G, k...), flipped
    c_group = calc.floordiv(c_in, groups)
    weights = reshape_to(node, w, [groups, c_group, per_group, *window])
    weights = node.emit(ml.TransposeOp(weights, [0, 2, 1, *range(3, spatial + 3)]))
    weights = reshape_to(node, weights, [calc.mul(per_group, groups), c_group, *window])
    big = np.iinfo(np.int64)
    flip = [big.min] * spatial
    weights = node.emit(
        ml.SliceOp(
            weights, [0, 0, *([-1] * spatial)], [big.max, big.max, *flip], [1, 1, *([-1] * spatial)]
        )
    )
    # The dilated input, padded by `extent - 1 - pad` (plus output_padding at the end).
    full_pads: list[Size] = []
    for i in range(2 * spatial):
        d = i % spatial
        reach = calc.mul(calc.sub(kernel[d], 1), dilations[d])
        full_pads.append(calc.sub(calc.add(reach, extra[d] if i >= spatial else 0), pads[i]))
    axes = list(range(2, spatial + 2))
    dilated = _dilate(node, x, strides)
    if _is_static(full_pads):  # may be negative: a slice
        padded = pad_axes(node, dilated, axes, [int(p) for p in full_pads], node.scalar(0, x))
    else:
        padded = pad_constant(node, dilated, axes, full_pads, node.scalar(0, x))
    bias = node.input(2) if node.has(2) else None
    op = CONVS[spatial](padded, weights, bias, dilations=dilations, groups=groups)
    return [node.emit(op)]

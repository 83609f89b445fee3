"""
MaxPool (with its `Indices` output), LpPool and GlobalLpPool.

MaxPool without `Indices` is `window.pool_window`'s `ml.max_pool*d`. With `Indices`, the
input is padded explicitly (with the lowest value) and each kernel offset contributes a
strided slice of it, and the same slice of a tensor of flattened input indices; a chain
of strict `>` selects keeps the first maximum in window order, as onnxruntime's kernel
does (starting from the type's lowest finite value, so an all `-inf` window gives that
value and the index of the position before the window, as onnxruntime does too). The
indices count over N, C and the spatial dims, row-major (`storage_order` 0) or with the
spatial dims column-major (`storage_order` 1).

LpPool sums `|x|^p` over each zero-padded window (an average pool times the window's
volume) and takes the p-th root.

MaxUnpool scatters `X` into a zero tensor of the output's size, flattened, at the flat
`I`ndices (as MaxPool's `Indices` count them), then reshapes it: a later index landing
on the same element wins, and an index out of range is a run-time check error.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    dtype,
    int_list,
    is_float,
    product,
    reshape_to,
    shape_of,
    shape_tensor,
    sizes,
)
from mlc.frontends.onnx.ops.padding import INT64_MAX, full, pad_constant
from mlc.frontends.onnx.ops.structure import positions
from mlc.frontends.onnx.ops.table import converts
from mlc.frontends.onnx.ops.window import (
    AVG_POOLS,
    grow_for_ceil,
    lowest_value,
    pool_window,
    resolve_pads,
    spatial_rank,
)


def _window_geometry(node: Node, x: SSAValue) -> tuple[list[int], list[int], list[int], list[Size]]:
    """Kernel, strides, dilations and the pads (ceil mode's included) of a pooling node."""
    spatial = spatial_rank(x, "input")
    kernel = [int(k) for k in node.attr("kernel_shape")]
    strides = [int(s) for s in node.attr("strides", [1] * spatial)]
    dilations = [int(d) for d in node.attr("dilations", [1] * spatial)]
    pads = resolve_pads(node, x, lambda: kernel, strides, dilations)
    if node.attr("ceil_mode", 0):
        pads = grow_for_ceil(node, sizes(node, x)[2:], kernel, strides, dilations, pads)
    return kernel, strides, dilations, pads


def _offsets(kernel: Sequence[int]) -> list[tuple[int, ...]]:
    """Every kernel offset, in row-major (window) order."""
    return [tuple(int(i) for i in offset) for offset in np.ndindex(*kernel)]


def _window_slice(
    node: Node,
    x: SSAValue,
    offset: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> SSAValue:
    """
    The elements of the padded `x` at `offset` in every window: `x[..., o*d::s]` up to
    the last window's reach (`extent - 1 - o*d` before the end), whatever the sizes.
    """
    rank = len(shape_of(x))
    starts, ends, steps = [0] * rank, [INT64_MAX] * rank, [1] * rank
    for d, (o, k, s, dil) in enumerate(zip(offset, kernel, strides, dilations, strict=True)):
        before_end = (k - 1 - o) * dil
        starts[d + 2] = o * dil
        ends[d + 2] = -before_end if before_end else INT64_MAX
        steps[d + 2] = s
    return node.emit(ml.SliceOp(x, starts, ends, steps))


def _flat_indices(node: Node, x: SSAValue, column_major: bool) -> tuple[SSAValue, SSAValue]:
    """
    The flattened index of every element of `x` (i64, broadcast to `x`'s shape), and
    that of the position one before the first in each spatial dim, shaped (N, C, 1...).
    """
    dims = sizes(node, x)
    spatial = dims[2:]
    calc = SizeCalc(node)

    def times(value: SSAValue, factor: Size) -> SSAValue:
        if isinstance(factor, int) and factor == 1:
            return value
        return node.emit(ml.MulOp(value, shape_tensor(node, [factor])))

    volume: Size = 1
    for size in spatial:
        volume = calc.mul(volume, size)
    plane = times(
        node.emit(ml.AddOp(times(positions(node, x, 0), dims[1]), positions(node, x, 1))), volume
    )
    index, before = plane, plane
    order = range(len(spatial)) if column_major else reversed(range(len(spatial)))
    stride: Size = 1
    for d in order:
        index = node.emit(ml.AddOp(index, times(positions(node, x, d + 2), stride)))
        before = node.emit(ml.SubOp(before, shape_tensor(node, [stride])))
        stride = calc.mul(stride, spatial[d])
    return index, before


def _max_pool_with_indices(node: Node) -> list[Value]:
    x = node.input(0)
    storage_order = node.attr("storage_order", 0)
    if storage_order not in (0, 1):
        raise NodeError(f"storage_order must be 0 or 1, got {storage_order}")
    kernel, strides, dilations, pads = _window_geometry(node, x)
    axes = list(range(2, len(shape_of(x))))
    index, before = _flat_indices(node, x, column_major=storage_order == 1)
    padded = pad_constant(node, x, axes, pads, lowest_value(node, x))
    padded_index = pad_constant(node, index, axes, pads, node.scalar(-1, index))
    finite = float(np.finfo(dtype(x)).min) if is_float(x) else int(np.iinfo(dtype(x)).min)
    best: SSAValue = node.scalar(finite, x)
    chosen: SSAValue = before
    for offset in _offsets(kernel):
        value = _window_slice(node, padded, offset, kernel, strides, dilations)
        at = _window_slice(node, padded_index, offset, kernel, strides, dilations)
        larger = node.emit(ml.CmpOp("gt", value, best))
        best = node.emit(ml.SelectOp(larger, value, best))
        chosen = node.emit(ml.SelectOp(larger, at, chosen))
    return [best, chosen]


@converts("MaxPool")
def max_pool(node: Node) -> Sequence[Value]:
    if len(node.proto.output) > 1 and node.proto.output[1]:
        return _max_pool_with_indices(node)
    return [pool_window(node, average=False)]


def _power(node: Node, x: SSAValue, p: float) -> SSAValue:
    """`|x|^p`, with `x * x` for p = 2."""
    if p == 2:
        return node.emit(ml.MulOp(x, x))
    magnitude = node.emit(ml.AbsOp(x))
    if p == 1:
        return magnitude
    return node.emit(ml.PowOp(magnitude, node.scalar(p, x)))


def _root(node: Node, total: SSAValue, p: float) -> SSAValue:
    if p == 1:
        return total
    if p == 2:
        return node.emit(ml.SqrtOp(total))
    return node.emit(ml.PowOp(total, node.scalar(1.0 / p, total)))


def _order(node: Node, x: SSAValue) -> float:
    if not is_float(x):
        raise NodeError(f"{node.proto.op_type} takes floats only")
    p = float(node.attr("p", 2))
    if p <= 0:
        raise NodeError(f"p must be positive, got {p:g}")
    return p


@converts("LpPool")
def lp_pool(node: Node) -> Sequence[Value]:
    x = node.input(0)
    p = _order(node, x)
    kernel, strides, dilations, pads = _window_geometry(node, x)
    spatial = len(kernel)
    padded = pad_constant(
        node, _power(node, x, p), list(range(2, spatial + 2)), pads, node.scalar(0, x)
    )
    pool = AVG_POOLS[spatial](
        padded, kernel, strides=strides, dilations=dilations, pads=[0] * (2 * spatial)
    )
    mean = node.emit(pool)
    total = node.emit(ml.MulOp(mean, node.scalar(float(np.prod(kernel)), x)))
    return [_root(node, total, p)]


@converts("GlobalLpPool")
def global_lp_pool(node: Node) -> Sequence[Value]:
    x = node.input(0)
    p = _order(node, x)
    axes = list(range(2, len(shape_of(x))))
    total = node.emit(ml.ReduceSumOp(_power(node, x, p), axes, keepdims=True))
    return [_root(node, total, p)]


@converts("MaxUnpool", since=9)
def max_unpool(node: Node) -> Sequence[Value]:
    x, where = node.input(0), node.input(1)
    spatial = spatial_rank(x, "input")
    dims = sizes(node, x)
    if node.has(2):
        shape = int_list(node.const(2, "output shape"))
        if len(shape) != spatial + 2:
            raise NodeError(f"output_shape must have {spatial + 2} sizes, got {len(shape)}")
        out: list[Size] = [*dims[:2], *shape[2:]]
    else:
        kernel = [int(k) for k in node.attr("kernel_shape")]
        strides = [int(s) for s in node.attr("strides", [1] * spatial)]
        pads = [int(p) for p in node.attr("pads", [0] * (2 * spatial))]
        calc = SizeCalc(node)
        out = dims[:2]
        for d in range(spatial):
            # (in - 1) * stride + kernel - pad_begin - pad_end
            span = calc.mul(calc.sub(dims[d + 2], 1), strides[d])
            out.append(calc.sub(calc.add(span, kernel[d]), pads[d] + pads[d + spatial]))
    flat = full(node, [product(node, out)], node.scalar(0, x))
    indices = reshape_to(node, where, [product(node, sizes(node, where))])
    updates = reshape_to(node, x, [product(node, dims)])
    scattered = node.emit(ml.ScatterElementsOp(flat, indices, updates, 0))
    return [reshape_to(node, scattered, out)]

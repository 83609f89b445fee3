"""
Converters of onnx's Resize (opsets 10 to 19) and Upsample (opsets 7 to 9).

Resize is separable: resizing an N-d tensor is one 1-d resize per resized axis. With the
scales or sizes known at import and the resized axes static, the taps of each output
position along an axis (which input positions it reads, with what weight) depend only on
that axis's sizes and the node's attributes, so they are computed here, in numpy, as
constants: `taps` follows onnx's reference (coordinate transformation, nearest rounding,
linear and cubic kernels, antialiasing, exclude_outside, tf_crop_and_resize's
extrapolation). One axis then becomes `ml.gather` of the input at each tap's indices,
times the tap's weights, summed (nearest: a single gather), which the elementwise fusion
turns into one loop reading the input with `tensor.extract`, on both targets. No new `ml`
op is needed, and the per-position index and weight arithmetic, done once at import, is
cheaper than recomputing it in the loop. Along an axis whose size is known only at run
time the same taps are `ml` elementwise ops on the output positions (`resize_taps`).
Scales or sizes given at run time are reported through `Node.unknown`, so the compiled
model specialises on them.
"""

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.build import (
    cast,
    dtype,
    element_of,
    is_float,
    reshape_to,
    shape_of,
    size_along,
)
from mlc.frontends.onnx.ops.resize_taps import Resize, Taps, tap_count
from mlc.frontends.onnx.ops.table import converts

# -- the taps of one axis, in numpy --------------------------------------------------


def source_coordinates(
    r: Resize, out: int, size: int, scale: float, roi: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The input coordinate of each output position, and (tf_crop_and_resize) which
    positions fall outside the input."""
    y = np.arange(out, dtype=np.float64)
    width = scale * size
    outside = None
    if r.coordinates == "align_corners":
        x = np.zeros(out) if out == 1 else y * (size - 1) / (out - 1)
    elif r.coordinates == "asymmetric":
        x = y / scale
    elif r.coordinates == "tf_crop_and_resize":
        start, end = roi if roi is not None else (0.0, 1.0)
        if out == 1:
            x = np.full(out, (end - start) * (size - 1) / 2)
        else:
            x = y * (end - start) * (size - 1) / (out - 1)
        x = x + start * (size - 1)
        outside = (x < 0) | (x > size - 1)
    elif r.coordinates == "pytorch_half_pixel":
        x = np.zeros(out) if out == 1 else (y + 0.5) / scale - 0.5  # the spec, as onnxruntime
    elif r.coordinates == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric
        offset = size / 2 * (1 - out / width)
        x = offset + (y + 0.5) / scale - 0.5
    return x, outside


def kernel(r: Resize, ratios: np.ndarray, scale: float) -> np.ndarray:
    """The weights of each output position's taps, (out, taps), from `ratios` in (0, 1]."""
    t = ratios[:, None]
    if r.mode == "nearest":
        if r.nearest == "round_prefer_floor":
            right = t > 0.5
        elif r.nearest == "round_prefer_ceil":
            right = t >= 0.5
        elif r.nearest == "floor" or (r.nearest == "simple" and scale >= 1):
            right = np.zeros_like(t, dtype=bool)
        else:  # ceil, or simple when downscaling
            right = np.ones_like(t, dtype=bool)
        right = right | (t == 1)
        return np.concatenate([~right, right], axis=1).astype(np.float64)
    if not r.antialias or scale >= 1:
        if r.mode == "linear":
            return np.concatenate([1 - t, t], axis=1)
        a = r.cubic_a
        d = np.concatenate([t + 1, t, 1 - t, 2 - t], axis=1)
        return cubic(d, a)
    if r.mode == "linear":
        start = int(np.floor(-1 / scale) + 1)
        args = (np.arange(start, 2 - start)[None, :] - t) * scale
        weights = np.clip(1 - np.abs(args), 0, 1)
    else:
        start = int(np.floor(-2 / scale) + 1)
        args = (np.arange(start, 2 - start)[None, :] - t) * scale
        weights = cubic(np.abs(args), r.cubic_a)
    return weights / weights.sum(axis=1, keepdims=True)


def cubic(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel at distances `d` >= 0."""
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def taps(
    r: Resize, out: int, size: int, scale: float, roi: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Input indices (out, taps), their weights (out, taps) and the extrapolated
    positions (or None) of a 1-d resize from `size` to `out` (onnx's reference)."""
    x, outside = source_coordinates(r, out, size, scale, roi)
    floor = np.floor(x)
    ratios = np.where(x == floor, 1.0, x - floor)
    weights = kernel(r, ratios, scale)
    n = weights.shape[1]
    pad = math.ceil(n / 2)
    padded = x + pad
    base = np.floor(padded)
    frac = padded - base
    if n % 2 == 0:
        offset = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        offset = np.where(frac <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    indices = (base + offset).astype(np.int64)[:, None] + np.arange(n)[None, :] - pad
    if r.exclude_outside:
        weights = np.where((indices < 0) | (indices >= size), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(indices, 0, size - 1), weights, outside


# -- building the IR ---------------------------------------------------------------


def resize_axis(
    node: Node,
    r: Resize,
    x: SSAValue,
    axis: int,
    out: int,
    scale: float,
    roi: tuple[float, float] | None,
) -> SSAValue:
    """`x` resized along `axis` to `out`."""
    shape = shape_of(x)
    size = shape[axis]
    indices, weights, outside = taps(r, out, size, scale, roi)
    trailing = (1,) * (len(shape) - axis - 1)
    if r.mode == "nearest":
        chosen = indices[np.arange(out), np.argmax(weights, axis=1)]
        result = node.emit(ml.GatherOp(x, node.constant(chosen), axis))
    else:
        used = [k for k in range(weights.shape[1]) if np.any(weights[:, k] != 0)]
        element = dtype(x)
        result = None
        for k in used:
            picked = node.emit(ml.GatherOp(x, node.constant(indices[:, k].copy()), axis))
            weight = node.constant(weights[:, k].reshape((out, *trailing)).astype(element))
            term = node.emit(ml.MulOp(picked, weight))
            result = term if result is None else node.emit(ml.AddOp(result, term))
        assert result is not None
    if outside is not None and outside.any():
        mask = node.constant(outside.reshape((out, *trailing)))
        fill = node.scalar(r.extrapolation, result)
        result = node.emit(ml.SelectOp(mask, fill, result))
    return result


def resize_dynamic_axis(
    node: Node,
    r: Resize,
    x: SSAValue,
    axis: int,
    out: int | None,
    scale: float | None,
    roi: tuple[float, float] | None,
) -> SSAValue:
    """`x` resized along `axis`, whose size is known at run time (`resize_taps`)."""
    if scale is None and r.antialias:
        # the scale, which sets the number of taps, is the size over the input dim
        raise node.dynamic_dims(0, f"antialias to given sizes needs a static input dim {axis}")
    calc = Taps(node, r, size_along(node, x, axis), scale, out)
    n = tap_count(r, scale if scale is not None else 1.0)
    indices, weights, outside = calc.taps(roi, n)
    rank = len(shape_of(x))
    along = [calc.out if d == 0 else 1 for d in range(rank - axis)]
    if r.mode == "nearest":
        right = node.emit(ml.CmpOp("gt", weights[1], weights[0]))
        chosen = node.emit(ml.SelectOp(right, indices[1], indices[0]))
        result = node.emit(ml.GatherOp(x, chosen, axis))
    else:
        result = None
        for index, weight in zip(indices, weights, strict=True):
            picked = node.emit(ml.GatherOp(x, index, axis))
            term = node.emit(
                ml.MulOp(picked, reshape_to(node, cast(node, weight, element_of(x)), along))
            )
            result = term if result is None else node.emit(ml.AddOp(result, term))
        assert result is not None
    if outside is not None:
        fill = node.scalar(r.extrapolation, result)
        result = node.emit(ml.SelectOp(reshape_to(node, outside, along), fill, result))
    return result


def output_sizes(
    node: Node,
    r: Resize,
    shape: tuple[int, ...],
    scales: Sequence[float] | None,
    sizes: Sequence[int] | None,
    axes: Sequence[int],
) -> tuple[list[int | None], list[float | None]]:
    """The output size and the scale of each resized axis (None: known at run time)."""
    if sizes is not None:
        dynamic = [a for a in axes if shape[a] < 0]
        if dynamic and r.policy != "stretch":
            raise node.dynamic_dims(
                0, f"keep_aspect_ratio_policy needs static input dims {dynamic}"
            )
        # A dynamic axis's scale is out / size, known at run time (None).
        factors: list[float | None] = [
            None if shape[a] < 0 else s / shape[a] if shape[a] else 1.0
            for s, a in zip(sizes, axes, strict=True)
        ]
        outs: list[int | None] = list(sizes)
        if r.policy != "stretch":
            pick = min if r.policy == "not_larger" else max
            common = pick(f for f in factors if f is not None)
            factors = [common] * len(axes)
            outs = [int(common * shape[a] + 0.5) for a in axes]
    else:
        assert scales is not None
        factors = list(scales)
        if any(f <= 0 for f in factors):
            raise node.error(f"scales must be positive, got {factors}")
        # In f32, as onnxruntime: 1.4 * 5 is 7, not 6.99...
        # A dynamic axis's output size is known at run time (None).
        outs = [
            int(np.float32(f) * np.float32(shape[a])) if shape[a] >= 0 else None
            for f, a in zip(factors, axes)
        ]
    return outs, factors


def resize(
    node: Node,
    r: Resize,
    scales: Sequence[float] | None,
    sizes: Sequence[int] | None,
    axes: Sequence[int],
    roi: np.ndarray | None,
) -> SSAValue:
    """The node's input 0 resized along `axes` by `scales` or to `sizes` (one each)."""
    x = node.input(0)
    shape = shape_of(x)
    if r.mode != "nearest" and not is_float(x):
        raise node.error(f"mode '{r.mode}' needs a floating-point input")
    count = len(scales if scales is not None else sizes or ())
    if count != len(axes):
        raise node.error(f"expects {len(axes)} scales or sizes, got {count}")
    if len(set(axes)) != len(axes):
        raise node.error(f"repeated axes {list(axes)}")
    outs, factors = output_sizes(node, r, shape, scales, sizes, axes)
    result = x
    for i, (axis, out, scale) in enumerate(zip(axes, outs, factors, strict=True)):
        window = None
        if r.coordinates == "tf_crop_and_resize" and roi is not None:
            window = (float(roi[i]), float(roi[len(axes) + i]))
        identity = scale is not None and math.isclose(scale, 1.0)
        if window is not None:
            identity = identity and math.isclose(window[0], 0.0) and math.isclose(window[1], 1.0)
        if identity and (out == shape[axis] or shape[axis] < 0):
            continue
        if shape[axis] >= 0:
            assert out is not None and scale is not None
            result = resize_axis(node, r, result, axis, out, scale, window)
        else:
            result = resize_dynamic_axis(node, r, result, axis, out, scale, window)
    return result


def float_list(array: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(array).reshape(-1)]


def given(node: Node, i: int, what: str) -> np.ndarray | None:
    """Input `i`'s value, None if absent or empty; it must be known at import."""
    if not node.has(i):
        return None
    value = node.const(i, what)
    return value if value.size else None


@converts("Resize", since=11)
def resize_11(node: Node) -> Sequence[Value]:
    default = "half_pixel"
    r = Resize(
        node,
        node.attr("mode", "nearest"),
        node.attr("coordinate_transformation_mode", default),
        node.attr("nearest_mode", "round_prefer_floor"),
    )
    rank = node.rank(0)
    axes_attr = node.attr("axes")
    axes = [a + rank if a < 0 else a for a in axes_attr] if axes_attr else list(range(rank))
    if any(not 0 <= a < rank for a in axes):
        raise node.error(f"axes {list(axes_attr)} out of range for rank {rank}")
    scales = given(node, 2, "scales")
    sizes = given(node, 3, "sizes") if scales is None else None
    if scales is None and sizes is None:
        raise node.error("expects scales or sizes")
    roi = None
    if r.coordinates == "tf_crop_and_resize":
        roi = given(node, 1, "roi")
        if roi is None:
            raise node.error("tf_crop_and_resize expects a roi")
        if roi.size != 2 * len(axes):
            raise node.error(f"expects a roi of {2 * len(axes)} values, got {roi.size}")
    result = resize(
        node,
        r,
        float_list(scales) if scales is not None else None,
        [int(v) for v in sizes.reshape(-1)] if sizes is not None else None,
        axes,
        roi.astype(np.float64).reshape(-1) if roi is not None else None,
    )
    return [result]


def asymmetric(node: Node, scales: np.ndarray) -> Sequence[Value]:
    """Resize-10 and Upsample: asymmetric coordinates, 'simple' nearest rounding."""
    r = Resize(node, node.attr("mode", "nearest"), "asymmetric", "simple")
    rank = node.rank(0)
    return [resize(node, r, float_list(scales), None, list(range(rank)), None)]


@converts("Resize", since=10)
def resize_10(node: Node) -> Sequence[Value]:
    return asymmetric(node, node.const(1, "scales"))


@converts("Upsample", since=7)
def upsample_7(node: Node) -> Sequence[Value]:
    scales = node.attr("scales")
    if scales is None:
        raise node.error("expects a scales attribute")
    return asymmetric(node, np.asarray(scales, np.float32))


@converts("Upsample", since=9)
def upsample_9(node: Node) -> Sequence[Value]:
    return asymmetric(node, node.const(1, "scales"))

"""
The taps of a Resize along an axis whose size is known only at run time.

`resize.taps` computes an axis's taps in numpy when its sizes are static. Here the same
formulas are `ml` elementwise ops on f64 tensors of the output length (`?`): positions
`0..out-1`, their source coordinates, the kernel weights of each tap and its clamped
input index. `resize` gathers and weighs with them as in the static case.
"""

import math

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import f32, f64, i64
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node
from mlc.frontends.onnx.ops.build import Arithmetic, Size, cast, reshape, shape_tensor
from mlc.frontends.onnx.ops.structure import arange

COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


class Resize:
    """A node's Resize attributes, normalised across opsets."""

    def __init__(self, node: Node, mode: str, coordinates: str, nearest: str):
        self.mode = mode
        self.coordinates = coordinates
        self.nearest = nearest
        self.cubic_a = float(node.attr("cubic_coeff_a", -0.75))
        self.exclude_outside = bool(node.attr("exclude_outside", 0))
        self.extrapolation = float(node.attr("extrapolation_value", 0.0))
        self.antialias = bool(node.attr("antialias", 0))
        self.policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if mode not in ("nearest", "linear", "cubic"):
            raise node.error(f"unsupported mode '{mode}' (nearest, linear or cubic)")
        if coordinates not in COORDINATE_MODES:
            raise node.error(f"unsupported coordinate_transformation_mode '{coordinates}'")
        if nearest not in NEAREST_MODES:
            raise node.error(f"unsupported nearest_mode '{nearest}'")
        if self.policy not in ("stretch", "not_larger", "not_smaller"):
            raise node.error(f"unsupported keep_aspect_ratio_policy '{self.policy}'")
        if self.antialias and mode == "nearest":
            raise node.error("antialias applies to the linear and cubic modes only")


class Taps(Arithmetic):
    """Builds the elementwise arithmetic of one axis's taps at `node`."""

    def __init__(self, node: Node, r: Resize, size: Size, scale: float | None, out: Size | None):
        super().__init__(node, np.float64)
        self.r = r
        # The input size as an f64 scalar tensor, read at run time.
        self.size = reshape(node, cast(node, shape_tensor(node, [size]), f64), [])
        self.scale = scale if scale is not None else 0.0
        self.out = out if out is not None else self.out_size()
        self.out_f = reshape(node, cast(node, shape_tensor(node, [self.out]), f64), [])
        # Sizes given over a dynamic axis: the scale is out / size, at run time.
        self.ratio = self.c(scale) if scale is not None else self.div(self.out_f, self.size)

    def out_size(self) -> Size:
        """floor(scale * size), in f32 as onnxruntime."""
        product = self.node.emit(
            ml.MulOp(
                cast(self.node, self.size, f32),
                self.node.constant(np.array(self.scale, np.float32)),
            )
        )
        count = cast(self.node, product, i64)
        return self.node.emit(tensor.ExtractOp(count, [], i64))

    # -- the formulas of resize.taps -------------------------------------------

    def coordinates(self, roi) -> tuple[SSAValue, SSAValue | None]:
        y = cast(self.node, arange(self.node, self.out), f64)
        out_f = self.out_f
        one_out = self.cmp("eq", out_f, 1.0)
        # (size - 1) / (out - 1), 0 where out is 1
        span = self.div(self.sub(self.size, 1.0), self.where(one_out, 1.0, self.sub(out_f, 1.0)))
        mode, outside = self.r.coordinates, None
        if mode == "align_corners":
            x = self.mul(y, self.where(one_out, 0.0, span))
        elif mode == "asymmetric":
            x = self.div(y, self.ratio)
        elif mode == "tf_crop_and_resize":
            start, end = roi if roi is not None else (0.0, 1.0)
            middle = self.mul(self.sub(self.size, 1.0), (end - start) / 2)
            x = self.where(one_out, middle, self.mul(y, self.mul(span, float(end - start))))
            x = self.add(x, self.mul(self.sub(self.size, 1.0), float(start)))
            low = self.cmp("lt", x, 0.0)
            high = self.cmp("gt", x, self.sub(self.size, 1.0))
            outside = self.cmp("gt", self.where(low, 1.0, self.where(high, 1.0, 0.0)), 0.5)
        else:
            x = self.sub(self.div(self.add(y, 0.5), self.ratio), 0.5)
            if mode == "pytorch_half_pixel":
                x = self.where(one_out, 0.0, x)
            elif mode == "half_pixel_symmetric":
                width = self.mul(self.size, self.ratio)
                adjust = self.sub(self.c(1.0), self.div(out_f, width))
                x = self.add(x, self.mul(self.mul(self.size, 0.5), adjust))
        return x, outside

    def kernel(self, t: SSAValue, n: int) -> list[SSAValue]:
        r, scale = self.r, self.scale
        if r.mode == "nearest":
            predicates = {"round_prefer_floor": ("gt", 0.5), "round_prefer_ceil": ("ge", 0.5)}
            if r.nearest in predicates:
                predicate, at = predicates[r.nearest]
                right = self.cmp(predicate, t, at)
            else:
                floor = r.nearest == "floor" or (r.nearest == "simple" and scale >= 1)
                right = self.cmp("gt", t, 2.0 if floor else -1.0)
            right = self.where(self.cmp("eq", t, 1.0), 1.0, self.where(right, 1.0, 0.0))
            return [self.sub(self.c(1.0), right), right]
        if not r.antialias or scale >= 1:
            if r.mode == "linear":
                return [self.sub(self.c(1.0), t), t]
            d = [self.add(t, 1.0), t, self.sub(self.c(1.0), t), self.sub(self.c(2.0), t)]
            return [self.cubic(v) for v in d]
        start = int(np.floor((-1 if r.mode == "linear" else -2) / scale) + 1)
        weights = []
        for k in range(n):
            arg = self.mul(self.sub(self.c(float(start + k)), t), scale)
            distance = self.node.emit(ml.AbsOp(arg))
            if r.mode == "linear":
                w = self.node.emit(ml.MaxOp(self.sub(self.c(1.0), distance), self.c(0.0)))
            else:
                w = self.cubic(distance)
            weights.append(w)
        return self.normalised(weights)

    def normalised(self, weights: list[SSAValue]) -> list[SSAValue]:
        total = weights[0]
        for w in weights[1:]:
            total = self.add(total, w)
        total = self.where(self.cmp("eq", total, 0.0), 1.0, total)
        return [self.div(w, total) for w in weights]

    def cubic(self, d: SSAValue) -> SSAValue:
        a = self.r.cubic_a
        near = self.add(self.mul(self.mul(self.sub(self.mul(d, a + 2), a + 3), d), d), 1.0)
        far = self.sub(
            self.mul(self.add(self.mul(self.sub(self.mul(d, a), 5 * a), d), 8 * a), d), 4 * a
        )
        return self.where(
            self.cmp("le", d, 1.0), near, self.where(self.cmp("lt", d, 2.0), far, 0.0)
        )

    def taps(self, roi, n: int):
        """Per tap, its clamped i64 indices and f64 weights; the extrapolated mask."""
        x, outside = self.coordinates(roi)
        floor = self.floor(x)
        t = self.where(self.cmp("eq", x, floor), 1.0, self.sub(x, floor))
        weights = self.kernel(t, n)
        pad = math.ceil(n / 2)
        padded = self.add(x, float(pad))
        base = self.floor(padded)
        frac = self.sub(padded, base)
        if n % 2 == 0:
            low, tie = float(-(n // 2)), self.cmp("eq", frac, 0.0)
        else:
            low, tie = float(-((n - 1) // 2)), self.cmp("le", frac, 0.5)
        first = self.add(base, self.where(tie, low, low + 1))
        top = self.sub(self.size, 1.0)
        indices = []
        for k in range(n):
            index = self.add(first, float(k - pad))
            if self.r.exclude_outside:
                inside = self.where(self.cmp("lt", index, 0.0), 0.0, 1.0)
                inside = self.where(self.cmp("gt", index, top), 0.0, inside)
                weights[k] = self.mul(weights[k], inside)
            clamped = self.node.emit(ml.MinOp(self.node.emit(ml.MaxOp(index, self.c(0.0))), top))
            indices.append(cast(self.node, clamped, i64))
        if self.r.exclude_outside:
            weights = self.normalised(weights)
        return indices, weights, outside


def tap_count(r: Resize, scale: float) -> int:
    """How many taps each output position has (as resize.kernel's width)."""
    if r.mode == "nearest" or (r.mode == "linear" and (not r.antialias or scale >= 1)):
        return 2
    if not r.antialias or scale >= 1:
        return 4
    start = int(np.floor((-1 if r.mode == "linear" else -2) / scale) + 1)
    return 2 - 2 * start

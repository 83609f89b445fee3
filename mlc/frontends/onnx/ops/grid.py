"""
Converters of onnx's AffineGrid (opset 20) and GridSample (opsets 16, 20 and 22).

AffineGrid is a product: the normalised positions of the output grid, a constant
`(P, k + 1)` of homogeneous coordinates (its size input is known at import, or the
compiled model specialises on it), times each batch's transposed `theta`.

GridSample reads the input at positions that the grid gives at run time, so its taps are
computed by `ml` elementwise ops on the grid, as Resize's are along a dynamic axis
(`resize_taps`): along each spatial axis, the grid's normalised coordinate becomes an
input coordinate (`align_corners`), rounded for `nearest`, brought inside the input by
`padding_mode` (reflected for `reflection`; for `border`, clamped along every axis
where the point lies outside along any, as onnxruntime does), then split into the
axis's taps (1 nearest, 2 linear, 4 cubic), each an index and a weight. A tap of every
axis makes one point of the input: its flat index into the input laid out as
`(C, N * prod(spatial))` is gathered (`ml.gather`), weighted and summed; with
`padding_mode = zeros` a point outside the input counts 0. The input may have any number
of spatial axes (4-d and 5-d, the others where the opset allows) and dynamic dims.
"""

import itertools
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import Float64Type, f32, i64
from xdsl.ir import Attribute, SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.build import (
    Arithmetic,
    Size,
    cast,
    dtype,
    element_of,
    is_float,
    product,
    reshape,
    reshape_to,
    shape_of,
    shape_tensor,
    sizes,
)
from mlc.frontends.onnx.ops.structure import positions
from mlc.frontends.onnx.ops.table import converts

MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic"}
PADDING_MODES = ("zeros", "border", "reflection")
CUBIC_A = -0.75
# One tap along an axis: its index, its weight (None: 1), whether it is inside (None: yes).
Tap = tuple[SSAValue, SSAValue | None, SSAValue | None]

# -- AffineGrid ----------------------------------------------------------------------


def fits(dim: int, size: int) -> bool:
    """Whether a dim may be `size`: it is, or it is known only at run time."""
    return dim < 0 or dim == size


def base_grid(spatial: Sequence[int], align_corners: bool) -> np.ndarray:
    """The homogeneous normalised positions `(prod(spatial), k + 1)`: the coordinate of
    the last axis first (x, then y, then z), then 1, in row-major order of positions."""
    axes = []
    for n in spatial:
        if n <= 1:  # one position: 1 with aligned corners, else the middle (onnxruntime)
            axes.append(np.full(n, 1.0 if align_corners else 0.0))
        elif align_corners:
            axes.append(np.linspace(-1.0, 1.0, n))
        else:
            axes.append((np.arange(n) * 2.0 + 1.0) / n - 1.0)
    mesh = np.meshgrid(*axes, indexing="ij")
    columns = [m.reshape(-1) for m in reversed(mesh)]
    columns.append(np.ones(int(np.prod(spatial, dtype=np.int64))))
    return np.stack(columns, axis=1)


@converts("AffineGrid", since=20)
def affine_grid(node: Node) -> Sequence[Value]:
    theta = node.input(0)
    size = [int(v) for v in np.asarray(node.const(1, "size")).reshape(-1)]
    if len(size) not in (4, 5):
        raise node.error(f"expects a size of 4 or 5 values (N, C, ...), got {size}")
    if any(d < 0 for d in size):
        raise node.error(f"expects a size of non-negative values, got {size}")
    k = len(size) - 2
    shape = shape_of(theta)
    if len(shape) != 3 or not fits(shape[1], k) or not fits(shape[2], k + 1):
        raise node.error(f"expects theta of shape (N, {k}, {k + 1}) for size {size}")
    if shape[0] >= 0 and shape[0] != size[0]:
        raise node.error(f"theta holds {shape[0]} matrices, size asks for N = {size[0]}")
    if not is_float(theta):
        raise node.error("expects a floating-point theta")
    spatial = size[2:]
    base = base_grid(spatial, bool(node.attr("align_corners", 0)))
    base_value = node.constant(base.astype(dtype(theta)))
    transposed = node.emit(ml.TransposeOp(theta, [0, 2, 1]))  # (N, k + 1, k)
    points = node.emit(ml.MatmulOp(base_value, transposed))  # (N, P, k)
    return [reshape_to(node, points, [size[0], *spatial, k])]


# -- GridSample ----------------------------------------------------------------------


class Coordinates(Arithmetic):
    """Elementwise arithmetic on the grid's coordinates, in `element` (f32 or f64)."""

    def __init__(self, node: Node, element: Attribute):
        super().__init__(node, np.float64 if isinstance(element, Float64Type) else np.float32)
        self.element = element

    def size(self, size: Size) -> SSAValue:
        """A dim as a rank-0 tensor of the coordinates' type."""
        if isinstance(size, int):
            return self.c(float(size))
        return reshape(
            self.node, cast(self.node, shape_tensor(self.node, [size]), self.element), []
        )

    def reflect(self, x: SSAValue, low: SSAValue, high: SSAValue) -> SSAValue:
        """`x` reflected by the nearer border until inside `[low, high]` (onnx's
        `_gs_reflect`); an empty range (one position, aligned corners) gives `low`."""
        below = self.cmp("lt", x, low)
        above = self.cmp("gt", x, high)
        span = self.sub(high, low)
        safe = self.where(self.cmp("gt", span, 0.0), span, 1.0)
        dx = self.where(below, self.sub(low, x), self.sub(x, high))
        n = self.floor(self.div(dx, safe))
        r = self.sub(dx, self.mul(n, safe))
        odd = self.cmp("gt", self.sub(n, self.mul(self.floor(self.mul(n, 0.5)), 2.0)), 0.5)
        to_low = self.node.emit(ml.CmpOp("ne", below, odd))  # below xor odd
        reflected = self.where(to_low, self.add(low, r), self.sub(high, r))
        moved = self.where(self.cmp("gt", span, 0.0), reflected, low)
        return self.where(below, moved, self.where(above, moved, x))


def cubic_weights(c: Coordinates, t: SSAValue) -> list[SSAValue]:
    """Keys' cubic weights of the taps at -1, 0, 1, 2 for a fraction `t` in [0, 1)."""
    a = CUBIC_A

    def far(d: SSAValue) -> SSAValue:  # 1 <= d < 2
        return c.sub(c.mul(c.add(c.mul(c.sub(c.mul(d, a), 5 * a), d), 8 * a), d), 4 * a)

    def near(d: SSAValue) -> SSAValue:  # 0 <= d <= 1
        return c.add(c.mul(c.mul(c.sub(c.mul(d, a + 2), a + 3), d), d), 1.0)

    one_minus = c.sub(1.0, t)
    return [far(c.add(t, 1.0)), near(t), near(one_minus), far(c.sub(2.0, t))]


class Sampler:
    """One GridSample node's attributes and the taps it builds."""

    def __init__(self, node: Node):
        mode = node.attr("mode", "bilinear" if node.opset < 20 else "linear")
        if mode not in (*MODES, "nearest"):
            raise node.error(f"unsupported mode '{mode}'")
        self.mode = MODES.get(mode, "nearest")
        self.padding = node.attr("padding_mode", "zeros")
        if self.padding not in PADDING_MODES:
            raise node.error(f"unsupported padding_mode '{self.padding}'")
        self.align = bool(node.attr("align_corners", 0))
        self.node = node

    def coordinate(self, c: Coordinates, g: SSAValue, d: SSAValue) -> SSAValue:
        """The input coordinate of normalised `g` along an axis of size `d`, rounded and
        moved inside as the mode and padding say."""
        one = c.add(g, 1.0)
        if self.align:
            x = c.mul(c.mul(one, 0.5), c.sub(d, 1.0))
            low, high = c.c(0.0), c.sub(d, 1.0)
        else:
            x = c.mul(c.sub(c.mul(one, d), 1.0), 0.5)
            low, high = c.c(-0.5), c.sub(d, 0.5)
        if self.mode == "nearest":
            x = self.node.emit(ml.RoundOp(x))
        if self.padding == "reflection":
            return c.reflect(x, low, high)
        return x

    def border(self, c: Coordinates, xs: list[SSAValue], ds: list[SSAValue]) -> list[SSAValue]:
        """Border padding: where a point's coordinate lies outside the input along any
        axis, each of its coordinates is clamped into the input (as onnxruntime)."""
        outside = None
        for x, d in zip(xs, ds, strict=True):
            low, high = (c.c(0.0), c.sub(d, 1.0)) if self.align else (c.c(-0.5), c.sub(d, 0.5))
            for side in (c.cmp("lt", x, low), c.cmp("gt", x, high)):
                outside = (
                    side if outside is None else c.node.emit(ml.SelectOp(outside, outside, side))
                )
        assert outside is not None
        return [
            c.where(outside, c.clamp(x, 0.0, c.sub(d, 1.0)), x) for x, d in zip(xs, ds, strict=True)
        ]

    def taps(self, c: Coordinates, x: SSAValue, d: SSAValue) -> list[Tap]:
        """Each tap along one axis: its index (i64, inside the axis), its weight (None:
        1) and whether it lies inside the input (None: always, zeros padding only)."""
        if self.mode == "nearest":
            points = [(x, None)]
        else:
            x0 = c.floor(x)
            t = c.sub(x, x0)
            if self.mode == "linear":
                points = [(x0, c.sub(1.0, t)), (c.add(x0, 1.0), t)]
            else:
                weights = cubic_weights(c, t)
                points = [(c.add(x0, float(k - 1)), w) for k, w in enumerate(weights)]
        last = c.sub(d, 1.0)
        result = []
        for index, weight in points:
            inside = None
            if self.padding == "zeros":
                inside = self.node.emit(
                    ml.CmpOp("eq", c.cmp("ge", index, 0.0), c.cmp("le", index, last))
                )
            elif self.padding == "reflection":
                low, high = (c.c(0.0), last) if self.align else (c.c(-0.5), c.sub(d, 0.5))
                index = c.reflect(index, low, high)
            index = cast(self.node, c.clamp(index, 0.0, last), i64)
            result.append((index, weight, inside))
        return result


def int_scalar(node: Node, size: Size) -> SSAValue:
    if isinstance(size, int):
        return node.constant(np.array(size, np.int64))
    return reshape(node, shape_tensor(node, [size]), [])


def check_inputs(node: Node, s: Sampler, x: SSAValue, grid: SSAValue) -> None:
    rank = len(shape_of(x))
    k = rank - 2
    if k < 1 or len(shape_of(grid)) != rank:
        raise node.error(
            f"expects X of rank >= 3 and a grid of its rank, got ranks {rank} and "
            f"{len(shape_of(grid))}"
        )
    if node.opset < 20 and rank != 4:
        raise node.error(f"expects a 4-d input before opset 20, got rank {rank}")
    if not fits(shape_of(grid)[-1], k):
        raise node.error(f"expects the grid's last dim to be {k}, got {shape_of(grid)[-1]}")
    if s.mode != "nearest" and not is_float(x):
        raise node.error(f"mode '{s.mode}' needs a floating-point input")
    if not is_float(grid):
        raise node.error("expects a floating-point grid")


def point(
    node: Node, c: Coordinates, batch: SSAValue, taps: Sequence[Tap], strides: Sequence[Size]
) -> Tap:
    """The flat index, weight and inside-ness of the point that one tap of each axis
    makes."""
    flat, weight, inside = batch, None, None
    for (index, w, valid), stride in zip(taps, strides, strict=True):
        if stride != 1:
            index = node.emit(ml.MulOp(index, int_scalar(node, stride)))
        flat = node.emit(ml.AddOp(flat, index))
        if w is not None:
            weight = w if weight is None else c.mul(weight, w)
        if valid is not None:
            inside = valid if inside is None else node.emit(ml.SelectOp(inside, valid, inside))
    return flat, weight, inside


@converts("GridSample", since=16)
def grid_sample(node: Node) -> Sequence[Value]:
    s = Sampler(node)
    x, grid = node.input(0), node.input(1)
    check_inputs(node, s, x, grid)
    rank = len(shape_of(x))
    k = rank - 2
    element = element_of(grid)
    c = Coordinates(node, element if isinstance(element, Float64Type) else f32)
    grid = cast(node, grid, c.element)
    dims = sizes(node, x)
    # The input as (C, N * S): one gather along axis 1 reads all channels of a point.
    spatial = dims[2:]
    volume = product(node, spatial)
    perm = [1, 0, *range(2, rank)]
    data = reshape_to(
        node, node.emit(ml.TransposeOp(x, perm)), [dims[1], product(node, [dims[0], volume])]
    )
    # Per axis (x is the grid's component 0 and the input's last axis), its taps.
    xs, ds = [], []
    for axis in range(k):
        component = node.constant(np.array(k - 1 - axis, np.int64))
        g = node.emit(ml.GatherOp(grid, component, rank - 1))  # (N, *out)
        ds.append(c.size(spatial[axis]))
        xs.append(s.coordinate(c, g, ds[-1]))
    if s.padding == "border" and s.mode != "cubic":
        xs = s.border(c, xs, ds)
    axis_taps = [s.taps(c, x, d) for x, d in zip(xs, ds, strict=True)]
    # Strides of the flattened input: the batch, then each spatial axis.
    strides: list[Size] = [product(node, spatial[axis + 1 :]) for axis in range(k)]
    first = axis_taps[0][0][0]
    batch = node.emit(ml.MulOp(positions(node, first, 0), int_scalar(node, volume)))
    total = None
    zero = node.scalar(0, x)
    for taps in itertools.product(*axis_taps):
        flat, weight, inside = point(node, c, batch, taps, strides)
        term = node.emit(ml.GatherOp(data, flat, 1))  # (C, N, *out)
        if weight is not None:
            term = node.emit(ml.MulOp(term, cast(node, weight, element_of(x))))
        if inside is not None:
            term = node.emit(ml.SelectOp(inside, term, zero))
        total = term if total is None else node.emit(ml.AddOp(total, term))
    assert total is not None
    return [node.emit(ml.TransposeOp(total, perm))]

"""
DeformConv (opset 19, 2-d): a convolution whose taps are read at positions moved by a
per-output offset, bilinearly interpolated, and optionally scaled by a mask.

For each kernel tap (unrolled at import over the static kernel), the sampling position
of every output pixel is its strided, padded, dilated tap position plus the offset; its
four neighbouring input pixels are gathered (`ml.gather_elements` on the input laid out
as `(N, C, H * W)`) and weighted bilinearly, a neighbour outside the input counting 0.
The taps stacked as `(N, group, C / group * taps, pixels)` columns then meet the weights
in one batched `ml.matmul`, as an im2col convolution does.
"""

from collections.abc import Sequence

from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    cast,
    element_of,
    reshape_to,
    shape_of,
    sizes,
    types_text,
)
from mlc.frontends.onnx.ops.padding import slice_along
from mlc.frontends.onnx.ops.structure import arange
from mlc.frontends.onnx.ops.suppression import full_like, rank0
from mlc.frontends.onnx.ops.table import converts


@converts("DeformConv", since=19)
def deform_conv(node: Node) -> Sequence[Value]:
    x, w, offset = node.input(0), node.input(1), node.input(2)
    if len(shape_of(x)) != 4 or element_of(x) != f32:
        raise NodeError(f"DeformConv takes a 4-d f32 input (2-d images), got {types_text(x)}")
    out_channels, per_group, *kernel = shape_of(w)
    kernel = list(node.attr("kernel_shape", kernel))
    channels = shape_of(x)[1]
    group, offset_group = node.attr("group", 1), node.attr("offset_group", 1)
    if min(out_channels, per_group, *kernel) < 0:
        raise node.dynamic_dims(
            1, f"DeformConv needs static channels and kernel, got weights {types_text(w)}"
        )
    if channels < 0:
        raise node.dynamic_dims(0, f"DeformConv needs static channels, got {types_text(x)}")
    if channels != per_group * group or out_channels % group or channels % offset_group:
        raise NodeError(
            f"the channels of the input ({channels}), the weights ({types_text(w)}), group "
            f"({group}) and offset_group ({offset_group}) disagree"
        )
    taps = kernel[0] * kernel[1]
    n, _, h, wd = sizes(node, x)
    _, _, oh, ow = sizes(node, offset)
    calc = SizeCalc(node)
    pixels = calc.mul(oh, ow)
    pads = node.attr("pads", [0, 0, 0, 0])
    strides, dilations = node.attr("strides", [1, 1]), node.attr("dilations", [1, 1])
    rows = base_positions(node, oh, ow, strides[0], pads[0], axis=0)
    cols = base_positions(node, oh, ow, strides[1], pads[1], axis=1)
    moves = reshape_to(node, offset, [n, offset_group, taps, 2, pixels])
    mask = reshape_to(node, node.input(4), [n, offset_group, taps, pixels]) if node.has(4) else None
    image = reshape_to(node, x, [n, channels, calc.mul(h, wd)])
    samples = []
    for k in range(taps):
        i, j = divmod(k, kernel[1])
        move = slice_along(node, moves, 2, k, k + 1)
        dy = reshape_to(node, slice_along(node, move, 3, 0, 1), [n, offset_group, pixels])
        dx = reshape_to(node, slice_along(node, move, 3, 1, 2), [n, offset_group, pixels])
        y = node.emit(ml.AddOp(dy, shifted(node, rows, i * dilations[0])))
        x_ = node.emit(ml.AddOp(dx, shifted(node, cols, j * dilations[1])))
        sample = bilinear(node, image, y, x_, (h, wd), offset_group, channels)
        if mask is not None:
            scale = reshape_to(
                node, slice_along(node, mask, 2, k, k + 1), [n, offset_group, 1, pixels]
            )
            sample = node.emit(ml.MulOp(sample, scale))
        samples.append(reshape_to(node, sample, [n, channels, 1, pixels]))
    stacked = samples[0] if taps == 1 else node.emit(ml.ConcatOp(samples, 2))
    columns = reshape_to(node, stacked, [n, group, per_group * taps, pixels])
    weights = reshape_to(node, w, [group, out_channels // group, per_group * taps])
    y = node.emit(ml.MatmulOp(weights, columns))
    y = reshape_to(node, y, [n, out_channels, oh, ow])
    if node.has(3):
        y = node.emit(ml.AddOp(y, reshape_to(node, node.input(3), [1, out_channels, 1, 1])))
    return [y]


def base_positions(node: Node, oh: Size, ow: Size, stride: int, pad: int, axis: int) -> SSAValue:
    """The input row (`axis` 0) or column of each output pixel's first tap, flat, f32."""
    size = oh if axis == 0 else ow
    along = cast(node, arange(node, size), f32)
    along = node.emit(ml.MulOp(along, node.scalar(float(stride), along)))
    along = node.emit(ml.SubOp(along, node.scalar(float(pad), along)))
    grid = full_like(node, reshape_to(node, along, [oh, 1] if axis == 0 else [1, ow]), [oh, ow])
    return reshape_to(node, grid, [SizeCalc(node).mul(oh, ow)])


def shifted(node: Node, positions: SSAValue, by: int) -> SSAValue:
    if by == 0:
        return positions
    return node.emit(ml.AddOp(positions, node.scalar(float(by), positions)))


def bilinear(
    node: Node,
    image: SSAValue,
    y: SSAValue,
    x: SSAValue,
    dims: tuple[Size, Size],
    offset_group: int,
    channels: int,
) -> SSAValue:
    """`image` (N, C, H * W) read at (y, x) (N, offset_group, P): (N, offset_group,
    C / offset_group, P), zero outside."""
    h, w = dims
    n, _, pixels = sizes(node, y)
    per = channels // offset_group
    y0, x0 = node.emit(ml.FloorOp(y)), node.emit(ml.FloorOp(x))
    ly, lx = node.emit(ml.SubOp(y, y0)), node.emit(ml.SubOp(x, x0))
    one = node.scalar(1.0, y)
    hy, hx = node.emit(ml.SubOp(one, ly)), node.emit(ml.SubOp(one, lx))
    yi, xi = cast(node, y0, i64), cast(node, x0, i64)
    height, width = rank0(node, h), rank0(node, w)
    total = None
    for dy, wy in ((0, hy), (1, ly)):
        for dx, wx in ((0, hx), (1, lx)):
            yy = yi if dy == 0 else node.emit(ml.AddOp(yi, node.scalar(1, yi)))
            xx = xi if dx == 0 else node.emit(ml.AddOp(xi, node.scalar(1, xi)))
            inside = [
                node.emit(ml.CmpOp("ge", yy, node.scalar(0, yy))),
                node.emit(ml.CmpOp("lt", yy, height)),
                node.emit(ml.CmpOp("ge", xx, node.scalar(0, xx))),
                node.emit(ml.CmpOp("lt", xx, width)),
            ]
            valid = inside[0]
            for test in inside[1:]:
                valid = node.emit(ml.BitwiseAndOp(valid, test))
            weight = node.emit(ml.MulOp(wy, wx))
            weight = node.emit(ml.SelectOp(valid, weight, node.scalar(0.0, weight)))
            index = node.emit(
                ml.AddOp(node.emit(ml.MulOp(clamp(node, yy, h), width)), clamp(node, xx, w))
            )
            index = reshape_to(node, index, [n, offset_group, 1, pixels])
            index = full_like(node, index, [n, offset_group, per, pixels])
            value = node.emit(
                ml.GatherElementsOp(image, reshape_to(node, index, [n, channels, pixels]), 2)
            )
            value = reshape_to(node, value, [n, offset_group, per, pixels])
            term = node.emit(
                ml.MulOp(value, reshape_to(node, weight, [n, offset_group, 1, pixels]))
            )
            total = term if total is None else node.emit(ml.AddOp(total, term))
    assert total is not None
    return total


def clamp(node: Node, v: SSAValue, size: Size) -> SSAValue:
    """`v` brought into `[0, size - 1]`, so that the gather stays in range."""
    low = node.emit(ml.MaxOp(v, node.scalar(0, v)))
    return node.emit(ml.MinOp(low, rank0(node, SizeCalc(node).sub(size, 1))))

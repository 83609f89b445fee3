"""
CenterCropPad and Col2Im.

CenterCropPad: each listed axis cropped or zero-padded to its target size, centred.

Both take `|size - target| // 2` at the begin and the rest at the end. A static dim is
sliced or padded as it needs; a dim known only at run time is first padded by
`max(target - size, 0)` then sliced by `max(size - target, 0)`, both split that way, so
one of the two is empty.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType, i64

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    SizeCalc,
    int_list,
    reshape_to,
    shape_of,
    shape_tensor,
    size_along,
    sizes,
    static_or_dynamic,
)
from mlc.frontends.onnx.ops.padding import full, pad_axes, pad_constant, slice_at_run_time
from mlc.frontends.onnx.ops.table import converts
from mlc.shapes import DYNAMIC


@converts("CenterCropPad", since=18)
def center_crop_pad(node: Node) -> Sequence[Value]:
    x = node.input(0)
    rank = len(shape_of(x))
    targets = int_list(node.const(1, "shape"))
    axes = [a + rank if a < 0 else a for a in node.attr("axes", range(rank))]
    if len(targets) != len(axes) or any(not 0 <= a < rank for a in axes):
        raise NodeError(f"shape has {len(targets)} sizes for axes {axes} of a rank-{rank} input")
    if any(t < 0 for t in targets):
        raise NodeError(f"shape must not be negative, got {targets}")
    zero = node.scalar(0, x)
    calc = SizeCalc(node)
    for axis, target in zip(axes, targets, strict=True):
        size = size_along(node, x, axis)
        if isinstance(size, int):
            begin = abs(size - target) // 2
            if size > target:
                x = pad_axes(node, x, [axis], [-begin, target + begin - size], zero)
            elif size < target:
                x = pad_axes(node, x, [axis], [begin, target - size - begin], zero)
            continue
        grow = calc.max(calc.sub(target, size), 0)
        before = calc.floordiv(grow, 2)
        x = pad_constant(node, x, [axis], [before, calc.sub(grow, before)], zero)
        start = calc.floordiv(calc.max(calc.sub(size, target), 0), 2)
        x = slice_at_run_time(node, x, axis, start, calc.add(start, target))
        dims = sizes(node, x)
        dims[axis] = target
        x = reshape_to(node, x, dims)
    return [x]


@converts("Col2Im", since=18)
def col_to_im(node: Node) -> Sequence[Value]:
    """
    Col2Im (torch's `fold`): column `c * K + b` of `x`, for kernel offset `b` of `K`, adds
    each of its `L` blocks into the padded image at a flat position known at import; a
    `scatter_elements` with `add` sums them, then the pads are sliced off.
    """
    x = node.input(0)
    image = int_list(node.const(1, "image shape"))
    block = int_list(node.const(2, "block shape"))
    spatial = len(image)
    if len(block) != spatial or len(shape_of(x)) != 3:
        raise NodeError("Col2Im takes an (N, C * prod(block), L) input and matching shapes")
    dilations = list(node.attr("dilations", [1] * spatial))
    strides = list(node.attr("strides", [1] * spatial))
    pads = list(node.attr("pads", [0] * (2 * spatial)))
    padded = [image[d] + pads[d] + pads[d + spatial] for d in range(spatial)]
    counts = [
        (padded[d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(spatial)
    ]
    kernel, blocks = int(np.prod(block)), int(np.prod(counts))
    if min(counts) <= 0 or shape_of(x)[2] not in (blocks, DYNAMIC):
        raise NodeError(f"Col2Im's input has {shape_of(x)[2]} blocks, the shapes give {blocks}")
    offsets = np.indices(block).reshape(spatial, kernel, 1)
    starts = np.indices(counts).reshape(spatial, 1, blocks)
    where = [offsets[d] * dilations[d] + starts[d] * strides[d] for d in range(spatial)]
    flat = np.ravel_multi_index(where, padded).reshape(1, 1, kernel * blocks).astype(np.int64)
    n, channels_blocks, _ = sizes(node, x)
    calc = SizeCalc(node)
    channels = calc.floordiv(channels_blocks, kernel)
    updates = reshape_to(node, x, [n, channels, kernel * blocks])
    index_type = TensorType(i64, static_or_dynamic([n, channels, kernel * blocks]))
    shape = shape_tensor(node, [n, channels, kernel * blocks])
    indices = node.emit(ml.BroadcastToOp(node.constant(flat), index_type, shape))
    zeros = full(node, [n, channels, int(np.prod(padded))], node.scalar(0, x))
    summed = node.emit(ml.ScatterElementsOp(zeros, indices, updates, 2, "add"))
    result = reshape_to(node, summed, [n, channels, *padded])
    if any(pads):
        crop = [-p for p in pads]
        result = pad_axes(node, result, list(range(2, spatial + 2)), crop, node.scalar(0, x))
    return [result]

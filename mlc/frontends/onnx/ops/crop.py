"""
CenterCropPad: each listed axis cropped or zero-padded to its target size, centred.

Both take `|size - target| // 2` at the begin and the rest at the end. A static dim is
sliced or padded as it needs; a dim known only at run time is first padded by
`max(target - size, 0)` then sliced by `max(size - target, 0)`, both split that way, so
one of the two is empty.
"""

from collections.abc import Sequence

from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    SizeCalc,
    int_list,
    reshape_to,
    shape_of,
    size_along,
    sizes,
)
from mlc.frontends.onnx.ops.padding import pad_axes, pad_constant, slice_at_run_time
from mlc.frontends.onnx.ops.table import converts


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

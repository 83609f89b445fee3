"""
ONNX Pad: `padding.pad_axes` by pads known at import, in any mode; a constant pad by pads
known only at run time (computed from dynamic dims, or a graph input) crops and pads by
sizes read at run time, so it needs no variant per value set.
"""

from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc import shapes
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    cast,
    element,
    element_of,
    int_list,
    shape_of,
    size_along,
)
from mlc.frontends.onnx.ops.padding import pad_axes, pad_constant, slice_at_run_time
from mlc.frontends.onnx.ops.table import converts

DYN = shapes.DYNAMIC


@converts("Pad", since=11)
def pad(node: Node) -> Sequence[Value]:
    mode = _pad_mode(node)
    x = node.input(0)
    rank = len(shape_of(x))
    axes = list(range(rank))
    if node.has(3):
        axes = [shapes.normalize_axis(a, rank) for a in int_list(node.const(3, "axes"))]
    if node.has(2):
        value = node.input(2)
    else:
        value = node.scalar(0, x)
    if node.known(1) is None and mode == "constant":
        return [_pad_at_run_time(node, x, axes, value)]
    pads = int_list(node.const(1, "pads"))
    return [pad_axes(node, x, axes, pads, value, mode)]


def _pad_at_run_time(node: Node, x: SSAValue, axes: list[int], value: SSAValue) -> SSAValue:
    """
    A constant pad by pads read at run time (CenterCropPad's function body computes them
    from dynamic dims): a negative pad crops, each crop clamped into the dim, then the
    positive ones are blocks of `value`. The result's padded dims are `?`.
    """
    if node.shape(1) not in ((2 * len(axes),), (DYN,)):
        raise node.error(f"expected {2 * len(axes)} pads, got shape {list(node.shape(1))}")
    calc = SizeCalc(node)
    pads = node.input(1)
    grow: list[Size] = []
    for k, axis in enumerate(axes):
        before, after = (element(node, pads, i) for i in (k, k + len(axes)))
        dim = size_along(node, x, axis)
        start = calc.min(calc.max(calc.sub(0, before), 0), dim)
        end = calc.max(calc.sub(dim, calc.max(calc.sub(0, after), 0)), start)
        x = slice_at_run_time(node, x, axis, start, end)
        grow += [calc.max(before, 0), calc.max(after, 0)]
    order = grow[0::2] + grow[1::2]  # begins, then ends
    return pad_constant(node, x, axes, order, cast(node, value, element_of(x)))


@converts("Pad", since=2)
def pad_attributes(node: Node) -> Sequence[Value]:
    mode = _pad_mode(node)
    x = node.input(0)
    axes = list(range(len(shape_of(x))))
    value = node.scalar(node.attr("value", 0.0), x)
    return [pad_axes(node, x, axes, list(node.attr("pads")), value, mode)]


def _pad_mode(node: Node) -> str:
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise NodeError(f"unknown pad mode '{mode}'")
    return mode

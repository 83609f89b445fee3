"""
Slices and pads along an axis: the pieces Split, Tile, Pad, the windows and reductions cut
and grow tensors with.

A pad is a concatenation of blocks (of a fill value, or slices of the input for the
`edge`, `reflect` and `wrap` modes); a negative pad is a slice. Sizes may be known only
at run time (`Size`), as where pads follow from dynamic dims.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    cast,
    element_of,
    shape_of,
    shape_tensor,
    sizes,
    static_or_dynamic,
)
from mlc.shapes import DYNAMIC

INT64_MAX = np.iinfo(np.int64).max  # a slice end past every dim: "to the end"


def slice_along(
    node: Node, x: SSAValue, axis: int, start: int, end: int, step: int = 1
) -> SSAValue:
    """`x[..., start:end:step, ...]` along `axis`, with Python's slice semantics."""
    rank = len(shape_of(x))
    starts, ends, steps = [0] * rank, [INT64_MAX] * rank, [1] * rank
    starts[axis], ends[axis], steps[axis] = start, end, step
    return node.emit(ml.SliceOp(x, starts, ends, steps))


def slice_at_run_time(
    node: Node, x: SSAValue, axis: int, start: Size, end: Size, step: int = 1
) -> SSAValue:
    """
    `x[..., start:end:step, ...]` along `axis` for bounds in `[0, dim]` known at run
    time, `start <= end`, and a positive `step`.
    """
    calc = SizeCalc(node)
    dims = sizes(node, x)
    offsets: list[Size] = [0] * len(dims)
    strides = [1] * len(dims)
    offsets[axis], dims[axis] = start, calc.ceildiv(calc.sub(end, start), step)
    strides[axis] = step
    extract = tensor.ExtractSliceOp(
        x,
        [index_of(node, o) for o in offsets],
        [index_of(node, d) for d in dims],
        strides,
        TensorType(element_of(x), static_or_dynamic(dims)),
    )
    return node.emit(extract)


def index_of(node: Node, size: Size) -> SSAValue | int:
    """A size as `tensor` ops take it: a static int, or an `index` value."""
    if isinstance(size, int):
        return size
    return node.emit(arith.IndexCastOp(size, IndexType()))


def pad_axes(
    node: Node,
    x: SSAValue,
    axes: list[int],
    pads: list[int],
    value: SSAValue,
    mode: str = "constant",
) -> SSAValue:
    """
    `x` padded along `axes` by static pads (begins, then ends) in an ONNX pad `mode`.

    Pads concatenate blocks: of `value`, or slices of `x`; negative pads slice.
    """
    if len(pads) != 2 * len(axes):
        raise NodeError(f"expected {2 * len(axes)} pads, got {len(pads)}")
    result = x
    for i, axis in enumerate(axes):
        before, after = pads[i], pads[i + len(axes)]
        dims = shape_of(result)
        start = -before if before < 0 else 0
        end = dims[axis] + after if after < 0 and dims[axis] != DYNAMIC else INT64_MAX
        if after < 0 and dims[axis] == DYNAMIC:
            end = after
        if before < 0 or after < 0:
            result = slice_along(node, result, axis, start, end)
        parts = [result]
        if before > 0:
            block = _block(node, result, axis, before, value) if mode == "constant" else None
            parts.insert(0, block or _border(node, result, axis, before, mode, at_end=False))
        if after > 0:
            block = _block(node, result, axis, after, value) if mode == "constant" else None
            parts.append(block or _border(node, result, axis, after, mode, at_end=True))
        if len(parts) > 1:
            result = node.emit(ml.ConcatOp(parts, axis))
    return result


def _border(node: Node, x: SSAValue, axis: int, size: int, mode: str, at_end: bool) -> SSAValue:
    """`size` elements along `axis` for an `edge`, `reflect` or `wrap` pad of `x`."""
    if mode == "edge":
        start, end = (-1, INT64_MAX) if at_end else (0, 1)
        edge = slice_along(node, x, axis, start, end)
        return edge if size == 1 else node.emit(ml.ConcatOp([edge] * size, axis))
    if mode == "reflect":
        if at_end:
            return slice_along(node, x, axis, -2, -2 - size, -1)
        return slice_along(node, x, axis, size, 0, -1)
    start, end = (0, size) if at_end else (-size, INT64_MAX)  # wrap
    return slice_along(node, x, axis, start, end)


def pad_constant(
    node: Node, x: SSAValue, axes: Sequence[int], pads: Sequence[Size], value: SSAValue
) -> SSAValue:
    """`x` padded along `axes` by non-negative sizes (begins, then ends) of `value`.

    A size may be known only at run time (pads computed from dynamic dims).
    """
    result = x
    for i, axis in enumerate(axes):
        before, after = pads[i], pads[i + len(axes)]
        parts = [result]
        if not (isinstance(before, int) and before == 0):
            parts.insert(0, _block(node, result, axis, before, value))
        if not (isinstance(after, int) and after == 0):
            parts.append(_block(node, result, axis, after, value))
        if len(parts) > 1:
            result = node.emit(ml.ConcatOp(parts, axis))
    return result


def _block(node: Node, like: SSAValue, axis: int, size: Size, value: SSAValue) -> SSAValue:
    """A block of `value` shaped like `like` but `size` long along `axis`."""
    dims = sizes(node, like)
    dims[axis] = size
    return full(node, dims, cast(node, value, element_of(like)))


def full(node: Node, dims: Sequence[Size], value: SSAValue) -> SSAValue:
    """A tensor of `dims` (static, or known at run time) holding the scalar `value`."""
    result = TensorType(element_of(value), static_or_dynamic(dims))
    if all(isinstance(d, int) for d in dims):
        return node.emit(ml.BroadcastToOp(value, result))
    return node.emit(ml.BroadcastToOp(value, result, shape_tensor(node, dims)))

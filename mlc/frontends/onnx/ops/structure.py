"""
Structural ONNX ops: index reductions, scans, masks, one-hot, ranges, depth <-> space.

ArgMax/ArgMin and CumSum map to `ml.argmax` / `ml.argmin` / `ml.cumsum`; the others
are composed of `ml` ops at import. Positions along an axis (`arange`) are a constant
where the size is static and an exclusive `ml.cumsum` of ones where it is known only
at run time, so Trilu, EyeLike, OneHot and Hardmax take dynamic dims. Inputs that fix
a shape or a mask (CumSum's axis, Trilu's k, OneHot's depth, Range's bounds) must be
known at import time.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.onnx import types
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    cast,
    element_of,
    product,
    reshape_to,
    shape_of,
    shape_tensor,
    size_along,
    sizes,
    types_text,
)
from mlc.frontends.onnx.ops.padding import slice_along
from mlc.frontends.onnx.ops.table import converts

DYN = shapes.DYNAMIC


def arange(node: Node, size: Size) -> SSAValue:
    """`[0, 1, ..., size - 1]` as i64: a constant, or an exclusive cumsum of ones."""
    if isinstance(size, int):
        return node.constant(np.arange(size, dtype=np.int64))
    one = node.constant(np.array(1, dtype=np.int64))
    ones = node.emit(ml.BroadcastToOp(one, TensorType(i64, [DYN]), shape_tensor(node, [size])))
    return node.emit(ml.CumSumOp(ones, 0, exclusive=True))


def positions(node: Node, x: SSAValue, axis: int) -> SSAValue:
    """The index along `axis` of `x`, shaped to broadcast against `x` (1 elsewhere)."""
    rank = len(shape_of(x))
    size = size_along(node, x, axis)
    return reshape_to(node, arange(node, size), [size if d == axis else 1 for d in range(rank)])


def scalar_input(node: Node, i: int, what: str) -> int:
    return int(np.asarray(node.const(i, what)).reshape(-1)[0])


# ---------------------------------------------------------------------------
# Index reductions and scans
# ---------------------------------------------------------------------------


@converts("ArgMax", "ArgMin")
def arg_reduce(node: Node) -> Sequence[Value]:
    x = node.input(0)
    op = ml.ArgMaxOp if node.proto.op_type == "ArgMax" else ml.ArgMinOp
    keepdims = bool(node.attr("keepdims", 1))
    last = bool(node.attr("select_last_index", 0))
    return [node.emit(op(x, node.attr("axis", 0), keepdims, last))]


@converts("CumSum", since=11)
def cumsum(node: Node) -> Sequence[Value]:
    x = node.input(0)
    axis = shapes.normalize_axis(scalar_input(node, 1, "axis"), len(shape_of(x)))
    exclusive, reverse = bool(node.attr("exclusive", 0)), bool(node.attr("reverse", 0))
    return [node.emit(ml.CumSumOp(x, axis, exclusive, reverse))]


@converts("Hardmax", since=13)
def hardmax(node: Node) -> Sequence[Value]:
    return [_hardmax_along(node, node.input(0), node.attr("axis", -1))]


@converts("Hardmax", since=1)
def hardmax_coerced(node: Node) -> Sequence[Value]:
    """Before opset 13: over all dims from `axis` on, as a 2-D (outer, inner) matrix."""
    x = node.input(0)
    axis = shapes.normalize_axis(node.attr("axis", 1), len(shape_of(x)))
    current = sizes(node, x)
    flat = reshape_to(node, x, [product(node, current[:axis]), product(node, current[axis:])])
    return [reshape_to(node, _hardmax_along(node, flat, 1), current)]


def _hardmax_along(node: Node, x: SSAValue, axis: int) -> SSAValue:
    """1 at the first largest element along `axis`, 0 elsewhere."""
    axis = shapes.normalize_axis(axis, len(shape_of(x)))
    best = node.emit(ml.ArgMaxOp(x, axis, keepdims=True))
    hit = node.emit(ml.CmpOp("eq", positions(node, x, axis), best))
    return node.emit(ml.CastOp(hit, TensorType(element_of(x), shape_of(x))))


# ---------------------------------------------------------------------------
# Masks, one-hot, ranges
# ---------------------------------------------------------------------------


def _diagonal_offsets(node: Node, rows: Size, cols: Size) -> SSAValue:
    """`j - i` over a (rows, cols) grid, as i64."""
    i = reshape_to(node, arange(node, rows), [rows, 1])
    return node.emit(ml.SubOp(arange(node, cols), i))


@converts("Trilu", since=14)
def trilu(node: Node) -> Sequence[Value]:
    x = node.input(0)
    if len(shape_of(x)) < 2:
        raise NodeError(f"Trilu needs an input of rank >= 2, got rank {len(shape_of(x))}")
    k = scalar_input(node, 1, "diagonal offset k") if node.has(1) else 0
    dims = sizes(node, x)
    offsets = _diagonal_offsets(node, dims[-2], dims[-1])
    keep = node.emit(
        ml.CmpOp("ge" if node.attr("upper", 1) else "le", offsets, node.scalar(k, offsets))
    )
    return [node.emit(ml.SelectOp(keep, x, node.scalar(0, x)))]


@converts("EyeLike", since=9)
def eye_like(node: Node) -> Sequence[Value]:
    like = node.type(0)
    if like.get_num_dims() != 2:
        raise NodeError(f"EyeLike needs a 2-D input, got rank {like.get_num_dims()}")
    dtype = node.attr("dtype")
    element = types.element_type(dtype) if dtype is not None else like.element_type  # pyright: ignore[reportUnknownMemberType]
    k = node.attr("k", 0)
    rows, cols = like.get_shape()
    if rows != DYN and cols != DYN:
        return [np.eye(rows, cols, k, dtype=types.dtype_of(element))]  # pyright: ignore[reportUnknownArgumentType]
    dims = sizes(node, node.input(0))
    offsets = _diagonal_offsets(node, dims[0], dims[1])
    on = node.emit(ml.CmpOp("eq", offsets, node.scalar(k, offsets)))
    return [node.emit(ml.CastOp(on, TensorType(element, shape_of(on))))]  # pyright: ignore[reportUnknownArgumentType]


@converts("OneHot", since=9)
def one_hot(node: Node) -> Sequence[Value]:
    indices = node.input(0)
    depth = scalar_input(node, 1, "depth")
    rank = len(shape_of(indices)) + 1
    axis = shapes.normalize_axis(node.attr("axis", -1), rank)
    index = (
        indices
        if element_of(indices) == i64
        else node.emit(ml.CastOp(indices, TensorType(i64, shape_of(indices))))
    )
    # Negative indices count from the end; any other index out of range is all "off".
    negative = node.emit(ml.CmpOp("lt", index, node.scalar(0, index)))
    wrapped = node.emit(ml.AddOp(index, node.scalar(depth, index)))
    index = node.emit(ml.SelectOp(negative, wrapped, index))
    dims = sizes(node, indices)
    dims.insert(axis, 1)
    classes = reshape_to(
        node, arange(node, depth), [depth if d == axis else 1 for d in range(rank)]
    )
    hit = node.emit(ml.CmpOp("eq", reshape_to(node, index, dims), classes))
    values = node.input(2)
    off, on = (reshape_to(node, slice_along(node, values, 0, i, i + 1), []) for i in (0, 1))
    return [node.emit(ml.SelectOp(hit, on, off))]


@converts("Range", since=11)
def range_(node: Node) -> Sequence[Value]:
    known = [node.known(i) for i in range(3)]
    if all(v is not None for v in known):
        start, limit, delta = (np.asarray(v).reshape(()) for v in known)  # pyright: ignore[reportArgumentType]
        count = max(int(np.ceil((limit - start) / delta)), 0)
        return [(start + np.arange(count) * delta).astype(start.dtype)]
    # Start and delta, and a float limit, decide the length in ways a run-time count
    # does not follow: they are needed now (a graph input's value is then bound).
    for i, what in ((0, "start"), (2, "delta")):
        if known[i] is None:
            raise node.unknown(i, what, "; only an integer limit may be known at run time")
    start, delta = known[0], known[2]
    assert start is not None and delta is not None
    if not np.issubdtype(start.dtype, np.integer):
        raise node.unknown(1, "limit", "; only an integer limit may be known at run time")
    return [_range_to_run_time_limit(node, int(start), int(delta))]


def _range_to_run_time_limit(node: Node, start: int, delta: int) -> SSAValue:
    """`start + delta * arange(max(ceil((limit - start) / delta), 0))`, integer bounds."""
    if delta == 0:
        raise NodeError("Range's delta must not be 0")
    limit = cast(node, node.input(1), i64)
    if any(d != 1 for d in shape_of(limit)):
        raise NodeError(f"Range's limit must be a scalar, got {types_text(limit)}")
    # A one-element tensor (AffineGrid's function body slices its sizes so) as a scalar.
    limit = reshape_to(node, limit, [])
    span = node.emit(ml.SubOp(limit, node.scalar(start, limit)))
    if delta < 0:
        span, step = node.emit(ml.NegOp(span)), -delta
    else:
        step = delta
    calc = SizeCalc(node)
    raw = node.emit(tensor.ExtractOp(span, [], i64))
    count = calc.max(calc.ceildiv(raw, step), 0)
    steps = arange(node, count)
    result = node.emit(
        ml.AddOp(node.emit(ml.MulOp(steps, node.scalar(delta, steps))), node.scalar(start, steps))
    )
    return cast(node, result, element_of(node.input(0)))


# ---------------------------------------------------------------------------
# Depth <-> space
# ---------------------------------------------------------------------------


@converts("DepthToSpace")
def depth_to_space(node: Node) -> Sequence[Value]:
    x = node.input(0)
    b = node.attr("blocksize")
    n, c, h, w = _nchw(node, x)
    if isinstance(c, int) and c % (b * b):
        raise NodeError(f"the channels ({c}) are not a multiple of blocksize^2 ({b * b})")
    # A dynamic channel count follows from the element count (one -1 in the reshape).
    depth = c // (b * b) if isinstance(c, int) else DYN
    calc = SizeCalc(node)
    if node.attr("mode", "DCR") == "DCR":
        split = reshape_to(node, x, [n, b, b, depth, h, w])
        moved = node.emit(ml.TransposeOp(split, [0, 3, 4, 1, 5, 2]))
    else:
        split = reshape_to(node, x, [n, depth, b, b, h, w])
        moved = node.emit(ml.TransposeOp(split, [0, 1, 4, 2, 5, 3]))
    return [reshape_to(node, moved, [n, depth, calc.mul(h, b), calc.mul(w, b)])]


@converts("SpaceToDepth")
def space_to_depth(node: Node) -> Sequence[Value]:
    x = node.input(0)
    b = node.attr("blocksize")
    n, c, h, w = _nchw(node, x)
    calc = SizeCalc(node)
    hb, wb = calc.floordiv(h, b), calc.floordiv(w, b)
    split = reshape_to(node, x, [n, c, hb, b, wb, b])
    mode = node.attr("mode", "DCR")  # an attribute since opset 28
    if mode not in ("DCR", "CRD"):
        raise NodeError(f"unknown SpaceToDepth mode '{mode}'")
    # DCR: the block offset is the outer part of the new channel; CRD: the inner one.
    order = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    moved = node.emit(ml.TransposeOp(split, order))
    return [reshape_to(node, moved, [n, calc.mul(c, b * b), hb, wb])]


def _nchw(node: Node, x: SSAValue) -> list[Size]:
    if len(shape_of(x)) != 4:
        raise NodeError(f"expected a 4-D (N, C, H, W) input, got rank {len(shape_of(x))}")
    return sizes(node, x)

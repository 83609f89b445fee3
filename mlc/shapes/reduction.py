"""Reductions and normalisations: reduce_*, softmax, layer_norm and batch_norm."""

from collections.abc import Sequence

from mlc.shapes.broadcasting import broadcast, broadcast_to
from mlc.shapes.dims import (
    Shape,
    ShapeError,
    format_dim,
    format_shape,
    join_dims,
    normalize_axes,
    normalize_axis,
)


def reduce(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> Shape:
    """Reduce the listed axes (none listed: nothing is reduced, as numpy's axis=())."""
    reduced = set(normalize_axes(axes, len(shape)))
    if keepdims:
        return tuple(1 if i in reduced else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in reduced)


def softmax(shape: Sequence[int], axis: int) -> Shape:
    if not shape:
        raise ShapeError("expects an operand of rank >= 1")
    normalize_axis(axis, len(shape))
    return tuple(shape)


def layer_norm(shape: Sequence[int], scale: Sequence[int], bias: Sequence[int], axis: int) -> Shape:
    """Normalise over dims axis..rank-1; scale and bias broadcast to those dims."""
    if not shape:
        raise ShapeError("expects an operand of rank >= 1")
    axis = normalize_axis(axis, len(shape))
    normalized = shape[axis:]
    for name, param in (("scale", scale), ("bias", bias)):
        try:
            broadcast_to(param, normalized)
        except ShapeError:
            raise ShapeError(
                f"{name} shape ({format_shape(param)}) does not broadcast to the "
                f"normalized shape ({format_shape(normalized)})"
            ) from None
    try:
        # Where the normalized shape is dynamic, scale and bias must still agree.
        broadcast(scale, bias)
    except ShapeError:
        raise ShapeError(
            f"scale shape ({format_shape(scale)}) and bias shape ({format_shape(bias)}) "
            "do not broadcast to one normalized shape"
        ) from None
    return tuple(shape)


def batch_norm(shape: Sequence[int], *params: Sequence[int]) -> Shape:
    """Inference batch norm: channel dim 1; scale, bias, mean and var are (C,)."""
    if len(shape) < 2:
        raise ShapeError(f"expects an input of rank >= 2 (N, C, ...), got rank {len(shape)}")
    names = ("scale", "bias", "mean", "var")
    # The sizes must agree with each other too, where the channel dimension is dynamic.
    channel, source = shape[1], "the channel dimension"
    for name, param in zip(names, params, strict=True):
        if len(param) != 1:
            raise ShapeError(f"expects {name} of rank 1, got rank {len(param)}")
        joined = join_dims(
            channel,
            param[0],
            f"{name} size ({param[0]}) does not match {source} ({format_dim(channel)})",
        )
        if joined != channel:
            channel, source = joined, f"the {name} size"
    return tuple(shape)


def arg_reduce(shape: Sequence[int], axis: int, keepdims: bool) -> Shape:
    """argmax / argmin: one index per position of the other dims; the axis must not be empty."""
    if not shape:
        raise ShapeError("expects an operand of rank >= 1")
    axis = normalize_axis(axis, len(shape))
    if shape[axis] == 0:
        raise ShapeError(f"expects a non-empty dim {axis} to take the index of, got size 0")
    return reduce(shape, [axis], keepdims)


def scan(shape: Sequence[int], axis: int) -> Shape:
    """cumsum: the operand's shape, `axis` one of its dims."""
    if not shape:
        raise ShapeError("expects an operand of rank >= 1")
    normalize_axis(axis, len(shape))
    return tuple(shape)

"""
Dimensions and shapes: `DYNAMIC`, `ShapeError`, printing, axes, and dims that must agree.

The vocabulary every shape rule of the package is written in. A shape is a tuple of
ints; a dynamic dimension is `DYNAMIC` (xDSL's `DYNAMIC_INDEX`, the value MLIR prints
as `?`).
"""

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import DYNAMIC_INDEX

DYNAMIC = DYNAMIC_INDEX

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """A statically provable shape violation; the message is user-facing."""


def is_static(dim: int) -> bool:
    return dim != DYNAMIC


def format_shape(shape: Sequence[int]) -> str:
    """Print a shape as MLIR does inside a tensor type: `2x?x4`, or `scalar`."""
    if not shape:
        return "scalar"
    return "x".join(str(d) if is_static(d) else "?" for d in shape)


def format_dim(dim: int) -> str:
    return str(dim) if is_static(dim) else "?"


def num_elements(shape: Sequence[int]) -> int | None:
    """The element count, or None when a dimension is dynamic."""
    if not all(is_static(d) for d in shape):
        return None
    return prod(shape)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Map a possibly negative axis into `[0, rank)`, as numpy does."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    normalized = tuple(normalize_axis(a, rank) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"axes {list(axes)} name a dimension twice")
    return normalized


def join_dims(a: int, b: int, what: str) -> int:
    """The dimension two dims that must be equal share; an error if they differ."""
    if not is_static(a):
        return b
    if is_static(b) and a != b:
        raise ShapeError(what)
    return a

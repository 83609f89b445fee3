"""Numpy broadcasting: of two dims, of several shapes, and of a shape to a target."""

from collections.abc import Sequence

from mlc.shapes.dims import Shape, ShapeError, format_shape, is_static


def broadcast_dims(a: int, b: int) -> int:
    """The numpy broadcast of two dimensions, or ShapeError when they conflict."""
    if a == 1:
        return b
    if b == 1:
        return a
    if not is_static(a):
        return b  # b is static N > 1 (a must be 1 or N at run time, so the result is N) or ?
    if not is_static(b):
        return a
    if a != b:
        raise ShapeError(f"dimensions {a} and {b} are not broadcast-compatible")
    return a


def broadcast(*shapes: Sequence[int]) -> Shape:
    """Numpy broadcasting of several shapes, aligned at the trailing dimension."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[int] = []
    for i in range(rank):
        dim = 1
        for shape in shapes:
            j = i - rank + len(shape)
            if j < 0:
                continue
            try:
                dim = broadcast_dims(dim, shape[j])
            except ShapeError:
                listed = ", ".join(format_shape(s) for s in shapes)
                raise ShapeError(
                    f"shapes ({listed}) are not broadcast-compatible in dimension {i - rank}"
                ) from None
        result.append(dim)
    return tuple(result)


def broadcast_to(shape: Sequence[int], target: Sequence[int]) -> Shape:
    """Check that `shape` broadcasts to `target` (numpy.broadcast_to) and return it."""
    if len(shape) > len(target):
        raise ShapeError(
            f"cannot broadcast rank {len(shape)} shape ({format_shape(shape)}) "
            f"to lower rank {len(target)} ({format_shape(target)})"
        )
    offset = len(target) - len(shape)
    for i, dim in enumerate(shape):
        want = target[offset + i]
        if dim == 1 or not is_static(want) or not is_static(dim) or dim == want:
            continue
        raise ShapeError(
            f"cannot broadcast ({format_shape(shape)}) to ({format_shape(target)}): "
            f"dimension {i} is {dim}, expected 1 or {want}"
        )
    return tuple(target)

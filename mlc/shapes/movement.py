"""Data movement: transpose, reshape, concat, slice and gather."""

from collections.abc import Sequence

from mlc.shapes.dims import (
    DYNAMIC,
    Shape,
    ShapeError,
    format_dim,
    format_shape,
    is_static,
    join_dims,
    normalize_axis,
    num_elements,
)


def check_permutation(perm: Sequence[int], rank: int) -> None:
    if sorted(perm) != list(range(rank)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {rank} dimensions")


def transpose(shape: Sequence[int], perm: Sequence[int]) -> Shape:
    check_permutation(perm, len(shape))
    return tuple(shape[p] for p in perm)


def reshape(shape: Sequence[int], target: Sequence[int]) -> Shape:
    """
    numpy.reshape: `target` may hold one -1, inferred from the element count.

    `target` dims that are `DYNAMIC` are unknown at compile time (a shape operand
    supplies them at run time); they are left dynamic.
    """
    inferred = [i for i, d in enumerate(target) if d == -1]
    if len(inferred) > 1:
        raise ShapeError(f"target shape {list(target)} has more than one -1")
    if any(d < -1 and is_static(d) for d in target):
        raise ShapeError(f"target shape {list(target)} has a negative dimension")
    count = num_elements(shape)
    known = [d for d in target if d != -1]
    known_count = num_elements(known)
    result = list(target)
    if inferred:
        result[inferred[0]] = DYNAMIC
        if count is not None and known_count is not None:
            if known_count == 0 or count % known_count:
                raise ShapeError(
                    f"cannot reshape {count} elements into ({format_shape(known)}) "
                    f"with one inferred dimension"
                )
            result[inferred[0]] = count // known_count
    elif count is not None and known_count is not None and count != known_count:
        raise ShapeError(
            f"element counts differ: ({format_shape(shape)}) has {count}, "
            f"({format_shape(target)}) has {known_count}"
        )
    return tuple(result)


def concat(shapes: Sequence[Sequence[int]], axis: int) -> Shape:
    if not shapes:
        raise ShapeError("expects at least one operand")
    rank = len(shapes[0])
    if rank == 0:
        raise ShapeError("cannot concatenate rank-0 tensors")
    if any(len(s) != rank for s in shapes):
        ranks = ", ".join(str(len(s)) for s in shapes)
        raise ShapeError(f"expects operands of one rank, got ranks ({ranks})")
    axis = normalize_axis(axis, rank)
    result = list(shapes[0])
    origin = [0] * rank  # the operand each dimension of `result` was taken from
    for i, shape in enumerate(shapes[1:], start=1):
        for d in range(rank):
            if d == axis:
                continue
            joined = join_dims(
                result[d],
                shape[d],
                f"operand {i} differs from operand {origin[d]} in dimension {d} "
                f"({format_dim(shape[d])} vs {format_dim(result[d])}), "
                "which is not the concatenation axis",
            )
            if joined != result[d]:
                origin[d] = i
            result[d] = joined
    along = [s[axis] for s in shapes]
    result[axis] = sum(along) if all(is_static(d) for d in along) else DYNAMIC
    return tuple(result)


def slice_dim(dim: int, start: int, end: int, step: int) -> int:
    """The length of `range(dim)[start:end:step]`, or DYNAMIC."""
    if not is_static(dim):
        return DYNAMIC
    return len(range(*slice(start, end, step).indices(dim)))


def slice_(
    shape: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    steps: Sequence[int],
) -> Shape:
    """x[s0:e0:t0, ...] with Python slice semantics (negative indices, clamping)."""
    rank = len(shape)
    for name, values in (("starts", starts), ("ends", ends), ("steps", steps)):
        if len(values) != rank:
            raise ShapeError(
                f"expects {name} to have one entry per dimension ({rank}), got {len(values)}"
            )
    if 0 in steps:
        raise ShapeError(f"steps {list(steps)} contain a zero")
    return tuple(slice_dim(*args) for args in zip(shape, starts, ends, steps, strict=True))


def gather(data: Sequence[int], indices: Sequence[int], axis: int) -> Shape:
    """onnx Gather: data[..., indices, ...] along `axis`."""
    if not data:
        raise ShapeError("expects data of rank >= 1")
    axis = normalize_axis(axis, len(data))
    return (*data[:axis], *indices, *data[axis + 1 :])

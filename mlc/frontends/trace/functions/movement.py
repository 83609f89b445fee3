"""
Movement op functions: `ml` transpose, reshape, concat, gather and scatter, as their
numpy namesakes.

A transpose or reshape that changes nothing records no op. Basic indexing (`x[...]`)
is in `indexing`. Traced arrays are immutable, so the scatters return the new array as
JAX's `.at[...]` does: `put_along_axis` is numpy's without the mutation (numpy's
returns None and writes into `arr`), and `scatter_add` (no numpy name; numpy spells it
`np.add.at`) is its accumulating form, the inverse of `take_along_axis`.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.dispatch import array_function
from mlc.frontends.trace.recording import (
    active_tracer,
    cast,
    lift,
    operand,
    promote,
    record,
    reshape_to,
)
from mlc.frontends.trace.tracer import trace_error


@array_function("transpose")
def transpose(x: Any, axes: Sequence[int] | None = None) -> TracedArray:
    """numpy.transpose: reverse the dims, or permute them as `axes` says."""
    a = operand(x)
    perm = tuple(range(a.ndim))[::-1] if axes is None else tuple(int(i) for i in axes)
    try:
        perm = tuple(shapes.normalize_axis(p, a.ndim) for p in perm)
    except shapes.ShapeError as error:
        trace_error(f"transpose: {error}")
    if perm == tuple(range(a.ndim)):
        return a
    return record(a.tracer, "transpose", lambda: ml.TransposeOp(a.value, perm), (a,))


@array_function("reshape")
def reshape(x: Any, newshape: int | Sequence[int]) -> TracedArray:
    """numpy.reshape; one dim may be -1."""
    a = operand(x)
    target = (int(newshape),) if np.ndim(newshape) == 0 else tuple(int(d) for d in newshape)
    if -1 in target and not all(shapes.is_static(d) for d in a.raw_shape):
        if sum(1 for d in target if d == -1) > 1:
            trace_error(f"reshape: target shape {list(target)} has more than one -1")
        return reshape_to(a, [shapes.DYNAMIC if d == -1 else d for d in target])
    if target == a.raw_shape:
        return a
    return record(a.tracer, "reshape", lambda: ml.ReshapeOp(a.value, target), (a,))


@array_function("concatenate")
def concatenate(arrays: Sequence[Any], axis: int = 0) -> TracedArray:
    """numpy.concatenate (operands are promoted to one dtype)."""
    if not arrays:
        trace_error("concatenate needs at least one array")
    parts = promote(*arrays)
    tracer = parts[0].tracer
    values = [p.value for p in parts]
    return record(tracer, "concatenate", lambda: ml.ConcatOp(values, axis), parts)


@array_function("take")
def take(x: Any, indices: Any, axis: int = 0) -> TracedArray:
    """numpy.take with an integer index array (negative indices count from the end)."""
    tracer = active_tracer(x, indices)
    a, i = lift(tracer, x), lift(tracer, indices)
    if i.dtype.kind not in "iu":
        trace_error(f"take: indices must be integers, got dtype {i.dtype}")
    i = cast(i, np.int64)
    return record(tracer, "take", lambda: ml.GatherOp(a.value, i.value, axis), (a, i))


def broadcast_static(x: TracedArray, dims: Sequence[int]) -> TracedArray:
    """`x` broadcast to `dims` (static where `x`'s dim is 1), or `x` when it already is."""
    if tuple(dims) == tuple(x.raw_shape):
        return x
    target = TensorType(x.type.element_type, list(dims))  # pyright: ignore[reportUnknownMemberType]
    return record(x.tracer, "broadcast_to", lambda: ml.BroadcastToOp(x.value, target), (x,))


@array_function("take_along_axis")
def take_along_axis(x: Any, indices: Any, axis: int | None) -> TracedArray:
    """
    numpy.take_along_axis (`ml.gather_elements`): `indices` has the rank of `x`, and the
    dims other than `axis` broadcast (static size-1 dims); `axis=None` works on `x` flat.
    Negative indices count from the end; out-of-range ones fail a run-time check.
    """
    tracer = active_tracer(x, indices)
    a, i = lift(tracer, x), lift(tracer, indices)
    if i.dtype.kind not in "iu":
        trace_error(f"take_along_axis: indices must be integers, got dtype {i.dtype}")
    i = cast(i, np.int64)
    if axis is None:
        a, axis = reshape_to(a, [shapes.num_elements(a.raw_shape) or shapes.DYNAMIC]), 0
    if i.ndim != a.ndim:
        trace_error(f"take_along_axis: indices of rank {i.ndim} for an array of rank {a.ndim}")
    axis = shapes.normalize_axis(axis, a.ndim)
    dims = [
        d if k == axis else shapes.broadcast([d], [e])[0]
        for k, (d, e) in enumerate(zip(i.raw_shape, a.raw_shape, strict=True))
    ]
    i = broadcast_static(i, dims)
    a_dims = [e if k == axis else d for k, (d, e) in enumerate(zip(dims, a.raw_shape, strict=True))]
    a = broadcast_static(a, a_dims)
    return record(
        tracer, "take_along_axis", lambda: ml.GatherElementsOp(a.value, i.value, axis), (a, i)
    )


def _along_axis(
    what: str, arr: TracedArray, indices: TracedArray, axis: int
) -> tuple[int, TracedArray]:
    """`axis` normalized and `indices` (int64) with its size-1 dims broadcast to `arr`'s."""
    if indices.dtype.kind not in "iu":
        trace_error(f"{what}: indices must be integers, got dtype {indices.dtype}")
    if indices.ndim != arr.ndim:
        trace_error(f"{what}: indices of rank {indices.ndim} for an array of rank {arr.ndim}")
    try:
        axis = shapes.normalize_axis(axis, arr.ndim)
    except shapes.ShapeError as error:
        trace_error(f"{what}: {error}")
    dims = []
    for k, (d, e) in enumerate(zip(indices.raw_shape, arr.raw_shape, strict=True)):
        if k != axis and d == 1 and shapes.is_static(e):
            d = e
        elif k != axis and shapes.is_static(d) and shapes.is_static(e) and d != e:
            trace_error(
                f"{what}: indices of shape ({shapes.format_shape(indices.raw_shape)}) do not "
                f"match an array of shape ({shapes.format_shape(arr.raw_shape)}) off axis {axis}"
            )
        dims.append(d)
    return axis, broadcast_static(cast(indices, np.int64), dims)


def _scatter(
    what: str, reduction: str, arr: Any, indices: Any, updates: Any, axis: int | None
) -> TracedArray:
    tracer = active_tracer(arr, indices, updates)
    a, i = lift(tracer, arr), lift(tracer, indices)
    if reduction != "none" and a.dtype == np.bool_:
        trace_error(f"{what} of a bool array: cast with .astype first")
    shape = a.raw_shape
    if axis is None:
        if i.ndim != 1:
            trace_error(f"{what}: axis=None takes 1-d indices, got rank {i.ndim}")
        a, axis = reshape_to(a, [shapes.num_elements(shape) or shapes.DYNAMIC]), 0
    axis, i = _along_axis(what, a, i, axis)
    u = lift(tracer, updates, a.dtype)
    if u.ndim > i.ndim:
        trace_error(f"{what}: updates of rank {u.ndim} for indices of rank {i.ndim}")
    if u.ndim < i.ndim:
        u = reshape_to(u, [1] * (i.ndim - u.ndim) + list(u.raw_shape))
    if u.raw_shape != i.raw_shape:
        dims = [d if e == 1 else e for d, e in zip(i.raw_shape, u.raw_shape, strict=True)]
        if any(not shapes.is_static(d) for d in dims):
            trace_error(f"{what}: updates broadcast only along static dims")
        u = broadcast_static(u, dims)
    result = record(
        tracer,
        what,
        lambda: ml.ScatterElementsOp(a.value, i.value, u.value, axis, reduction),
        (a, i, u),
    )
    return result if result.raw_shape == shape else reshape_to(result, shape)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None) -> TracedArray:
    """
    numpy.put_along_axis, returning the new array instead of writing into `arr`
    (`ml.scatter_elements`): `indices` as `take_along_axis` takes them, `values`
    broadcast to their shape and cast to `arr`'s dtype; an element named twice keeps
    the last value written. Out-of-range indices fail a run-time check.
    """
    return _scatter("put_along_axis", "none", arr, indices, values, axis)


def scatter_add(arr: Any, indices: Any, updates: Any, axis: int | None) -> TracedArray:
    """
    `arr` with `updates` added at `indices` along `axis` (`ml.scatter_elements` with
    reduction add): `put_along_axis` that accumulates, so indices named twice add up,
    as `np.add.at(arr, <take_along_axis index>, updates)` and JAX's `.at[...].add` do.
    """
    return _scatter("scatter_add", "add", arr, indices, updates, axis)

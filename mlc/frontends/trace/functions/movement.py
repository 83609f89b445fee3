"""
Movement op functions: `ml` transpose, reshape, concat and gather, as their numpy namesakes.

A transpose or reshape that changes nothing records no op. Basic indexing (`x[...]`)
is in `indexing`.
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

"""
Reduction op functions: `ml` reduce ops with numpy's axes and result dtypes.

`axis=None` reduces every dim and an empty set of axes records nothing; `keepdims`
keeps reduced dims as size 1. As in numpy, `sum` of integers and bools accumulates
in 64 bits and `mean` in float64; `max`/`min` of bools go through int8.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.dispatch import array_function
from mlc.frontends.trace.recording import cast, operand, record, widened
from mlc.frontends.trace.tracer import trace_error

Axis = int | Sequence[int] | None


def _axes(a: TracedArray, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(a.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    try:
        return shapes.normalize_axes(axes, a.ndim)
    except shapes.ShapeError as error:
        trace_error(f"reduction: {error}")


def _reduce(name: str, op: type[ml.ReduceOp], a: TracedArray, axis: Axis, keepdims: bool) -> Any:
    axes = _axes(a, axis)
    if not axes:
        return a
    return record(a.tracer, name, lambda: op(a.value, axes, keepdims), (a,))


@array_function("sum")
def sum(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.sum: unsigned integers sum as uint64, other integers and bools as int64."""
    a = operand(x)
    wide = np.uint64 if a.dtype.kind == "u" else np.int64
    return _reduce("sum", ml.ReduceSumOp, widened(a, wide), axis, keepdims)


@array_function("mean")
def mean(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.mean: integers and bools average in float64."""
    return _reduce("mean", ml.ReduceMeanOp, widened(x, np.float64), axis, keepdims)


def _extremum(name: str, op: type[ml.ReduceOp], x: Any, axis: Axis, keepdims: bool) -> Any:
    a = operand(x)
    if a.dtype != np.bool_:
        return _reduce(name, op, a, axis, keepdims)
    return cast(_reduce(name, op, cast(a, np.int8), axis, keepdims), np.bool_)


@array_function("max", "amax")
def max(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.max (a reduction; `maximum` is the elementwise one)."""
    return _extremum("max", ml.ReduceMaxOp, x, axis, keepdims)


@array_function("min", "amin")
def min(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.min (a reduction; `minimum` is the elementwise one)."""
    return _extremum("min", ml.ReduceMinOp, x, axis, keepdims)

"""
Index reductions and scans with numpy's names: argmax, argmin (int64 indices, the first
of equal elements) and cumsum (integers and bools accumulate as int64, unsigned ones as
uint64). `axis=None` works on the array flattened, as numpy's do. `top_k` has JAX's
name and meaning (`jax.lax.top_k`); numpy has none.
"""

from typing import Any

import numpy as np

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.dispatch import array_function
from mlc.frontends.trace.recording import cast, operand, record, reshape_to, widened
from mlc.frontends.trace.tracer import trace_error


def _flat(a: TracedArray) -> TracedArray:
    if a.ndim == 1:
        return a
    static = all(shapes.is_static(d) for d in a.raw_shape)
    return reshape_to(a, [a.size if static else shapes.DYNAMIC])


def _axis(a: TracedArray, axis: int, what: str) -> int:
    try:
        return shapes.normalize_axis(axis, a.ndim)
    except shapes.ShapeError as error:
        trace_error(f"{what}: {error}")


def _arg(what: str, op: type[ml.ArgReduceOp], x: Any, axis: int | None, keepdims: bool) -> Any:
    a = operand(x)
    if a.dtype == np.bool_:
        a = cast(a, np.int8)
    if axis is None:
        flat = _flat(a)
        index = record(flat.tracer, what, lambda: op(flat.value, 0, keepdims=False), (flat,))
        return reshape_to(index, [1] * a.ndim) if keepdims else index
    axis = _axis(a, axis, what)
    return record(a.tracer, what, lambda: op(a.value, axis, keepdims=keepdims), (a,))


@array_function("argmax")
def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> TracedArray:
    """numpy.argmax: the index of the first largest element (a NaN is the largest)."""
    return _arg("argmax", ml.ArgMaxOp, x, axis, keepdims)


@array_function("argmin")
def argmin(x: Any, axis: int | None = None, keepdims: bool = False) -> TracedArray:
    """numpy.argmin: the index of the first smallest element (a NaN is the smallest)."""
    return _arg("argmin", ml.ArgMinOp, x, axis, keepdims)


@array_function("cumsum")
def cumsum(x: Any, axis: int | None = None, dtype: Any = None) -> TracedArray:
    """numpy.cumsum; `dtype` sets the accumulator's type."""
    a = operand(x)
    if dtype is not None:
        a = cast(a, dtype)
    else:
        a = widened(a, np.uint64 if a.dtype.kind == "u" else np.int64)
    if axis is None:
        a, axis = _flat(a), 0
    axis = _axis(a, axis, "cumsum")
    return record(a.tracer, "cumsum", lambda: ml.CumSumOp(a.value, axis), (a,))


def top_k(x: Any, k: int) -> tuple[TracedArray, TracedArray]:
    """
    jax.lax.top_k: the `k` largest elements along the last axis, largest first, and
    their int32 positions; equal elements come in the order of their positions and NaN
    above every number (`ml.top_k`). `k` above the axis's size fails a run-time check
    when that size is only known at run time.
    """
    a = operand(x)
    if a.ndim == 0:
        trace_error("top_k of a rank-0 array: it needs at least one axis")
    if a.dtype == np.bool_:
        trace_error("top_k of a bool array: cast with .astype first")
    if isinstance(k, TracedArray) or not isinstance(k, int | np.integer) or k < 0:
        trace_error(f"top_k: k must be a non-negative Python integer, got {k!r}")
    made: list[ml.TopKOp] = []

    def make() -> ml.TopKOp:
        made.append(ml.TopKOp(a.value, int(k), axis=a.ndim - 1))
        return made[0]

    values = record(a.tracer, "top_k", make, (a,))
    indices = TracedArray(a.tracer, made[0].results[1])
    return values, cast(indices, np.int32)

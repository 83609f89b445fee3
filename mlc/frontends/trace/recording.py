"""
What every op function does: turn its operands into traced arrays and record an op.

Operands may be traced arrays, numpy arrays or Python numbers; `lift` makes the
latter constants of the trace, `promote` brings them all to numpy's common dtype
(`array.result_dtype`), and `record` emits the op an `ml` builder makes, turning its
shape errors into `TraceError`s at the user's line that name the operand shapes.
`cast` and `reshape_to` are the two ops the others need to build on.
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from mlc import shapes
from mlc.dialects.ml import CastOp, ReshapeOp
from mlc.frontends.trace import tracer as tracing
from mlc.frontends.trace.array import TracedArray, is_traced, refuse_traced_lists, result_dtype
from mlc.frontends.trace.dispatch import method
from mlc.frontends.trace.tracer import Tracer, trace_error


def record(
    tracer: Tracer, what: str, make: Callable[[], Operation], operands: Sequence[TracedArray] = ()
) -> TracedArray:
    """Emit the op `make()` builds; its shape errors are reported at the user's line."""
    try:
        op = make()
    except shapes.ShapeError as error:
        listed = ", ".join(f"({shapes.format_shape(a.raw_shape)})" for a in operands)
        shown = all(f"{shapes.format_shape(a.raw_shape)}" in str(error) for a in operands)
        suffix = f" (operand shapes {listed})" if operands and not shown else ""
        trace_error(f"{what}: {error}{suffix}")
    tracer.emit(op)
    return TracedArray(tracer, op.results[0])


def active_tracer(*values: Any) -> Tracer:
    """The tracer of the traced values among `values`, else the innermost active one."""
    traced = [v for v in values if is_traced(v)]
    if any(v.tracer is not tracing.current() for v in traced):
        trace_error("a traced array was used outside the trace that made it")
    if traced:
        return traced[0].tracer
    if (tracer := tracing.current()) is None:
        trace_error(
            "mlc.ops functions record traced programs: call them inside a function "
            "given to mlc.trace or mlc.jit"
        )
    return tracer


def lift(tracer: Tracer, value: Any, dtype: np.dtype[Any] | None = None) -> TracedArray:
    """A traced array for `value`: itself (cast to `dtype`), or a constant."""
    if is_traced(value):
        return value if dtype is None or value.dtype == dtype else cast(value, dtype)
    refuse_traced_lists(value)
    try:
        array = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as error:
        trace_error(f"cannot use {type(value).__name__} as an array: {error}")
    if array.dtype == np.object_:
        trace_error(f"cannot use {type(value).__name__} as an array")
    if dtype is None and array.dtype.kind in "iu" and array.dtype != np.int64 and _is_scalar(value):
        array = array.astype(np.int64)
    return TracedArray(tracer, tracer.constant(array))


def _is_scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float)


def promote(*values: Any, dtype: np.dtype[Any] | None = None) -> list[TracedArray]:
    """The operands lifted and cast to their common dtype (or to `dtype`)."""
    tracer = active_tracer(*values)
    target = dtype or result_dtype(*values)
    return [lift(tracer, v, target) for v in values]


def operand(x: Any) -> TracedArray:
    """`x` as a traced array of its own dtype (a constant if it is not traced)."""
    (a,) = promote(x)
    return a


def widened(x: Any, dtype: type[np.generic]) -> TracedArray:
    """Integers and bools promoted to `dtype`, as numpy accumulates them."""
    a = operand(x)
    return cast(a, dtype) if a.dtype.kind in "biu" else a


@method("astype")
def cast(x: TracedArray, dtype: Any) -> TracedArray:
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    result = TensorType(tracing.element_type(dtype), x.raw_shape)
    return record(x.tracer, "astype", lambda: CastOp(x.value, result))


def reshape_to(x: TracedArray, dims: Sequence[int]) -> TracedArray:
    """Reshape to `dims`, which may hold one dynamic dim (given at run time by the rest)."""
    dims = tuple(dims)
    dynamic = [i for i, d in enumerate(dims) if not shapes.is_static(d)]
    if not dynamic:
        return record(x.tracer, "reshape", lambda: ReshapeOp(x.value, dims), (x,))
    if len(dynamic) > 1:
        trace_error(
            f"cannot reshape to ({shapes.format_shape(dims)}): more than one dim is only "
            "known at run time"
        )
    target = np.array([-1 if i == dynamic[0] else d for i, d in enumerate(dims)], np.int64)
    shape = x.tracer.constant(target)
    result = TensorType(x.type.element_type, dims)  # pyright: ignore[reportUnknownMemberType]
    return record(
        x.tracer, "reshape", lambda: ReshapeOp(x.value, shape=shape, result_type=result), (x,)
    )

"""
`mlc.grad` and `mlc.value_and_grad`: JAX's transformations on traced Python functions.

`value_and_grad(fn)` returns a function that, called inside a trace (`mlc.jit`,
`mlc.trace`, or another `mlc.grad`), records `fn`'s forward ops into the program being
traced, then its backward ops after them (`mlc.autodiff.differentiate`): forward and
backward are one graph, which the graph passes, fusion and the targets optimise together
(AOT autograd). Called on numpy arrays, it traces and compiles itself through `mlc.jit`
once per guard key and runs from the cache after. Gradients come back shaped like the
differentiated arguments, one array for an int `argnums`, a tuple for a tuple.

Since the backward ops are `ml` ops recorded like any other, `grad(grad(f))` works for
the ops whose rules are themselves differentiable.
"""

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import OpResult, SSAValue
from xdsl.rewriter import InsertPoint

from mlc.autodiff.differentiate import differentiate
from mlc.autodiff.emitter import Emitter
from mlc.autodiff.vjp import vjp
from mlc.compiler.jit import JitFunction
from mlc.diagnostics import OpError
from mlc.dialects import ml
from mlc.frontends.trace import tracer as tracing
from mlc.frontends.trace.array import TracedArray, is_traced
from mlc.frontends.trace.recording import active_tracer, lift
from mlc.frontends.trace.tracer import TraceError, Tracer, trace_error

Argnums = int | Sequence[int]


def _positions(argnums: Argnums) -> tuple[int, ...]:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return (argnums,)
    if isinstance(argnums, Sequence) and argnums and all(type(i) is int for i in argnums):
        if len(set(argnums)) != len(argnums):
            raise ValueError(f"argnums lists an argument twice: {tuple(argnums)}")
        return tuple(argnums)
    raise TypeError(f"argnums must be an int or a non-empty tuple of ints, got {argnums!r}")


def value_and_grad(
    fn: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, split: bool = False
) -> Callable[..., Any]:
    """
    A function returning `(fn(*args), gradient of fn at args)` (with `has_aux`, fn
    returns `(value, aux)` and this `((value, aux), gradient)`). `fn` must return a
    scalar: a rank-0 floating-point array. By default forward and backward are one
    compiled program (the joint form); `split=True` runs a call on numpy arrays as
    `mlc.vjp`'s two halves instead (a traced call stays joint: it is one program).
    """
    positions = _positions(argnums)
    single = isinstance(argnums, int)
    compiled: list[JitFunction] = []  # the eager path's jit, made on first use

    @functools.wraps(fn)
    def value_and_grad_fn(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError("mlc.value_and_grad: pass the arguments positionally")
        if tracing.current() is not None:
            return _record(fn, args, positions, single, has_aux)
        if split:
            return _split_call(fn, _as_arrays(args, positions), positions, single, has_aux)
        if not compiled:
            compiled.append(JitFunction(value_and_grad_fn))
        return compiled[0](*_as_arrays(args, positions))

    return value_and_grad_fn


def grad(
    fn: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, split: bool = False
) -> Callable[..., Any]:
    """
    A function returning the gradient of `fn` at its arguments (with `has_aux`,
    `(gradient, aux)`), shaped like the arguments `argnums` names (`split` as in
    `value_and_grad`).
    """
    both = value_and_grad(fn, argnums, has_aux, split)

    @functools.wraps(fn)
    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        value, grads = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return grad_fn


def _as_arrays(args: Sequence[Any], positions: tuple[int, ...]) -> list[Any]:
    """Python numbers differentiated become arrays (traced, not specialised on)."""
    return [
        np.asarray(a) if i in positions and isinstance(a, float | int) else a
        for i, a in enumerate(args)
    ]


def _missing_argument(positions: tuple[int, ...], count: int) -> str | None:
    """What is wrong when `argnums` names an argument beyond the `count` given (raised
    at call time on arrays, as a trace error while tracing)."""
    beyond = [i for i in positions if i >= count]
    if not beyond:
        return None
    return f"mlc.grad: argnums names argument {beyond[0]}, but {count} were given"


def _split_call(
    fn: Callable[..., Any],
    args: Sequence[Any],
    positions: tuple[int, ...],
    single: bool,
    has_aux: bool,
) -> Any:
    """value_and_grad on numpy arrays through `mlc.vjp`'s forward and backward halves."""
    if (missing := _missing_argument(positions, len(args))) is not None:
        raise TypeError(missing)
    for i in positions:
        if np.asarray(args[i]).dtype.kind != "f":
            raise TypeError(
                f"mlc.grad: argument {i} has dtype {np.asarray(args[i]).dtype}; only "
                "floating-point arguments can be differentiated"
            )
    output, vjp_fn = vjp(fn, *args)
    value = output[0] if has_aux else output
    if np.ndim(value) != 0 or np.asarray(value).dtype.kind != "f":
        raise TypeError("mlc.grad: the function differentiated must return a scalar")
    seed = np.ones((), np.asarray(value).dtype)
    grads = vjp_fn((seed, None) if has_aux else seed)
    gradient = grads[positions[0]] if single else tuple(grads[i] for i in positions)
    return output, gradient


def _record(
    fn: Callable[..., Any],
    args: Sequence[Any],
    positions: tuple[int, ...],
    single: bool,
    has_aux: bool,
) -> Any:
    """Record fn's forward ops, then its backward ops, into the trace in progress."""
    tracer = active_tracer(*args)
    bound = list(args)
    if (missing := _missing_argument(positions, len(args))) is not None:
        trace_error(missing)
    for i in positions:
        bound[i] = _differentiable(tracer, args[i], i, args)
    wrt = [bound[i].value for i in positions]
    block = tracer.block
    before = block.last_op
    output = fn(*bound)
    if tracer.block is not block:
        trace_error(
            f"mlc.grad: {getattr(fn, '__name__', 'the function')} needs a traced value in "
            "Python (a graph break), so it cannot be differentiated as one graph: use "
            "ops.where or ops.cond"
        )
    value, aux = _split(output, has_aux)
    value = lift(tracer, value)
    if value.ndim != 0 or value.dtype.kind != "f":
        trace_error(
            "mlc.grad: the function differentiated must return a scalar (a rank-0 "
            f"floating-point array), got {value.type}"
        )
    ops = list(block.ops)
    ops = ops[ops.index(before) + 1 :] if before is not None else ops
    em = Emitter(InsertPoint.at_end(block))
    em.location = _location(value.value, tracer)
    seed = em.scalar(1.0, value.value)
    try:
        grads = differentiate(ops, wrt, value.value, seed, em)
    except OpError as error:
        raise TraceError([error.diagnostic()]) from None
    arrays = [TracedArray(tracer, g) for g in grads]
    gradient = arrays[0] if single else tuple(arrays)
    return ((value, aux) if has_aux else value), gradient


def _differentiable(tracer: Tracer, arg: Any, index: int, args: Sequence[Any]) -> TracedArray:
    """The argument as a traced float array of its own (a fresh value if it is shared)."""
    array = lift(tracer, arg)
    if array.dtype.kind != "f":
        trace_error(
            f"mlc.grad: argument {index} has dtype {array.dtype}; only floating-point "
            "arguments can be differentiated"
        )
    shared = sum(1 for a in args if is_traced(a) and a.value is array.value) > 1
    if not shared:
        return array
    # The same array passed twice: each position gets its own gradient.
    alias = tracer.emit(ml.BroadcastToOp(array.value, array.type))
    return TracedArray(tracer, alias.results[0])


def _split(output: Any, has_aux: bool) -> tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not isinstance(output, tuple | list) or len(output) != 2:
        trace_error("mlc.grad: with has_aux=True the function must return (value, aux)")
    return output[0], output[1]


def _location(value: SSAValue, tracer: Tracer) -> Any:
    if isinstance(value, OpResult):
        return value.op.location
    return tracer.function_location

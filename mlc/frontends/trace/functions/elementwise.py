"""
Elementwise op functions: `ml` unary, binary, comparison and select ops.

Operands broadcast and promote as in numpy (`recording.promote`); the transcendental
functions compute integer operands in float64, as numpy does, and bool operands of
arithmetic are refused with what to do instead. The logical functions are built from
comparisons and `where`, as `ml` has no logical ops.
"""

from typing import Any

import numpy as np

from mlc.dialects import ml
from mlc.frontends.trace.array import TracedArray, result_dtype
from mlc.frontends.trace.dispatch import array_function, ufunc
from mlc.frontends.trace.recording import active_tracer, cast, lift, operand, promote, record
from mlc.frontends.trace.tracer import trace_error


def _unary(name: str, op: type[ml.UnaryOp], x: Any, floating: bool = False) -> TracedArray:
    a = operand(x)
    if floating and a.dtype.kind in "biu":
        a = cast(a, np.float64)  # numpy computes exp, log... of integers in float64
    if a.dtype == np.bool_:
        trace_error(f"{name} of a bool array: cast with .astype first")
    return record(a.tracer, name, lambda: op(a.value), (a,))


@ufunc("negative")
def negative(x: Any) -> TracedArray:
    return _unary("negative", ml.NegOp, x)


@ufunc("absolute")
def abs(x: Any) -> TracedArray:
    a = operand(x)
    return a if a.dtype.kind in "bu" else _unary("abs", ml.AbsOp, a)


def relu(x: Any) -> TracedArray:
    """max(x, 0)."""
    return _unary("relu", ml.ReluOp, x)


@ufunc("exp")
def exp(x: Any) -> TracedArray:
    return _unary("exp", ml.ExpOp, x, floating=True)


@ufunc("log")
def log(x: Any) -> TracedArray:
    return _unary("log", ml.LogOp, x, floating=True)


@ufunc("sqrt")
def sqrt(x: Any) -> TracedArray:
    return _unary("sqrt", ml.SqrtOp, x, floating=True)


@ufunc("tanh")
def tanh(x: Any) -> TracedArray:
    return _unary("tanh", ml.TanhOp, x, floating=True)


def sigmoid(x: Any) -> TracedArray:
    """1 / (1 + exp(-x))."""
    return _unary("sigmoid", ml.SigmoidOp, x, floating=True)


def erf(x: Any) -> TracedArray:
    return _unary("erf", ml.ErfOp, x, floating=True)


def gelu(x: Any, approximate: str = "none") -> TracedArray:
    """GELU, exact (`approximate="none"`) or tanh-approximated (`"tanh"`)."""
    if approximate not in ("none", "tanh"):
        trace_error(f'gelu: approximate must be "none" or "tanh", got "{approximate}"')
    a = operand(x)
    if a.dtype.kind in "biu":
        a = cast(a, np.float64)
    return record(a.tracer, "gelu", lambda: ml.GeluOp(a.value, approximate), (a,))


def _binary(name: str, op: type[ml.BinaryOp], lhs: Any, rhs: Any) -> TracedArray:
    a, b = promote(lhs, rhs)
    if a.dtype == np.bool_:
        trace_error(f"{name} of bool arrays: cast with .astype first")
    return record(a.tracer, name, lambda: op(a.value, b.value), (a, b))


@ufunc("add")
def add(a: Any, b: Any) -> TracedArray:
    return _binary("add", ml.AddOp, a, b)


@ufunc("subtract")
def subtract(a: Any, b: Any) -> TracedArray:
    return _binary("subtract", ml.SubOp, a, b)


@ufunc("multiply")
def multiply(a: Any, b: Any) -> TracedArray:
    return _binary("multiply", ml.MulOp, a, b)


@ufunc("divide", "true_divide")
def divide(a: Any, b: Any) -> TracedArray:
    """True division: integer operands divide as float64, as in numpy."""
    if result_dtype(a, b).kind in "biu":
        a, b = promote(a, b, dtype=np.dtype(np.float64))
    return _binary("divide", ml.DivOp, a, b)


@ufunc("power")
def power(a: Any, b: Any) -> TracedArray:
    return _binary("power", ml.PowOp, a, b)


@ufunc("maximum")
@array_function("maximum")
def maximum(a: Any, b: Any) -> TracedArray:
    """Elementwise maximum (numpy.maximum)."""
    return _binary("maximum", ml.MaxOp, a, b)


@ufunc("minimum")
@array_function("minimum")
def minimum(a: Any, b: Any) -> TracedArray:
    """Elementwise minimum (numpy.minimum)."""
    return _binary("minimum", ml.MinOp, a, b)


def _compare(predicate: str, lhs: Any, rhs: Any) -> TracedArray:
    a, b = promote(lhs, rhs)
    return record(
        a.tracer, f"comparison '{predicate}'", lambda: ml.CmpOp(predicate, a.value, b.value), (a, b)
    )


@ufunc("equal")
def equal(a: Any, b: Any) -> TracedArray:
    return _compare("eq", a, b)


@ufunc("not_equal")
def not_equal(a: Any, b: Any) -> TracedArray:
    return _compare("ne", a, b)


@ufunc("less")
def less(a: Any, b: Any) -> TracedArray:
    return _compare("lt", a, b)


@ufunc("less_equal")
def less_equal(a: Any, b: Any) -> TracedArray:
    return _compare("le", a, b)


@ufunc("greater")
def greater(a: Any, b: Any) -> TracedArray:
    return _compare("gt", a, b)


@ufunc("greater_equal")
def greater_equal(a: Any, b: Any) -> TracedArray:
    return _compare("ge", a, b)


def _as_bool(x: Any) -> TracedArray:
    a = operand(x)
    return a if a.dtype == np.bool_ else not_equal(a, 0)


@array_function("where")
def where(condition: Any, a: Any, b: Any) -> TracedArray:
    """`a` where `condition` holds, else `b` (numpy.where with three arguments)."""
    tracer = active_tracer(condition, a, b)
    c = _as_bool(lift(tracer, condition))
    x, y = promote(a, b)
    return record(tracer, "where", lambda: ml.SelectOp(c.value, x.value, y.value), (c, x, y))


@ufunc("logical_and")
def logical_and(a: Any, b: Any) -> TracedArray:
    return where(_as_bool(a), _as_bool(b), False)


@ufunc("logical_or")
def logical_or(a: Any, b: Any) -> TracedArray:
    return where(_as_bool(a), True, _as_bool(b))


@ufunc("logical_xor")
def logical_xor(a: Any, b: Any) -> TracedArray:
    return not_equal(_as_bool(a), _as_bool(b))


@ufunc("logical_not")
def logical_not(a: Any) -> TracedArray:
    return equal(_as_bool(a), False)

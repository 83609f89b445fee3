"""
numpy's trigonometric, rounding, remainder, floating-point-class and bitwise functions.

As in numpy: the transcendental functions compute integers in float64; floor, ceil and
round keep an integer dtype (numpy 2 returns the integers themselves); isnan and isinf
of integers are all False; `remainder` (`mod`) is floored, with the divisor's sign, and
`fmod` truncated, with the dividend's (both on `ml.rem`); shifts by the bit width or
more give 0 (or the sign fill of a signed right shift). The bitwise functions take
integers and bools, as numpy's do.
"""

from typing import Any

import numpy as np

from mlc.dialects import ml
from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.dispatch import array_function, ufunc
from mlc.frontends.trace.functions.elementwise import (
    add,
    equal,
    greater,
    less,
    logical_and,
    not_equal,
    where,
)
from mlc.frontends.trace.recording import cast, operand, promote, record
from mlc.frontends.trace.tracer import trace_error


def _float_unary(name: str, op: type[ml.UnaryOp], x: Any) -> TracedArray:
    a = operand(x)
    if a.dtype.kind in "biu":
        a = cast(a, np.float64)  # numpy computes sin, arcsinh... of integers in float64
    return record(a.tracer, name, lambda: op(a.value), (a,))


@ufunc("sin")
def sin(x: Any) -> TracedArray:
    return _float_unary("sin", ml.SinOp, x)


@ufunc("cos")
def cos(x: Any) -> TracedArray:
    return _float_unary("cos", ml.CosOp, x)


@ufunc("tan")
def tan(x: Any) -> TracedArray:
    return _float_unary("tan", ml.TanOp, x)


@ufunc("arcsin")
def arcsin(x: Any) -> TracedArray:
    return _float_unary("arcsin", ml.AsinOp, x)


@ufunc("arccos")
def arccos(x: Any) -> TracedArray:
    return _float_unary("arccos", ml.AcosOp, x)


@ufunc("arctan")
def arctan(x: Any) -> TracedArray:
    return _float_unary("arctan", ml.AtanOp, x)


@ufunc("sinh")
def sinh(x: Any) -> TracedArray:
    return _float_unary("sinh", ml.SinhOp, x)


@ufunc("cosh")
def cosh(x: Any) -> TracedArray:
    return _float_unary("cosh", ml.CoshOp, x)


@ufunc("arcsinh")
def arcsinh(x: Any) -> TracedArray:
    return _float_unary("arcsinh", ml.AsinhOp, x)


@ufunc("arccosh")
def arccosh(x: Any) -> TracedArray:
    return _float_unary("arccosh", ml.AcoshOp, x)


@ufunc("arctanh")
def arctanh(x: Any) -> TracedArray:
    return _float_unary("arctanh", ml.AtanhOp, x)


def _rounding(name: str, op: type[ml.UnaryOp], x: Any) -> TracedArray:
    a = operand(x)
    if a.dtype == np.bool_:
        trace_error(f"{name} of a bool array: cast with .astype first")
    if a.dtype.kind in "iu":
        return a  # integral already; numpy keeps the dtype
    return record(a.tracer, name, lambda: op(a.value), (a,))


@ufunc("floor")
def floor(x: Any) -> TracedArray:
    return _rounding("floor", ml.FloorOp, x)


@ufunc("ceil")
def ceil(x: Any) -> TracedArray:
    return _rounding("ceil", ml.CeilOp, x)


@ufunc("rint")
def rint(x: Any) -> TracedArray:
    """Round to the nearest integral value, halves to even."""
    return _rounding("rint", ml.RoundOp, x)


@array_function("round", "around")
def round(x: Any, decimals: int = 0, out: Any = None) -> TracedArray:
    """numpy.round with `decimals=0` (halves to even)."""
    if decimals != 0 or out is not None:
        trace_error("round: only decimals=0 and no out= are supported")
    return rint(x)


@ufunc("isnan")
def isnan(x: Any) -> TracedArray:
    a = operand(x)
    return not_equal(a, a)  # false everywhere for integers, as numpy's


@ufunc("isinf")
def isinf(x: Any) -> TracedArray:
    a = operand(x)
    if a.dtype.kind != "f":
        return not_equal(a, a)  # all False, in the shape of `a`
    return equal(record(a.tracer, "abs", lambda: ml.AbsOp(a.value), (a,)), np.inf)


@ufunc("isfinite")
def isfinite(x: Any) -> TracedArray:
    a = operand(x)
    if a.dtype.kind != "f":
        return equal(a, a)
    return less(record(a.tracer, "abs", lambda: ml.AbsOp(a.value), (a,)), np.inf)


@ufunc("sign")
def sign(x: Any) -> TracedArray:
    """-1, 0 or 1 (NaN for NaN), in the dtype of `x`."""
    a = operand(x)
    if a.dtype == np.bool_:
        trace_error("sign of a bool array: cast with .astype first")
    zero_or_x = a if a.dtype.kind == "f" else 0 * a
    positive = where(greater(a, 0), 1, zero_or_x).astype(a.dtype)
    return positive if a.dtype.kind == "u" else where(less(a, 0), -1, positive).astype(a.dtype)


def _rem(a: Any, b: Any, name: str) -> tuple[TracedArray, TracedArray]:
    x, y = promote(a, b)
    if x.dtype == np.bool_:
        trace_error(f"{name} of bool arrays: cast with .astype first")
    return record(x.tracer, name, lambda: ml.RemOp(x.value, y.value), (x, y)), y


@ufunc("fmod")
def fmod(a: Any, b: Any) -> TracedArray:
    """The truncated remainder, with the sign of `a` (C's fmod and %)."""
    return _rem(a, b, "fmod")[0]


@ufunc("remainder")
def remainder(a: Any, b: Any) -> TracedArray:
    """The floored remainder, with the sign of `b` (Python's %, numpy.mod)."""
    r, y = _rem(a, b, "remainder")
    moved = where(logical_and(not_equal(less(r, 0), less(y, 0)), not_equal(r, 0)), add(r, y), r)
    if r.dtype.kind != "f":
        return moved
    signed_zero = where(less(y, 0), r.dtype.type(-0.0), r.dtype.type(0.0))  # copysign(0, b)
    return where(equal(moved, 0), signed_zero, moved)


mod = remainder


def _integer_binary(
    name: str, op: type[ml.BinaryOp], a: Any, b: Any, kinds: str = "biu"
) -> TracedArray:
    """A binary op on integers (and bools, where `kinds` has "b")."""
    x, y = promote(a, b)
    if x.dtype.kind not in kinds:
        takes = "integers or bools" if "b" in kinds else "integers"
        trace_error(f"{name} of {x.dtype} arrays: it takes {takes}")
    return record(x.tracer, name, lambda: op(x.value, y.value), (x, y))


@ufunc("bitwise_and")
def bitwise_and(a: Any, b: Any) -> TracedArray:
    return _integer_binary("bitwise_and", ml.BitwiseAndOp, a, b)


@ufunc("bitwise_or")
def bitwise_or(a: Any, b: Any) -> TracedArray:
    return _integer_binary("bitwise_or", ml.BitwiseOrOp, a, b)


@ufunc("bitwise_xor")
def bitwise_xor(a: Any, b: Any) -> TracedArray:
    return _integer_binary("bitwise_xor", ml.BitwiseXorOp, a, b)


@ufunc("invert", "bitwise_not")
def invert(x: Any) -> TracedArray:
    a = operand(x)
    if a.dtype.kind not in "biu":
        trace_error(f"invert of {a.dtype} arrays: it takes integers or bools")
    return record(a.tracer, "invert", lambda: ml.BitwiseNotOp(a.value), (a,))


bitwise_not = invert


@ufunc("left_shift")
def left_shift(a: Any, b: Any) -> TracedArray:
    return _integer_binary("left_shift", ml.ShiftLeftOp, a, b, "iu")


@ufunc("right_shift")
def right_shift(a: Any, b: Any) -> TracedArray:
    return _integer_binary("right_shift", ml.ShiftRightOp, a, b, "iu")

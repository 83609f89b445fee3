"""
ONNX's numeric elementwise ops beyond arithmetic: IsNaN, IsInf, Sign, Mod, the bitwise
ops and BitShift.

IsNaN is `x != x` and IsInf a comparison with infinity; Sign selects -1, 0 or 1 (NaN
stays NaN); Mod with `fmod=1` is `ml.rem` (C's fmod and %), and with `fmod=0` numpy's
mod: the remainder moved by the divisor when their signs differ (a zero remainder takes
the divisor's sign on floats, as numpy's does).
"""

from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import dtype, is_float
from mlc.frontends.onnx.ops.table import converts

BITWISE: dict[str, type[ml.BinaryOp]] = {
    "BitwiseAnd": ml.BitwiseAndOp,
    "BitwiseOr": ml.BitwiseOrOp,
    "BitwiseXor": ml.BitwiseXorOp,
}


@converts("IsNaN")
def is_nan(node: Node) -> Sequence[Value]:
    x = node.input(0)
    return [node.emit(ml.CmpOp("ne", x, x))]


@converts("IsInf")
def is_inf(node: Node) -> Sequence[Value]:
    x = node.input(0)
    positive = bool(node.attr("detect_positive", 1))
    negative = bool(node.attr("detect_negative", 1))
    if positive and negative:
        return [node.emit(ml.CmpOp("eq", node.emit(ml.AbsOp(x)), node.scalar(float("inf"), x)))]
    if positive or negative:
        infinity = node.scalar(float("inf") if positive else float("-inf"), x)
        return [node.emit(ml.CmpOp("eq", x, infinity))]
    # Nothing is detected: `x < -inf` is false everywhere, NaN included.
    return [node.emit(ml.CmpOp("lt", x, node.scalar(float("-inf"), x)))]


@converts("Sign")
def sign(node: Node) -> Sequence[Value]:
    """1 above zero, -1 below, `x` itself otherwise (0, -0 as 0 for ints, NaN)."""
    x = node.input(0)
    zero = node.scalar(0, x)
    positive = node.emit(ml.CmpOp("gt", x, zero))
    result = node.emit(ml.SelectOp(positive, node.scalar(1, x), x if is_float(x) else zero))
    if dtype(x).kind == "u":
        return [result]
    negative = node.emit(ml.CmpOp("lt", x, zero))
    return [node.emit(ml.SelectOp(negative, node.scalar(-1, x), result))]


@converts("Mod")
def mod(node: Node) -> Sequence[Value]:
    a, b = node.input(0), node.input(1)
    fmod = bool(node.attr("fmod", 0))
    # The spec asks floats for fmod=1; fmod=0 on floats is numpy.mod, as on integers.
    remainder = node.emit(ml.RemOp(a, b))
    return [remainder if fmod else floored_remainder(node, remainder, b)]


def floored_remainder(node: Node, remainder: SSAValue, divisor: SSAValue) -> SSAValue:
    """numpy.mod from the truncated remainder: `r + b` where r != 0 and their signs differ."""
    zero = node.scalar(0, remainder)
    below = node.emit(ml.CmpOp("lt", remainder, zero))
    divisor_below = node.emit(ml.CmpOp("lt", divisor, zero))
    differ = node.emit(ml.CmpOp("ne", below, divisor_below))
    nonzero = node.emit(ml.CmpOp("ne", remainder, zero))
    moved = node.emit(ml.AddOp(remainder, divisor))
    result = node.emit(ml.SelectOp(node.emit(ml.BitwiseAndOp(differ, nonzero)), moved, remainder))
    if not is_float(remainder):
        return result
    # A zero remainder is +0 or -0 as the divisor's sign (numpy's copysign(0, b)).
    signed_zero = node.emit(ml.SelectOp(divisor_below, node.scalar(-0.0, remainder), zero))
    return node.emit(ml.SelectOp(node.emit(ml.CmpOp("eq", result, zero)), signed_zero, result))


@converts(*BITWISE)
def bitwise(node: Node) -> Sequence[Value]:
    return [node.emit(BITWISE[node.proto.op_type](node.input(0), node.input(1)))]


@converts("BitwiseNot")
def bitwise_not(node: Node) -> Sequence[Value]:
    return [node.emit(ml.BitwiseNotOp(node.input(0)))]


@converts("BitShift")
def bit_shift(node: Node) -> Sequence[Value]:
    direction = node.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise NodeError(f"direction must be 'LEFT' or 'RIGHT', got {direction!r}")
    op = ml.ShiftLeftOp if direction == "LEFT" else ml.ShiftRightOp
    return [node.emit(op(node.input(0), node.input(1)))]

"""Elementwise ONNX ops: arithmetic, activations, comparisons, logic, casts."""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType, f64, i1
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx import types
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    cast,
    element_of,
    fold,
    is_float,
    shape_tensor,
    sizes,
)
from mlc.frontends.onnx.ops.table import converts

BINARY: dict[str, type[ml.BinaryOp]] = {
    "Add": ml.AddOp,
    "Sub": ml.SubOp,
    "Mul": ml.MulOp,
    "Div": ml.DivOp,
}

UNARY: dict[str, type[ml.UnaryOp]] = {
    "Neg": ml.NegOp,
    "Abs": ml.AbsOp,
    "Exp": ml.ExpOp,
    "Log": ml.LogOp,
    "Sqrt": ml.SqrtOp,
    "Tanh": ml.TanhOp,
    "Sigmoid": ml.SigmoidOp,
    "Relu": ml.ReluOp,
    "Erf": ml.ErfOp,
    "Sin": ml.SinOp,
    "Cos": ml.CosOp,
    "Tan": ml.TanOp,
    "Asin": ml.AsinOp,
    "Acos": ml.AcosOp,
    "Atan": ml.AtanOp,
    "Sinh": ml.SinhOp,
    "Cosh": ml.CoshOp,
    "Asinh": ml.AsinhOp,
    "Acosh": ml.AcoshOp,
    "Atanh": ml.AtanhOp,
    "Floor": ml.FloorOp,
    "Ceil": ml.CeilOp,
    "Round": ml.RoundOp,  # halves to even, as the spec says
}

COMPARISONS = {
    "Equal": "eq",
    "Less": "lt",
    "LessOrEqual": "le",
    "Greater": "gt",
    "GreaterOrEqual": "ge",
}


@converts(*BINARY)
def binary(node: Node) -> Sequence[Value]:
    return [node.emit(BINARY[node.proto.op_type](node.input(0), node.input(1)))]


@converts("Pow")
def pow_(node: Node) -> Sequence[Value]:
    """`base ** exponent` in the base's type; integer bases are raised in f64 (exact)."""
    base = node.input(0)
    if is_float(base):
        return [node.emit(ml.PowOp(base, cast(node, node.input(1), element_of(base))))]
    wide = node.emit(ml.PowOp(cast(node, base, f64), cast(node, node.input(1), f64)))
    return [cast(node, wide, element_of(base))]


@converts(*UNARY)
def unary(node: Node) -> Sequence[Value]:
    return [node.emit(UNARY[node.proto.op_type](node.input(0)))]


@converts("Identity", "Dropout")
def identity(node: Node) -> Sequence[Value | None]:
    """Identity, and Dropout in inference (its mask, if asked for, is all true)."""
    x = node.input(0)
    if node.proto.op_type == "Dropout" and node.has(2) and bool(node.const(2, "training mode")):
        ratio = node.const(1, "ratio") if node.has(1) else np.array(0.5)
        if float(ratio) != 0.0:
            raise NodeError("training mode with a ratio other than 0 is not supported")
    if len(node.proto.output) < 2 or not node.proto.output[1]:
        return [x]
    shape = node.shape(0)
    if all(d >= 0 for d in shape):
        return [x, np.ones(shape, dtype=np.bool_)]
    true = node.constant(np.array(True))
    mask = TensorType(i1, shape)
    return [x, node.emit(ml.BroadcastToOp(true, mask, shape_tensor(node, sizes(node, x))))]


@converts("Reciprocal")
def reciprocal(node: Node) -> Sequence[Value]:
    x = node.input(0)
    return [node.emit(ml.DivOp(node.scalar(1, x), x))]


def _negative_branch(node: Node, x: SSAValue, negative: SSAValue) -> SSAValue:
    """`x` where x >= 0 (or NaN), else `negative`."""
    below = node.emit(ml.CmpOp("lt", x, node.scalar(0, x)))
    return node.emit(ml.SelectOp(below, negative, x))


@converts("LeakyRelu")
def leaky_relu(node: Node) -> Sequence[Value]:
    x = node.input(0)
    scaled = node.emit(ml.MulOp(x, node.scalar(node.attr("alpha", 0.01), x)))
    return [_negative_branch(node, x, scaled)]


@converts("Elu")
def elu(node: Node) -> Sequence[Value]:
    x = node.input(0)
    exp_minus_one = node.emit(ml.SubOp(node.emit(ml.ExpOp(x)), node.scalar(1, x)))
    scaled = node.emit(ml.MulOp(exp_minus_one, node.scalar(node.attr("alpha", 1.0), x)))
    return [_negative_branch(node, x, scaled)]


@converts("Selu")
def selu(node: Node) -> Sequence[Value]:
    x = node.input(0)
    alpha = node.attr("alpha", 1.67326319217681884765625)
    gamma = node.attr("gamma", 1.05070102214813232421875)
    exp_minus_one = node.emit(ml.SubOp(node.emit(ml.ExpOp(x)), node.scalar(1, x)))
    negative = node.emit(ml.MulOp(exp_minus_one, node.scalar(alpha, x)))
    chosen = node.emit(ml.SelectOp(node.emit(ml.CmpOp("le", x, node.scalar(0, x))), negative, x))
    return [node.emit(ml.MulOp(chosen, node.scalar(gamma, x)))]


def _clamp01(node: Node, x: SSAValue) -> SSAValue:
    low = node.emit(ml.MaxOp(x, node.scalar(0, x)))
    return node.emit(ml.MinOp(low, node.scalar(1, x)))


def _hard_sigmoid(node: Node, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    affine = node.emit(
        ml.AddOp(node.emit(ml.MulOp(x, node.scalar(alpha, x))), node.scalar(beta, x))
    )
    return _clamp01(node, affine)


@converts("HardSigmoid")
def hard_sigmoid(node: Node) -> Sequence[Value]:
    x = node.input(0)
    return [_hard_sigmoid(node, x, node.attr("alpha", 0.2), node.attr("beta", 0.5))]


@converts("HardSwish")
def hard_swish(node: Node) -> Sequence[Value]:
    x = node.input(0)
    return [node.emit(ml.MulOp(x, _hard_sigmoid(node, x, 1 / 6, 0.5)))]


@converts("Gelu", since=20)
def gelu(node: Node) -> Sequence[Value]:
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise NodeError(f"approximate must be 'none' or 'tanh', got '{approximate}'")
    return [node.emit(ml.GeluOp(node.input(0), approximate))]


@converts("Clip", since=11)
def clip(node: Node) -> Sequence[Value]:
    result = node.input(0)
    if node.has(1):
        result = node.emit(ml.MaxOp(result, node.input(1)))
    if node.has(2):
        result = node.emit(ml.MinOp(result, node.input(2)))
    return [result]


@converts("Clip", since=6)
def clip_attributes(node: Node) -> Sequence[Value]:
    x = node.input(0)
    low = node.emit(ml.MaxOp(x, node.scalar(node.attr("min", -3.4028234663852886e38), x)))
    return [node.emit(ml.MinOp(low, node.scalar(node.attr("max", 3.4028234663852886e38), x)))]


@converts("Max", "Min", "Sum", "Mean")
def variadic(node: Node) -> Sequence[Value]:
    values = [node.input(i) for i in range(len(node.proto.input)) if node.has(i)]
    op = {"Max": ml.MaxOp, "Min": ml.MinOp, "Sum": ml.AddOp, "Mean": ml.AddOp}[node.proto.op_type]
    result = fold(node, op, values)
    if node.proto.op_type == "Mean":
        result = node.emit(ml.DivOp(result, node.scalar(len(values), result)))
    return [result]


@converts(*COMPARISONS)
def compare(node: Node) -> Sequence[Value]:
    predicate = COMPARISONS[node.proto.op_type]
    return [node.emit(ml.CmpOp(predicate, node.input(0), node.input(1)))]


@converts("Not")
def not_(node: Node) -> Sequence[Value]:
    x = node.input(0)
    return [node.emit(ml.CmpOp("eq", x, node.scalar(False, x)))]


@converts("And", "Or", "Xor")
def logical(node: Node) -> Sequence[Value]:
    a, b = node.input(0), node.input(1)
    match node.proto.op_type:
        case "And":
            return [node.emit(ml.SelectOp(a, b, a))]
        case "Or":
            return [node.emit(ml.SelectOp(a, a, b))]
        case _:
            return [node.emit(ml.CmpOp("ne", a, b))]


@converts("Where")
def where(node: Node) -> Sequence[Value]:
    return [node.emit(ml.SelectOp(node.input(0), node.input(1), node.input(2)))]


@converts("Cast")
def cast_(node: Node) -> Sequence[Value]:
    try:
        element = types.element_type(node.attr("to"))
    except types.UnsupportedType as error:
        raise NodeError(f"cast to {error}") from None
    return [cast(node, node.input(0), element)]


@converts("CastLike", since=15)
def cast_like(node: Node) -> Sequence[Value]:
    return [cast(node, node.input(0), node.type(1).element_type)]  # pyright: ignore[reportUnknownMemberType]

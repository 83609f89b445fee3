"""
ONNX activations built from `ml` elementwise ops: Softplus, Softsign, Mish, Celu,
ThresholdedRelu, Shrink and PRelu (the older ones, LeakyRelu, Elu, Selu, HardSigmoid,
HardSwish and Gelu, are in `elementwise`).

Each is a few elementwise ops that `linalg-fuse-elementwise` fuses into one loop.
Softplus is `max(x, 0) + log(1 + exp(-|x|))`, which never overflows (onnxruntime's
form, to the rounding of the log).
"""

from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.build import dtype, is_float
from mlc.frontends.onnx.ops.table import converts


def softplus_of(node: Node, x: SSAValue) -> SSAValue:
    """log(1 + exp(x)), as max(x, 0) + log(1 + exp(-|x|)): no overflow for large x."""
    decay = node.emit(ml.ExpOp(node.emit(ml.NegOp(node.emit(ml.AbsOp(x))))))
    log = node.emit(ml.LogOp(node.emit(ml.AddOp(decay, node.scalar(1, x)))))
    return node.emit(ml.AddOp(node.emit(ml.ReluOp(x)), log))


@converts("Softplus")
def softplus(node: Node) -> Sequence[Value]:
    return [softplus_of(node, node.input(0))]


@converts("Softsign")
def softsign(node: Node) -> Sequence[Value]:
    x = node.input(0)
    denominator = node.emit(ml.AddOp(node.emit(ml.AbsOp(x)), node.scalar(1, x)))
    return [node.emit(ml.DivOp(x, denominator))]


@converts("Mish")
def mish(node: Node) -> Sequence[Value]:
    x = node.input(0)
    return [node.emit(ml.MulOp(x, node.emit(ml.TanhOp(softplus_of(node, x)))))]


@converts("Celu")
def celu(node: Node) -> Sequence[Value]:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = node.input(0)
    alpha = node.scalar(node.attr("alpha", 1.0), x)
    exp = node.emit(ml.ExpOp(node.emit(ml.DivOp(x, alpha))))
    exp_minus_one = node.emit(ml.SubOp(exp, node.scalar(1, x)))
    negative = node.emit(ml.MinOp(node.emit(ml.MulOp(alpha, exp_minus_one)), node.scalar(0, x)))
    return [node.emit(ml.AddOp(node.emit(ml.ReluOp(x)), negative))]


@converts("ThresholdedRelu")
def thresholded_relu(node: Node) -> Sequence[Value]:
    x = node.input(0)
    above = node.emit(ml.CmpOp("gt", x, node.scalar(node.attr("alpha", 1.0), x)))
    return [node.emit(ml.SelectOp(above, x, node.scalar(0, x)))]


@converts("Shrink")
def shrink(node: Node) -> Sequence[Value]:
    """x + bias below -lambd, x - bias above lambd, 0 between (any numeric type)."""
    x = node.input(0)
    lambd, bias = node.attr("lambd", 0.5), node.attr("bias", 0.0)
    if not is_float(x):
        lambd, bias = int(lambd), int(bias)  # the attributes are floats; onnxruntime truncates
    above = node.emit(ml.CmpOp("gt", x, node.scalar(lambd, x)))
    bias_value = node.scalar(bias, x)
    high = node.emit(ml.SelectOp(above, node.emit(ml.SubOp(x, bias_value)), node.scalar(0, x)))
    if dtype(x).kind == "u":
        return [high]  # nothing is below -lambd
    below = node.emit(ml.CmpOp("lt", x, node.scalar(-lambd, x)))
    return [node.emit(ml.SelectOp(below, node.emit(ml.AddOp(x, bias_value)), high))]


@converts("PRelu")
def prelu(node: Node) -> Sequence[Value]:
    """x where x >= 0 (or NaN), else slope * x; the slope broadcasts to x (unidirectional)."""
    x, slope = node.input(0), node.input(1)
    below = node.emit(ml.CmpOp("lt", x, node.scalar(0, x)))
    return [node.emit(ml.SelectOp(below, node.emit(ml.MulOp(x, slope)), x))]

"""
VJP rules of the elementwise ops: arithmetic, activations, select and cast.

A binary op's operands broadcast to its result, so each operand's cotangent is computed
at the result's shape and then summed over the dims broadcasting added or stretched
(`Emitter.unbroadcast`). Rules reuse the forward result where the derivative is a
function of it (exp, tanh, sigmoid, sqrt, div), as JAX's do.
"""

import math

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mlc.autodiff.emitter import Emitter, shape_of
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.dialects import ml


def to_operands(em: Emitter, op: Operation, *full: SSAValue | None) -> Cotangents:
    """Cotangents at the result's shape, each summed down to its operand's shape."""
    return [
        None if g is None else em.unbroadcast(g, shape_of(operand))
        for g, operand in zip(full, op.operands, strict=True)
    ]


# ---------------------------------------------------------------------------
# Binary arithmetic
# ---------------------------------------------------------------------------


@vjp_rule(ml.AddOp)
def add(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return to_operands(em, op, ct if needs[0] else None, ct if needs[1] else None)


@vjp_rule(ml.SubOp)
def sub(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return to_operands(em, op, ct if needs[0] else None, em.neg(ct) if needs[1] else None)


@vjp_rule(ml.MulOp)
def mul(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    a, b = op.operands
    return to_operands(
        em, op, em.mul(ct, b) if needs[0] else None, em.mul(ct, a) if needs[1] else None
    )


@vjp_rule(ml.DivOp)
def div(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # y = a / b: dy/da = 1 / b, dy/db = -y / b.
    _, b = op.operands
    y = op.results[0]
    ga = em.div(ct, b) if needs[0] else None
    gb = em.neg(em.div(em.mul(ct, y), b)) if needs[1] else None
    return to_operands(em, op, ga, gb)


@vjp_rule(ml.PowOp)
def pow_(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # y = a ** b: dy/da = b * a ** (b - 1), dy/db = y * log(a), taken as 0 where a == 0.
    a, b = op.operands
    y = op.results[0]
    ga = gb = None
    if needs[0]:
        lowered = em(ml.PowOp(a, em.sub(b, em.scalar(1.0, b))))
        ga = em.mul(ct, em.mul(b, lowered))
    if needs[1]:
        zero = em.cmp("eq", a, em.scalar(0.0, a))
        safe = em.select(zero, em.scalar(1.0, a), a)
        gb = em.mul(ct, em.mul(y, em(ml.LogOp(safe))))
    return to_operands(em, op, ga, gb)


def _choose(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...], wins: str):
    """max/min: the cotangent goes to the chosen operand; a tie splits it evenly."""
    a, b = op.operands
    half = em.select(em.cmp("eq", a, b), em.scalar(0.5, a), em.scalar(0.0, a))
    weight = em.select(em.cmp(wins, a, b), em.scalar(1.0, a), half)
    ga = em.mul(ct, weight) if needs[0] else None
    gb = em.mul(ct, em.sub(em.scalar(1.0, a), weight)) if needs[1] else None
    return to_operands(em, op, ga, gb)


@vjp_rule(ml.MaxOp)
def max_(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return _choose(em, op, ct, needs, "gt")


@vjp_rule(ml.MinOp)
def min_(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return _choose(em, op, ct, needs, "lt")


@vjp_rule(ml.SelectOp)
def select(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    cond, a, _ = op.operands
    zero = em.scalar(0.0, a)
    ga = em.select(cond, ct, zero) if needs[1] else None
    gb = em.select(cond, zero, ct) if needs[2] else None
    return to_operands(em, op, None, ga, gb)


@vjp_rule(ml.CastOp)
def cast(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # Only a float operand needs a cotangent: an integer one has no gradient.
    (x,) = op.operands
    if not needs[0]:
        return [None]
    assert isinstance(x.type, TensorType)
    return [em(ml.CastOp(ct, TensorType(x.type.element_type, shape_of(ct))))]  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


# ---------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------


def unary(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...], d) -> Cotangents:
    """ct * d(x, y), d the derivative in terms of the operand x and the result y."""
    if not needs[0]:
        return [None]
    return [em.mul(ct, d(op.operands[0], op.results[0]))]


@vjp_rule(ml.NegOp)
def neg(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return [em.neg(ct) if needs[0] else None]


@vjp_rule(ml.AbsOp)
def abs_(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    def sign(x: SSAValue, y: SSAValue) -> SSAValue:
        zero = em.scalar(0.0, x)
        negative = em.select(em.cmp("lt", x, zero), em.scalar(-1.0, x), zero)
        return em.select(em.cmp("gt", x, zero), em.scalar(1.0, x), negative)

    return unary(em, op, ct, needs, sign)


@vjp_rule(ml.ReluOp)
def relu(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    (x,) = op.operands
    if not needs[0]:
        return [None]
    zero = em.scalar(0.0, x)
    return [em.select(em.cmp("gt", x, zero), ct, zero)]


@vjp_rule(ml.ExpOp)
def exp(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return unary(em, op, ct, needs, lambda x, y: y)


@vjp_rule(ml.LogOp)
def log(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return [em.div(ct, op.operands[0]) if needs[0] else None]


@vjp_rule(ml.SqrtOp)
def sqrt(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # d sqrt(x) = 0.5 / sqrt(x)
    return [em.div(em.scale(ct, 0.5), op.results[0]) if needs[0] else None]


@vjp_rule(ml.RsqrtOp)
def rsqrt(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # d x^(-1/2) = -0.5 * x^(-1/2) / x
    return unary(em, op, ct, needs, lambda x, y: em.scale(em.div(y, x), -0.5))


@vjp_rule(ml.TanhOp)
def tanh(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return unary(em, op, ct, needs, lambda x, y: em.sub(em.scalar(1.0, y), em.mul(y, y)))


@vjp_rule(ml.SigmoidOp)
def sigmoid(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return unary(em, op, ct, needs, lambda x, y: em.mul(y, em.sub(em.scalar(1.0, y), y)))


def _gaussian(em: Emitter, x: SSAValue, factor: float) -> SSAValue:
    """factor * exp(-x * x)."""
    return em.scale(em(ml.ExpOp(em.neg(em.mul(x, x)))), factor)


@vjp_rule(ml.ErfOp)
def erf(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # d erf(x) = 2 / sqrt(pi) * exp(-x^2)
    return unary(em, op, ct, needs, lambda x, y: _gaussian(em, x, 2.0 / math.sqrt(math.pi)))


@vjp_rule(ml.GeluOp)
def gelu(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.GeluOp)
    if not needs[0]:
        return [None]
    x = op.x
    one = em.scalar(1.0, x)
    if op.approximate.data == "tanh":
        # y = x/2 (1 + t), t = tanh(u), u = c (x + k x^3):
        # dy/dx = (1 + t)/2 + x/2 (1 - t^2) c (1 + 3k x^2)
        c, k = math.sqrt(2.0 / math.pi), 0.044715
        x2 = em.mul(x, x)
        u = em.scale(em.add(x, em.scale(em.mul(x2, x), k)), c)
        t = em(ml.TanhOp(u))
        du = em.scale(em.add(one, em.scale(x2, 3.0 * k)), c)
        inner = em.mul(em.mul(em.scale(x, 0.5), em.sub(one, em.mul(t, t))), du)
        d = em.add(em.scale(em.add(one, t), 0.5), inner)
    else:
        # y = x Phi(x): dy/dx = Phi(x) + x phi(x), Phi(x) = (1 + erf(x/sqrt 2))/2
        cdf = em.scale(em.add(one, em(ml.ErfOp(em.scale(x, 1.0 / math.sqrt(2.0))))), 0.5)
        pdf = em.scale(em(ml.ExpOp(em.scale(em.mul(x, x), -0.5))), 1.0 / math.sqrt(2 * math.pi))
        d = em.add(cdf, em.mul(x, pdf))
    return [em.mul(ct, d)]

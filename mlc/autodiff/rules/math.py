"""
VJP rules of the math ops: trigonometric and hyperbolic functions and their inverses,
the truncated remainder, and the rounding ops.

floor, ceil and round are piecewise constant: their derivative is zero wherever it
exists, so they pass no cotangent back (the argument's gradient through them is zero,
as in JAX and torch). `rem(a, b) = a - trunc(a / b) * b`: `da = 1`, `db = -trunc(a / b)`,
with `trunc(a / b)` recovered from the result as `(a - y) / b`.
"""

from xdsl.ir import Operation, SSAValue

from mlc.autodiff.emitter import Emitter
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.autodiff.rules.elementwise import to_operands, unary
from mlc.dialects import ml


def _one_minus_square(em: Emitter, x: SSAValue) -> SSAValue:
    return em.sub(em.scalar(1.0, x), em.mul(x, x))


def _one_plus_square(em: Emitter, x: SSAValue) -> SSAValue:
    return em.add(em.scalar(1.0, x), em.mul(x, x))


DERIVATIVES = {
    ml.SinOp: lambda em, x, y: em(ml.CosOp(x)),
    ml.CosOp: lambda em, x, y: em.neg(em(ml.SinOp(x))),
    ml.TanOp: lambda em, x, y: _one_plus_square(em, y),
    ml.AsinOp: lambda em, x, y: em(ml.RsqrtOp(_one_minus_square(em, x))),
    ml.AcosOp: lambda em, x, y: em.neg(em(ml.RsqrtOp(_one_minus_square(em, x)))),
    ml.AtanOp: lambda em, x, y: em.div(em.scalar(1.0, x), _one_plus_square(em, x)),
    ml.SinhOp: lambda em, x, y: em(ml.CoshOp(x)),
    ml.CoshOp: lambda em, x, y: em(ml.SinhOp(x)),
    ml.AsinhOp: lambda em, x, y: em(ml.RsqrtOp(_one_plus_square(em, x))),
    ml.AcoshOp: lambda em, x, y: em(ml.RsqrtOp(em.sub(em.mul(x, x), em.scalar(1.0, x)))),
    ml.AtanhOp: lambda em, x, y: em.div(em.scalar(1.0, x), _one_minus_square(em, x)),
}


@vjp_rule(*DERIVATIVES)
def smooth(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    derivative = DERIVATIVES[type(op)]
    return unary(em, op, ct, needs, lambda x, y: derivative(em, x, y))


@vjp_rule(ml.FloorOp, ml.CeilOp, ml.RoundOp)
def rounding(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    return [None]  # zero almost everywhere


@vjp_rule(ml.RemOp)
def rem(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    a, b = op.operands
    y = op.results[0]
    ga = ct if needs[0] else None
    gb = em.neg(em.mul(ct, em.div(em.sub(a, y), b))) if needs[1] else None
    return to_operands(em, op, ga, gb)

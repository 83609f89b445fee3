"""
The table of VJP rules: for each differentiable op class, the function that builds the
cotangents of its operands from the cotangent of its result (JAX's `primitive_transposes`,
MLIR's `DerivativeInterface` rules).

A rule is called as `rule(em, op, ct, needs)`: `em` inserts the backward ops (at the
forward op's location), `ct` is the cotangent of `op`'s result (of the result's type),
and `needs[i]` says whether operand `i` wants a cotangent (it depends on a differentiated
argument through floating-point values). It returns one entry per operand: a cotangent of
that operand's type, or None where none is needed or the operand has no gradient (an
index, a condition). The families register their rules from `mlc.autodiff.rules`.
"""

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from mlc.autodiff.emitter import Emitter

Cotangents = Sequence[SSAValue | None]
Rule = Callable[[Emitter, Operation, SSAValue, tuple[bool, ...]], Cotangents]

RULES: dict[type[Operation], Rule] = {}


def vjp_rule(*op_types: type[Operation]) -> Callable[[Rule], Rule]:
    """Register the decorated function as the VJP rule of `op_types`."""

    def register(rule: Rule) -> Rule:
        for op_type in op_types:
            RULES[op_type] = rule
        return rule

    return register


def rule_for(op: Operation) -> Rule | None:
    """The rule of `op`'s class (or of the nearest base class that has one)."""
    for cls in type(op).__mro__:
        if (rule := RULES.get(cls)) is not None:  # pyright: ignore[reportArgumentType]
            return rule
    return None

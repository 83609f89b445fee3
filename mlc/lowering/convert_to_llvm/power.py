"""
`math.ipowi` and `math.fpowi` -> exponentiation by squaring in an `scf.while` loop.

LLVM has no integer power, and its `llvm.powi` becomes a call to compiler-rt's
`__powisf2`/`__powidf2`, which the JIT process need not have; so both are expanded
into arith ops before `scf` is lowered. The loop runs once per significant bit of the
exponent (at most its bit width): multiply the result by the base where the bit is
set, square the base, shift the exponent right.

Integer overflow wraps, as in numpy. A negative integer exponent (an error in numpy)
gives what C-like truncating integer division of 1 by `base ** -e` gives: 1 for base 1,
+-1 for base -1 (by the exponent's parity), and 0 for every other base, 0 included
(where the division would trap). `fpowi` with a negative exponent is `1 / x ** -e`,
as `llvm.powi` is.
"""

from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from mlc.lowering.support.locations import Located, located_builder

SUPPORTED: tuple[type[Operation], ...] = (math.IPowIOp, math.FPowIOp)


def _int(ops: Located, value: int, type_: Attribute) -> SSAValue:
    return ops(arith.ConstantOp(IntegerAttr(value, type_)))


def _power_loop(
    ops: Located, base: SSAValue, exponent: SSAValue, one: SSAValue, float_base: bool
) -> SSAValue:
    """base ** exponent (exponent read as unsigned), by squaring."""
    multiply = arith.MulfOp if float_base else arith.MuliOp
    e_type = exponent.type
    types = [base.type, base.type, e_type]
    before = Block(arg_types=types)
    zero = arith.ConstantOp(IntegerAttr(0, e_type))
    more = arith.CmpiOp(before.args[2], zero, "ne")
    located_builder(InsertPoint.at_end(before), ops.location).insert(
        [zero, more, scf.ConditionOp(more, *before.args)]
    )
    after = Block(arg_types=types)
    result, square, bits = after.args
    one_bit = arith.ConstantOp(IntegerAttr(1, e_type))
    low = arith.AndIOp(bits, one_bit)
    is_set = arith.CmpiOp(low, one_bit, "eq")
    product = multiply(result, square)
    chosen = arith.SelectOp(is_set, product, result)
    squared = multiply(square, square)
    shifted = arith.ShRUIOp(bits, one_bit)
    step = [one_bit, low, is_set, product, chosen, squared, shifted]
    located_builder(InsertPoint.at_end(after), ops.location).insert(
        [*step, scf.YieldOp(chosen, squared, shifted)]
    )
    loop = scf.WhileOp([one, base, exponent], types, [before], [after])
    ops(loop)
    return loop.results[0]


def expand_ipowi(op: math.IPowIOp) -> list[Operation]:
    ops = Located(op.location)
    type_ = op.lhs.type
    base, exponent = op.lhs, op.rhs
    zero, one, minus_one = _int(ops, 0, type_), _int(ops, 1, type_), _int(ops, -1, type_)
    negative = ops(arith.CmpiOp(exponent, zero, "slt"))
    counted = ops(arith.SelectOp(negative, zero, exponent))
    power = _power_loop(ops, base, counted, one, float_base=False)
    # Negative exponents: 1 / base ** -e, truncated.
    odd = ops(arith.CmpiOp(ops(arith.AndIOp(exponent, one)), one, "eq"))
    sign = ops(arith.SelectOp(odd, minus_one, one))
    unit = ops(arith.SelectOp(ops(arith.CmpiOp(base, minus_one, "eq")), sign, zero))
    unit = ops(arith.SelectOp(ops(arith.CmpiOp(base, one, "eq")), one, unit))
    ops(arith.SelectOp(negative, unit, power))
    return ops.ops


def expand_fpowi(op: math.FPowIOp) -> list[Operation]:
    ops = Located(op.location)
    e_type = op.rhs.type
    zero = _int(ops, 0, e_type)
    negative = ops(arith.CmpiOp(op.rhs, zero, "slt"))
    magnitude = ops(arith.SelectOp(negative, ops(arith.SubiOp(zero, op.rhs)), op.rhs))
    one = ops(arith.ConstantOp(FloatAttr(1.0, op.lhs.type)))
    power = _power_loop(ops, op.lhs, magnitude, one, float_base=True)
    ops(arith.SelectOp(negative, ops(arith.DivfOp(one, power)), power))
    return ops.ops


class ExpandPower(RewritePattern):
    """`math.ipowi`/`math.fpowi` -> a squaring loop (see the module docstring)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, math.IPowIOp):
            new = expand_ipowi(op)
        elif isinstance(op, math.FPowIOp):
            new = expand_fpowi(op)
        else:
            return
        rewriter.replace(op, new, [new[-1].results[0]])

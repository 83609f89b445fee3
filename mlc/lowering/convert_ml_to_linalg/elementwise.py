"""
Elementwise `ml` ops to one `linalg.generic` each.

The generic iterates over the result, all loops parallel; every operand is read
through its numpy broadcasting map, and the output starts as a `tensor.empty` of the
result type. A dynamic dim that may be 1 at run time without being provably the
result's size is read with `tensor.extract` at a run-time stride instead, after a
check (`broadcast`). The body is the scalar form of the op:

    %r = ml.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ==>
    %e = tensor.empty() : tensor<4x8xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
           affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], ...}
           ins(%a, %b : ...) outs(%e : tensor<4x8xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }

Integers are signed (`divsi`, `maxsi`, `sitofp`, ...) unless the element type is
unsigned (`ui8`...: `divui`, `maxui`, `uitofp`, `extui`, `cmpi ult`) or i1, which
compares and converts as unsigned (numpy's True > False); the generic bodies compute on
signless values, as `arith` wants, and `signless_types` retypes the tensors afterwards.
Float `max`/`min` propagate NaN (`arith.maximumf`/`minimumf`, as numpy.maximum), and
float comparisons are ordered except "ne", which is `une` (numpy's `nan != nan` is
True). The transcendental and rounding ops are one `math` op each (`math.sin`, ...,
`math.roundeven` for `ml.round`), which `convert-to-llvm` maps to LLVM intrinsics or
libm (libdevice on the GPU). `ml.rem` is `remsi`/`remui` with a signed divisor of -1
replaced by 1 (no `INT_MIN % -1` overflow), and an exact `fma` form on floats; shift
amounts are clamped below the bit width and an amount past it selects numpy's result (0,
or the sign fill).
"""

import math as pymath
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, IntegerAttr, IntegerType, TensorType, f32, f64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.broadcast import broadcast_operands
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    element_type,
    empty_of,
    is_unsigned,
    iterator_types,
    scalar_constant,
    signless,
)
from mlc.lowering.support.locations import keep_location

# The scalar form of an op: (the ml op, its operands' element type, scalar operands).
ScalarFn = Callable[[Operation, Attribute, Sequence[SSAValue]], SSAValue]


def float_or_int(
    float_op: Callable[[SSAValue, SSAValue], Operation],
    int_op: Callable[[SSAValue, SSAValue], Operation],
    unsigned_op: Callable[[SSAValue, SSAValue], Operation] | None = None,
) -> ScalarFn:
    """A binary scalar op that picks the float, the (signed) integer or the unsigned op."""

    def build(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
        if is_float(element):
            return float_op(*args).results[0]
        if unsigned_op is not None and is_unsigned(element):
            return unsigned_op(*args).results[0]
        return int_op(*args).results[0]

    return build


# ---------------------------------------------------------------------------
# Scalar bodies
# ---------------------------------------------------------------------------


def pow_(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    return (math.PowFOp if is_float(element) else math.IPowIOp)(*args).result


CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
CMPI_SIGNED = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
CMPI_UNSIGNED = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


def cmp(op: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    assert isinstance(op, ml.CmpOp)
    predicate = op.predicate.data
    if is_float(element):
        return arith.CmpfOp(*args, CMPF[predicate]).result
    table = CMPI_UNSIGNED if element == IntegerType(1) or is_unsigned(element) else CMPI_SIGNED
    return arith.CmpiOp(*args, table[predicate]).result


def select(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    return arith.SelectOp(*args).result


def neg(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    if is_float(element):
        return arith.NegfOp(args[0]).result
    return arith.SubiOp(scalar_constant(0, element), args[0]).result


def abs_(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    if is_unsigned(element):
        return args[0]
    return (math.AbsFOp if is_float(element) else math.AbsIOp)(args[0]).result


def relu(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    if is_unsigned(element):
        return args[0]
    zero = scalar_constant(0, element)
    return (arith.MaximumfOp if is_float(element) else arith.MaxSIOp)(args[0], zero).result


def unary_math(math_op: Callable[[SSAValue], Operation]) -> ScalarFn:
    """A float-only unary op (the `ml` verifier has rejected other element types)."""
    return lambda _, element, args: math_op(args[0]).results[0]


def integer_op(int_op: Callable[[SSAValue, SSAValue], Operation]) -> ScalarFn:
    """A binary op on integers only (the bitwise ops; the verifier rejected floats)."""
    return lambda _, element, args: int_op(*args).results[0]


def sigmoid(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    one = scalar_constant(1, element)
    exp = math.ExpOp(arith.NegfOp(args[0])).result
    return arith.DivfOp(one, arith.AddfOp(one, exp)).result


def in_f32_for_bf16(fn: ScalarFn) -> ScalarFn:
    """
    A body of several float operations, computed in f32 and rounded once when the
    element type is bf16: one `ml` op, one rounding, as ml_dtypes computes it (each
    arith op on bf16 would otherwise round on its own, two or three ulps in all).
    """

    def body(op: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
        if not isinstance(element, BFloat16Type):
            return fn(op, element, args)
        wide = [arith.ExtFOp(a, f32).result for a in args]
        return arith.TruncFOp(fn(op, f32, wide), element).result

    return body


def gelu(op: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    """`0.5 * x * (1 + erf(x / sqrt 2))`, or with tanh of the cubic in place of erf."""
    assert isinstance(op, ml.GeluOp)
    x = args[0]
    if op.approximate.data == "tanh":
        x3 = arith.MulfOp(arith.MulfOp(x, x), x)
        inner = arith.AddfOp(x, arith.MulfOp(scalar_constant(0.044715, element), x3))
        scaled = arith.MulfOp(scalar_constant(pymath.sqrt(2 / pymath.pi), element), inner)
        shape = math.TanhOp(scaled).result
    else:
        shape = math.ErfOp(arith.MulfOp(x, scalar_constant(pymath.sqrt(0.5), element))).result
    one_plus = arith.AddfOp(scalar_constant(1, element), shape)
    half_x = arith.MulfOp(scalar_constant(0.5, element), x)
    return arith.MulfOp(half_x, one_plus).result


def cast(op: Operation, source: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    """Convert between the ml element types (the ml.cast docstring gives the rules)."""
    target = element_type(op.results[0])
    x = args[0]
    if source == target:
        return x
    if target == IntegerType(1):
        zero = scalar_constant(0, source)
        if is_float(source):
            return arith.CmpfOp(x, zero, "une").result
        return arith.CmpiOp(x, zero, "ne").result
    if is_float(source) and is_float(target):
        return float_to_float(x, source, target)
    if is_float(source):
        to_int = arith.FPToUIOp if is_unsigned(target) else arith.FPToSIOp
        return to_int(x, signless(target)).result  # pyright: ignore[reportArgumentType]
    if is_float(target):
        unsigned = source == IntegerType(1) or is_unsigned(source)
        return (arith.UIToFPOp if unsigned else arith.SIToFPOp)(x, target).result
    return int_to_int(x, source, target)


def bitwidth(type_: Attribute) -> int:
    if isinstance(type_, IntegerType):
        return type_.width.data
    return type_.bitwidth  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]


def float_to_float(x: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
    if bitwidth(source) == bitwidth(target):
        # f16 <-> bf16: neither holds the other, so go through f32, which holds both.
        return arith.TruncFOp(arith.ExtFOp(x, f32), target).result
    if bitwidth(source) < bitwidth(target):
        return arith.ExtFOp(x, target).result
    return arith.TruncFOp(x, target).result


def int_to_int(x: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
    assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
    if source.width.data == target.width.data:
        return x  # signless values: i8 and ui8 hold the same bits
    if source.width.data > target.width.data:
        return arith.TruncIOp(x, signless(target)).result
    # i1 is a bool: true widens to 1, not to -1; an unsigned source widens with zeros.
    extend = arith.ExtUIOp if source.width.data == 1 or is_unsigned(source) else arith.ExtSIOp
    return extend(x, signless(target)).result


def rem(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    """
    The truncated remainder. A signed divisor of -1 becomes 1 (the remainder is 0
    either way), so `INT_MIN % -1`, which overflows (and traps on x86), cannot occur.
    """
    x, y = args
    if is_float(element):
        return float_rem(x, y, element)
    if is_unsigned(element):
        return arith.RemUIOp(x, y).result
    minus_one = arith.CmpiOp(y, scalar_constant(-1, element), "eq")
    safe = arith.SelectOp(minus_one, scalar_constant(1, element), y)
    return arith.RemSIOp(x, safe).result


def float_rem(x: SSAValue, y: SSAValue, element: Attribute) -> SSAValue:
    """
    C's `fmod`, exactly, from the truncated quotient (xDSL's `arith` has no `remf`).

    In f64 (f16, bf16 and f32 widen, exactly): q = trunc(x / y) is the truncated
    quotient or one more in magnitude (rounding is monotonic and integers below 2^53
    are exact), so r = fma(-q, y, x) is exact, |r| < |y|; one step of |y| towards x's
    sign fixes the overshoot, and r takes x's sign (a zero result is +-0 as x).
    q = 0 keeps x (y = inf would give inf * 0). Exact while |x / y| < 2^53; a zero
    divisor or an infinite x gives NaN.
    """
    wide = f64 if element != f64 else element
    if wide != element:
        x, y = arith.ExtFOp(x, wide).result, arith.ExtFOp(y, wide).result
    q = math.TruncOp(arith.DivfOp(x, y)).result
    r = math.FmaOp(arith.NegfOp(q), y, x).result
    overshoot = arith.CmpfOp(arith.MulfOp(r, x), scalar_constant(0, wide), "olt")
    step = math.CopySignOp(math.AbsFOp(y), x).result
    r = arith.SelectOp(overshoot, arith.AddfOp(r, step), r).result
    r = arith.SelectOp(arith.CmpfOp(q, scalar_constant(0, wide), "oeq"), x, r).result
    r = math.CopySignOp(r, x).result
    return r if wide == element else arith.TruncFOp(r, element).result


def int_constant(value: int, like: SSAValue) -> SSAValue:
    """
    An integer constant of `like`'s own type: a body's scalars are unsigned (`ui8`) or
    already signless, depending on how they were read; `signless_types` retypes later.
    """
    type_ = like.type
    if not is_unsigned(type_):
        return scalar_constant(value, type_)
    return arith.ConstantOp(IntegerAttr(value % 2 ** bitwidth(type_), type_)).result


def bitwise_not(_: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    ones = int_constant(1 if bitwidth(element) == 1 else -1, args[0])
    return arith.XOrIOp(args[0], ones).result


def shift(op: Operation, element: Attribute, args: Sequence[SSAValue]) -> SSAValue:
    """
    A shift whose amount is clamped below the width, so LLVM sees no poison; an amount
    at or past it (unsigned compare) gives 0, or the sign fill for a signed right shift.
    """
    x, amount = args
    width = bitwidth(element)
    clamped = arith.MinUIOp(amount, int_constant(width - 1, amount)).result
    if isinstance(op, ml.ShiftRightOp) and not is_unsigned(element):
        return arith.ShRSIOp(x, clamped).result
    shift_op = arith.ShLIOp if isinstance(op, ml.ShiftLeftOp) else arith.ShRUIOp
    shifted = shift_op(x, clamped).result
    in_range = arith.CmpiOp(amount, int_constant(width, amount), "ult")
    return arith.SelectOp(in_range, shifted, int_constant(0, shifted)).result


BODIES: dict[type[Operation], ScalarFn] = {
    ml.AddOp: float_or_int(arith.AddfOp, arith.AddiOp),
    ml.SubOp: float_or_int(arith.SubfOp, arith.SubiOp),
    ml.MulOp: float_or_int(arith.MulfOp, arith.MuliOp),
    ml.DivOp: float_or_int(arith.DivfOp, arith.DivSIOp, arith.DivUIOp),
    ml.MaxOp: float_or_int(arith.MaximumfOp, arith.MaxSIOp, arith.MaxUIOp),
    ml.MinOp: float_or_int(arith.MinimumfOp, arith.MinSIOp, arith.MinUIOp),
    ml.PowOp: pow_,
    ml.CmpOp: cmp,
    ml.SelectOp: select,
    ml.NegOp: neg,
    ml.AbsOp: abs_,
    ml.ReluOp: relu,
    ml.ExpOp: unary_math(math.ExpOp),
    ml.LogOp: unary_math(math.LogOp),
    ml.SqrtOp: unary_math(math.SqrtOp),
    ml.RsqrtOp: unary_math(math.RsqrtOp),
    ml.TanhOp: unary_math(math.TanhOp),
    ml.ErfOp: unary_math(math.ErfOp),
    ml.SigmoidOp: in_f32_for_bf16(sigmoid),
    ml.GeluOp: in_f32_for_bf16(gelu),
    ml.CastOp: cast,
    ml.SinOp: unary_math(math.SinOp),
    ml.CosOp: unary_math(math.CosOp),
    ml.TanOp: unary_math(math.TanOp),
    ml.AsinOp: unary_math(math.AsinOp),
    ml.AcosOp: unary_math(math.AcosOp),
    ml.AtanOp: unary_math(math.AtanOp),
    ml.SinhOp: unary_math(math.SinhOp),
    ml.CoshOp: unary_math(math.CoshOp),
    ml.AsinhOp: unary_math(math.AsinhOp),
    ml.AcoshOp: unary_math(math.AcoshOp),
    ml.AtanhOp: unary_math(math.AtanhOp),
    ml.FloorOp: unary_math(math.FloorOp),
    ml.CeilOp: unary_math(math.CeilOp),
    ml.RoundOp: unary_math(math.RoundEvenOp),
    ml.RemOp: rem,
    ml.BitwiseAndOp: integer_op(arith.AndIOp),
    ml.BitwiseOrOp: integer_op(arith.OrIOp),
    ml.BitwiseXorOp: integer_op(arith.XOrIOp),
    ml.BitwiseNotOp: bitwise_not,
    ml.ShiftLeftOp: shift,
    ml.ShiftRightOp: shift,
}


# ---------------------------------------------------------------------------
# The pattern
# ---------------------------------------------------------------------------


class LowerElementwise(RewritePattern):
    """Lower any elementwise `ml` op (a key of `BODIES`) to one broadcasting generic."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if (scalar_fn := BODIES.get(type(op))) is None:
            return
        operands = list(op.operands)
        data = operands[-1]  # select's cond is i1; its last operand carries the data type
        element = element_type(data)
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        out_shape = result_type.get_shape()
        rank = len(out_shape)
        with keep_location(rewriter, op):
            sizes, reads = broadcast_operands(rewriter, op, operands, out_shape)
            init = empty_of(rewriter, result_type, sizes)
            inputs = [read for read in reads if read.is_static]

            def body(args: Sequence[BlockArgument]) -> SSAValue:
                given = iter(args)
                scalars = [next(given) if read.is_static else read.extract() for read in reads]
                return scalar_fn(op, element, scalars)

            (result,) = build_generic(
                rewriter,
                [read.value for read in inputs],
                [init],
                [*(read.indexing_map(rank) for read in inputs), AffineMap.identity(rank)],
                iterator_types(rank),
                body,
            )
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerElementwise()]

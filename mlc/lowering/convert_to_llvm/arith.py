"""
`arith` -> `llvm`: one llvm op (or intrinsic call) per arith op.

`addf`/`subf`/`mulf`/`divf` keep their fast-math flags (reductions carry `reassoc` and
`contract`, so LLVM vectorises them); the flags of other ops are dropped.

Semantics worth knowing: `fptosi`/`fptoui` become `llvm.fpto[su]i.sat` intrinsics (xDSL's
`llvm` dialect has no plain `fptosi`; the saturating form agrees wherever the plain one is
defined). `uitofp` has no xDSL op either: narrow sources are zero-extended to i64 and
converted signed (exact); an i64 source uses the halve-and-double trick compilers use
for it, branch-free so loops still vectorise. `maximumf`/`minimumf` are LLVM's
NaN-propagating `llvm.maximum`/`llvm.minimum`; `maxnumf`/`minnumf` are `llvm.maxnum`/`minnum`.
"""

from collections.abc import Callable

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc.lowering.convert_to_llvm import bf16, llvm_ops
from mlc.lowering.convert_to_llvm.common import (
    Builder,
    TypeRecord,
    constant,
    llvm_type,
    replace,
)
from mlc.lowering.convert_to_llvm.half import needs_inline_truncation, truncate_f64_to_f16

BINARY_OPS: dict[type[Operation], Callable[[SSAValue, SSAValue], Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
    arith.MaxnumfOp: llvm.VectorFMaxOp,  # llvm.intr.maxnum, scalar or vector
    arith.MinnumfOp: llvm.VectorFMinOp,
}

# Binary ops that are overloaded LLVM intrinsics, named without the type suffix.
INTRINSIC_BINARY_OPS: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
}

# Casts that map one-to-one onto an LLVM cast op.
CAST_OPS: dict[type[Operation], type[llvm.GenericCastOp | llvm.IntegerConversionOp]] = {
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.BitcastOp: llvm.BitcastOp,
}

SUPPORTED: tuple[type[Operation], ...] = (
    *BINARY_OPS,
    *INTRINSIC_BINARY_OPS,
    *CAST_OPS,
    arith.ConstantOp,
    arith.CmpiOp,
    arith.CmpfOp,
    arith.SelectOp,
    arith.NegfOp,
    arith.IndexCastOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.UIToFPOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
)


class ExpandRoundingDivision(RewritePattern):
    """
    `floordivsi` / `ceildivsi` -> `divsi` (which truncates) and a correction.

    The truncated quotient is one too high (floor) or too low (ceil) exactly when the
    remainder is nonzero and its sign differs from (floor) or matches (ceil) the
    divisor's. Branch-free, so loops around it still vectorise.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, arith.FloorDivSIOp | arith.CeilDivSIOp):
            return
        lhs, rhs = op.operands
        type_ = lhs.type
        zero = arith.ConstantOp(IntegerAttr(0, type_))
        one = arith.ConstantOp(IntegerAttr(1, type_))
        quotient = arith.DivSIOp(lhs, rhs)
        remainder = arith.RemSIOp(lhs, rhs)
        inexact = arith.CmpiOp(remainder, zero, "ne")
        sign = arith.XOrIOp(remainder, rhs)
        floor = isinstance(op, arith.FloorDivSIOp)
        # remainder ^ divisor is negative iff their signs differ.
        wrong = arith.CmpiOp(sign, zero, "slt" if floor else "sge")
        adjust = arith.AndIOp(inexact, wrong)
        moved = (arith.SubiOp if floor else arith.AddiOp)(quotient, one)
        result = arith.SelectOp(adjust, moved, quotient)
        ops = [zero, one, quotient, remainder, inexact, sign, wrong, adjust, moved, result]
        for new in ops:
            new.location = op.location
        rewriter.replace(op, ops, [result.result])


def _converted(type_: Attribute) -> Attribute:
    """`llvm_type` for a scalar type the support check has already accepted."""
    converted = llvm_type(type_)
    assert converted is not None, "checked before rewriting"
    return converted


def type_suffix(type_: Attribute) -> str:
    """The overload suffix of an intrinsic name for a scalar type: `f32`, `i64`, ..."""
    return str(_converted(type_))


def unsigned_to_float(
    b: Builder, value: SSAValue, source: IntegerType, result: Attribute
) -> SSAValue:
    """`uitofp` from signed conversions only (see the module docstring)."""
    if source.width.data < 64:
        return b.emit(llvm.SIToFPOp(b.emit(llvm.ZExtOp(value, i64)), result))
    # x >= 0: plain signed conversion. Otherwise halve (keeping the low bit so rounding
    # is right), convert, and double: exact up to the final rounding, as in C compilers.
    one = b.value(1)
    halved = b.emit(llvm.OrOp(b.emit(llvm.LShrOp(value, one)), b.emit(llvm.AndOp(value, one))))
    doubled = b.emit(llvm.SIToFPOp(halved, result))
    doubled = b.emit(llvm.FAddOp(doubled, doubled))
    direct = b.emit(llvm.SIToFPOp(value, result))
    negative = b.emit(llvm.ICmpOp(value, b.value(0), IntegerAttr(2, i64)))  # slt
    return b.emit(llvm.SelectOp(negative, doubled, direct))


class ConvertConstant(RewritePattern):
    """`arith.constant` -> `llvm.mlir.constant` (index constants become i64); a scalar
    one becomes its function's shared constant (`constants`)."""

    def __init__(self, record: TypeRecord):
        self.record = record

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /) -> None:
        type_ = _converted(op.result.type)
        value = op.value
        if bf16.is_bf16(op.result.type):
            value = bf16.constant_bits(value, op.result.type)
        elif isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
            value = llvm_ops.integer_attr(value.value.data, i64)
        if (
            isinstance(value, IntegerAttr | FloatAttr)
            and (shared := self.record.constants.of(op)) is not None
        ):
            rewriter.replace(op, [], [shared.get(value, type_)])
            return
        new = llvm.ConstantOp.create(result_types=[type_], properties={"value": value})
        replace(rewriter, op, [new])  # `create`: see llvm_ops


class ConvertBinary(RewritePattern):
    """Integer and float binary arith ops -> the matching llvm op or intrinsic."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if (make := BINARY_OPS.get(type(op))) is not None:
            if issubclass(make, llvm_ops.BINARY_BASES):
                new = llvm_ops.binary(make, op.operands[0], op.operands[1])
            else:
                new = make(op.operands[0], op.operands[1])
            if isinstance(new, llvm.AbstractFloatArithOp) and isinstance(
                flags := op.properties.get("fastmath"), arith.FastMathFlagsAttr
            ):
                new.fastmathFlags = llvm.FastMathAttr(flags.data)  # reductions: reassoc
            replace(rewriter, op, [new])
        elif (name := INTRINSIC_BINARY_OPS.get(type(op))) is not None:
            type_ = _converted(op.results[0].type)
            name = f"{name}.{type_suffix(type_)}"
            replace(rewriter, op, [llvm_ops.call_intrinsic(name, op.operands, type_)])
        elif isinstance(op, arith.NegfOp):
            replace(rewriter, op, [llvm.FNegOp(op.operand)])


class ConvertCompareAndSelect(RewritePattern):
    """`arith.cmpi`/`cmpf` -> `llvm.icmp`/`fcmp` (same predicate numbering); `select`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, arith.CmpiOp):
            replace(rewriter, op, [llvm_ops.icmp(op.lhs, op.rhs, op.predicate)])
        elif isinstance(op, arith.CmpfOp):
            predicate = op.predicate.value.data
            if predicate in (0, 15):  # "false"/"true": a constant, which llvmlite needs
                replace(rewriter, op, [constant(predicate // 15, i1)])
                return
            replace(rewriter, op, [llvm.FCmpOp(op.lhs, op.rhs, op.predicate)])
        elif isinstance(op, arith.SelectOp):
            replace(rewriter, op, [llvm.SelectOp(op.cond, op.lhs, op.rhs)])


class ConvertCast(RewritePattern):
    """Scalar casts; `index_cast` is a sext/trunc to or from i64, or nothing at all."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, arith.ExtFOp | arith.TruncFOp | arith.BitcastOp) and bf16.is_bf16_cast(
            op
        ):
            self._bf16(op, rewriter)
        elif isinstance(op, arith.TruncFOp) and needs_inline_truncation(
            op.input.type, op.result.type
        ):
            b = Builder()
            truncate_f64_to_f16(b, op.input)
            replace(rewriter, op, b.ops)
        elif (make := CAST_OPS.get(type(op))) is not None:
            replace(rewriter, op, [make(op.operands[0], _converted(op.results[0].type))])
        elif isinstance(op, arith.FPToSIOp | arith.FPToUIOp):
            result = _converted(op.result.type)
            kind = "fptosi" if isinstance(op, arith.FPToSIOp) else "fptoui"
            name = f"llvm.{kind}.sat.{result}.{op.input.type}"  # prints as i32, f64, ...
            replace(rewriter, op, [llvm_ops.call_intrinsic(name, [op.input], result)])
        elif isinstance(op, arith.UIToFPOp):
            source = op.input.type
            assert isinstance(source, IntegerType), "arith.uitofp verifies this"
            b = Builder()
            unsigned_to_float(b, op.input, source, op.result.type)
            replace(rewriter, op, b.ops)
        elif isinstance(op, arith.IndexCastOp):
            source = _converted(op.input.type)
            result = _converted(op.result.type)
            assert isinstance(source, IntegerType) and isinstance(result, IntegerType)
            if source.width.data == result.width.data:
                rewriter.replace(op, [], [op.input])  # i64 <-> index: same bits
            elif source.width.data > result.width.data:
                replace(rewriter, op, [llvm.TruncOp(op.input, result)])
            else:
                replace(rewriter, op, [llvm.SExtOp(op.input, result)])

    @staticmethod
    def _bf16(
        op: arith.ExtFOp | arith.TruncFOp | arith.BitcastOp, rewriter: PatternRewriter
    ) -> None:
        """Casts from and to bf16, whose values are i16 bit patterns here."""
        if isinstance(op, arith.BitcastOp):  # bf16 <-> i16: the same bits, the same type
            rewriter.replace(op, [], [op.input])
            return
        b = Builder()
        if isinstance(op, arith.ExtFOp):
            bf16.convert_extend(b, op.input, _converted(op.result.type))
        else:
            bf16.convert_truncate(b, op.input)
        replace(rewriter, op, b.ops)

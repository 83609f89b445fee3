"""
f64 -> f16 truncation inline, without compiler-rt.

LLVM turns `fptrunc double to half` into a call to compiler-rt's `__truncdfhf2` on x86,
a symbol the JIT process does not have. Rounding f64 -> f32 -> f16 in two plain steps
is wrong (double rounding), but it is exact when the first step rounds to odd: the f32
keeps far more bits than f16 needs, and a sticky low bit records that something was
dropped, so the second (hardware, round-to-nearest-even) step sees every halfway case
correctly, subnormals and overflow to inf included.

Round to odd: `fptrunc` rounds to nearest; if that was inexact, take the neighbour
toward zero (one less in the bit pattern when the rounding went away from zero) and set
its lowest bit. f32 overflow becomes FLT_MAX (odd), which f16 rounds to inf; NaN stays.
"""

from xdsl.dialects import llvm
from xdsl.dialects.builtin import Float16Type, Float64Type, IntegerAttr, f32, i32
from xdsl.ir import Attribute, SSAValue

from mlc.lowering.convert_to_llvm.common import Builder


def needs_inline_truncation(source: Attribute, result: Attribute) -> bool:
    """Whether an `fptrunc` from `source` to `result` must avoid LLVM's library call."""
    return isinstance(source, Float64Type) and isinstance(result, Float16Type)


def _i32(b: Builder, value: int) -> SSAValue:
    return b.emit(llvm.ConstantOp(IntegerAttr(value, i32), i32))


def round_to_odd_f32(b: Builder, x: SSAValue) -> SSAValue:
    """f64 `x` as f32, rounded to odd (see the module docstring)."""
    nearest = b.emit(llvm.FPTruncOp(x, f32))
    back = b.emit(llvm.FPExtOp(nearest, x.type))
    exact = b.emit(llvm.FCmpOp(back, x, "ueq"))  # NaN counts as exact: keep it
    away = b.emit(
        llvm.FCmpOp(
            b.intrinsic(f"llvm.fabs.{x.type}", [back], x.type),
            b.intrinsic(f"llvm.fabs.{x.type}", [x], x.type),
            "ogt",
        )
    )
    bits = b.emit(llvm.BitcastOp(nearest, i32))
    toward_zero = b.emit(llvm.SubOp(bits, b.emit(llvm.ZExtOp(away, i32))))
    odd = b.emit(llvm.OrOp(toward_zero, _i32(b, 1)))
    chosen = b.emit(llvm.SelectOp(exact, bits, odd))
    return b.emit(llvm.BitcastOp(chosen, f32))


def truncate_f64_to_f16(b: Builder, x: SSAValue) -> SSAValue:
    """`fptrunc double to half`, correctly rounded, with no library call."""
    return b.emit(llvm.FPTruncOp(round_to_odd_f32(b, x), Float16Type()))

"""
compiler-rt's half-precision conversions, for compiled code that calls them.

LLVM lowers some f16 conversions to library calls: `fptrunc double to half` always
(`__truncdfhf2`; x86 has no instruction for it), and `fpext`/`fptrunc` between half and
float (`__extendhfsf2`, `__truncsfhf2`) on hosts without F16C. The JIT process has no
compiler-rt, so such code would not load (`mlc.backend.symbols`). mlc's lowerings avoid
them where they can (`mlc.lowering.convert_to_llvm.half`; the target machine has the
host's features, F16C included), and these definitions catch the rest: written in LLVM
IR with integer operations only (so they call nothing themselves), compiled once like
the other runtime code (`mlc.backend.native`) and bound to those names before any
program is loaded. They take and return `half` as LLVM passes it, as their callers do.

- `__extendhfsf2`: exact; subnormals through `mant * 2^-24`, inf and NaN kept.
- `__truncsfhf2`: round to nearest even (F. Giesen's `float_to_half_fast3_rtne`): a
  subnormal result by adding 0.5, which rounds in the FPU; a normal one by adding
  0xfff and the lowest kept bit before dropping 13 bits; overflow to inf, NaN to a
  quiet NaN.
- `__truncdfhf2`: rounded to odd as f32, then as above: exact, as in
  `mlc.lowering.convert_to_llvm.half`.
"""

from functools import cache

import llvmlite.binding as llvm

from mlc.backend.native import compile_runtime, function_address

NAMES = ("__extendhfsf2", "__truncsfhf2", "__truncdfhf2")

RUNTIME_IR = r"""
declare double @llvm.fabs.f64(double)

define float @__extendhfsf2(half %h) {
  %bits = bitcast half %h to i16
  %x = zext i16 %bits to i32
  %sign = and i32 %x, 32768
  %sign32 = shl i32 %sign, 16
  %magnitude = and i32 %x, 32767
  %shifted = shl i32 %magnitude, 13
  %normal = add i32 %shifted, 939524096          ; exponent + (127 - 15), as f32 bits
  %special = add i32 %normal, 939524096          ; exponent 31 -> 255: inf, NaN
  %is_special = icmp uge i32 %magnitude, 31744
  %is_small = icmp ult i32 %magnitude, 1024      ; zero or subnormal
  %mantissa = uitofp i32 %magnitude to float
  %small = fmul float %mantissa, 0x3E70000000000000  ; * 2^-24, exact
  %small_bits = bitcast float %small to i32
  %large = select i1 %is_special, i32 %special, i32 %normal
  %unsigned = select i1 %is_small, i32 %small_bits, i32 %large
  %result = or i32 %unsigned, %sign32
  %f = bitcast i32 %result to float
  ret float %f
}

define half @__truncsfhf2(float %f) {
  %u = bitcast float %f to i32
  %sign = and i32 %u, -2147483648
  %a = xor i32 %u, %sign
  %is_big = icmp uge i32 %a, 1199570944          ; >= 2^16: past f16's range
  %is_nan = icmp ugt i32 %a, 2139095040
  %big = select i1 %is_nan, i32 32256, i32 31744 ; quiet NaN, inf
  %is_small = icmp ult i32 %a, 947912704         ; < 2^-14: an f16 subnormal or zero
  %af = bitcast i32 %a to float
  %magic = fadd float %af, 5.000000e-01          ; rounds to the subnormal's last bit
  %magic_bits = bitcast float %magic to i32
  %small = sub i32 %magic_bits, 1056964608
  %kept = lshr i32 %a, 13
  %odd = and i32 %kept, 1
  %rebased = add i32 %a, -939520001              ; exponent - (127 - 15), + 0xfff
  %rounded = add i32 %rebased, %odd
  %normal = lshr i32 %rounded, 13
  %finite = select i1 %is_small, i32 %small, i32 %normal
  %unsigned = select i1 %is_big, i32 %big, i32 %finite
  %sign16 = lshr i32 %sign, 16
  %result = or i32 %unsigned, %sign16
  %bits = trunc i32 %result to i16
  %h = bitcast i16 %bits to half
  ret half %h
}

define half @__truncdfhf2(double %x) {
  %nearest = fptrunc double %x to float
  %back = fpext float %nearest to double
  %exact = fcmp ueq double %back, %x
  %back_size = call double @llvm.fabs.f64(double %back)
  %x_size = call double @llvm.fabs.f64(double %x)
  %away = fcmp ogt double %back_size, %x_size
  %bits = bitcast float %nearest to i32
  %step = zext i1 %away to i32
  %toward_zero = sub i32 %bits, %step
  %odd = or i32 %toward_zero, 1
  %chosen = select i1 %exact, i32 %bits, i32 %odd
  %f = bitcast i32 %chosen to float
  %h = call half @__truncsfhf2(float %f)
  ret half %h
}
"""


@cache
def install() -> None:
    """Bind the conversions' names for code the JIT loads (once per process)."""
    engine = compile_runtime(RUNTIME_IR)
    for name in NAMES:
        llvm.add_symbol(name, function_address(engine, name))

"""
`math` -> `llvm`: LLVM intrinsics where LLVM has one, inline code or libm otherwise.

`math.exp` on f32 (and f16, through f32) is inline (Cephes' expf, within 2 ulp):
LLVM has no vector form of `llvm.exp` without a vector math library, so softmax,
sigmoid and gelu loops would stay scalar around libm calls. f64 keeps `llvm.exp`.
`math.tanh` on f32 (and f16) is inline for the same reason, as a rational function
(onnxruntime's and Eigen's, within 5 ulp): the LSTM's and GRU's gates and the tanh GELU.
f64 keeps `llvm.tanh`.

Intrinsics (`llvm.exp.f32`, `llvm.tanh.f64`, ...) let LLVM constant-fold and, where it
has a vector form, vectorise. `math.erf` has no intrinsic: f32 (and f16, through f32)
gets an inline approximation, so loops over it stay vectorisable; f64 calls libm's `erf`
for full accuracy. `log1p`/`expm1` call libm (`log1pf`, `log1p`, ...), since the
intrinsic-based `log(1 + x)` loses the small-x accuracy they exist for. `rsqrt` is
`1 / sqrt(x)`.

In GPU kernels (`convert-to-llvm{libdevice=true}`, as convert-gpu-to-nvvm runs it) f32
and f16 `exp`, `tanh` and `erf` are instead `llvm.exp`, `llvm.tanh` and libm's `erff`,
which the PTX translation redirects to libdevice's `__nv_expf`, `__nv_tanhf` and
`__nv_erff` (2 ulp): built on the hardware's `ex2.approx`, they take a fraction of the
inline forms' instructions, which a GELU epilogue fused into a matmul pays for every
element (the inline erf's reciprocal and exp were ~60 of them).

The trigonometric and hyperbolic functions are intrinsics where LLVM has one
(`llvm.sin`, `llvm.asin`, `llvm.sinh`, ...: libm calls on the CPU, which LLVM can
constant-fold) and libm calls otherwise (`asinh`, `acosh`, `atanh`, `atan`). The GPU
translation (`mlc.backend.ptx`) redirects both kinds to their libdevice twins, so each
function has one lowering here and the accuracy of libm / libdevice (a few ulp at most)
on both targets, edges (inf, NaN, -0, poles) included.
"""

from collections.abc import Callable

from xdsl.dialects import llvm, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlc.lowering.convert_to_llvm.common import Builder, TypeRecord, replace

# Overloaded intrinsics taking and returning the operand type: `<name>.<type>`.
UNARY_INTRINSICS: dict[type[Operation], str] = {
    math.AbsFOp: "llvm.fabs",
    math.CeilOp: "llvm.ceil",
    math.FloorOp: "llvm.floor",
    math.RoundOp: "llvm.round",
    math.RoundEvenOp: "llvm.roundeven",
    math.TruncOp: "llvm.trunc",
    math.SqrtOp: "llvm.sqrt",
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.Log10Op: "llvm.log10",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.TanOp: "llvm.tan",
    math.AsinOp: "llvm.asin",
    math.AcosOp: "llvm.acos",
    math.SinhOp: "llvm.sinh",
    math.CoshOp: "llvm.cosh",
    math.TanhOp: "llvm.tanh",
    math.AbsIOp: "llvm.abs",  # takes an extra i1 "poison if INT_MIN" flag
    math.CtPopOp: "llvm.ctpop",
}

BINARY_INTRINSICS: dict[type[Operation], str] = {
    math.PowFOp: "llvm.pow",
    math.CopySignOp: "llvm.copysign",
}

# libm functions by op, with the f32 name first and the f64 name second.
LIBM_FUNCTIONS: dict[type[Operation], tuple[str, str]] = {
    math.Log1pOp: ("log1pf", "log1p"),
    math.ExpM1Op: ("expm1f", "expm1"),
    math.AtanOp: ("atanf", "atan"),
    math.Atan2Op: ("atan2f", "atan2"),
    math.AsinhOp: ("asinhf", "asinh"),
    math.AcoshOp: ("acoshf", "acosh"),
    math.AtanhOp: ("atanhf", "atanh"),
}

SUPPORTED: tuple[type[Operation], ...] = (
    *UNARY_INTRINSICS,
    *BINARY_INTRINSICS,
    *LIBM_FUNCTIONS,
    math.RsqrtOp,
    math.FmaOp,
    math.FPowIOp,
    math.ErfOp,
)

# Abramowitz & Stegun 7.1.26: erf(x) = 1 - t (a1 + t (a2 + ...)) exp(-x^2),
# t = 1 / (1 + p x) for x >= 0; absolute error below 1.5e-7.
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
# Below |x| = 0.5 the Maclaurin series 2/sqrt(pi) (x - x^3/3 + x^5/10 - x^7/42 + x^9/216)
# keeps the *relative* error near zero small too (< 1e-6), which A&S alone does not.
_TAYLOR = (
    1.1283791670955126,
    -0.37612638903183754,
    0.11283791670955126,
    -0.026866170645131252,
    0.005223977625442188,
)


def _float(b: Builder, value: float, type_: Attribute) -> SSAValue:
    return b.emit(llvm.ConstantOp(FloatAttr(value, type_), type_))


def _horner(b: Builder, x: SSAValue, coefficients: tuple[float, ...], type_: Attribute) -> SSAValue:
    """c0 + x (c1 + x (c2 + ...)) with fused multiply-adds."""
    acc = _float(b, coefficients[-1], type_)
    for c in reversed(coefficients[:-1]):
        acc = b.intrinsic(f"llvm.fma.{type_}", [acc, x, _float(b, c, type_)], type_)
    return acc


# exp on f32 (Cephes' expf): exp(x) = 2^n * e^r, n = round(x / ln 2), |r| <= ln 2 / 2,
# ln 2 split in two so that r is exact; e^r = 1 + r + r^2 P(r), within 2 ulp.
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4
_EXP_P = (5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3, 1.3981999507e-3)
_EXP_P6 = 1.9875691500e-4
# Beyond these, exp overflows to inf or underflows to 0 (e^-104 is under half of the
# least subnormal, 2^-149).
_EXP_MAX, _EXP_MIN = 89.0, -104.0


def _power_of_two(b: Builder, exponent: SSAValue) -> SSAValue:
    """2^exponent as an f32, for an i32 exponent in the normal range [-126, 127]."""
    biased = b.emit(llvm.AddOp(exponent, b.emit(llvm.ConstantOp(IntegerAttr(127, i32), i32))))
    bits = b.emit(llvm.ShlOp(biased, b.emit(llvm.ConstantOp(IntegerAttr(23, i32), i32))))
    return b.emit(llvm.BitcastOp(bits, f32))


# 1.5 * 2^23: an f32 integer of magnitude under 2^22 added to it lands, exactly, in the
# low bits of the mantissa, whose bit pattern is then that of the integer plus this one's.
_MAGIC = 12582912.0
_MAGIC_BITS = 0x4B400000


def _integral_to_i32(b: Builder, n: SSAValue) -> SSAValue:
    """
    An integer-valued f32 of magnitude under 2^22 as an i32, by a bitcast (two vector
    instructions): LLVM scalarises `fptosi.sat` on x86 without AVX-512, lane by lane.
    A NaN gives some integer (exp's result is NaN from its other factor anyway).
    """
    shifted = b.emit(llvm.BitcastOp(b.emit(llvm.FAddOp(n, _float(b, _MAGIC, f32))), i32))
    return b.emit(llvm.SubOp(shifted, b.emit(llvm.ConstantOp(IntegerAttr(_MAGIC_BITS, i32), i32))))


def exp_f32(b: Builder, x: SSAValue) -> SSAValue:
    """
    Inline branch-free exp for f32, so loops over it vectorise (libm's expf does not).

    NaN propagates through the clamp (`llvm.minimum`); 2^n is applied as two factors
    2^(n/2) 2^(n - n/2), so results in the subnormal range and overflow to inf come out
    right without a branch. Below `_EXP_MIN` the result is 0, selected, and the lane
    computes exp(0) meanwhile: computed, those lanes would underflow through
    subnormals, which x86 finishes in microcode assists of ~100 cycles each, and the
    lanes below it are common (masked attention scores and softmax inputs are -inf or
    float32's lowest: 18 us instead of about 1 for a causal block of 784 scores).
    """
    vanishes = b.emit(llvm.FCmpOp(x, _float(b, _EXP_MIN, f32), "olt"))
    zero = _float(b, 0.0, f32)
    x = b.emit(llvm.SelectOp(vanishes, zero, x))
    x = b.intrinsic("llvm.minimum.f32", [x, _float(b, _EXP_MAX, f32)], f32)
    n = b.intrinsic(
        "llvm.roundeven.f32", [b.emit(llvm.FMulOp(x, _float(b, 1.4426950409, f32)))], f32
    )
    r = b.intrinsic("llvm.fma.f32", [n, _float(b, -_LN2_HI, f32), x], f32)
    r = b.intrinsic("llvm.fma.f32", [n, _float(b, -_LN2_LO, f32), r], f32)
    poly = _horner(b, r, (*_EXP_P, _EXP_P6), f32)
    r2 = b.emit(llvm.FMulOp(r, r))
    e_r = b.emit(llvm.FAddOp(b.intrinsic("llvm.fma.f32", [r2, poly, r], f32), _float(b, 1.0, f32)))
    k = _integral_to_i32(b, n)
    half = b.emit(llvm.AShrOp(k, b.emit(llvm.ConstantOp(IntegerAttr(1, i32), i32))))
    rest = b.emit(llvm.SubOp(k, half))
    scaled = b.emit(llvm.FMulOp(e_r, _power_of_two(b, half)))
    result = b.emit(llvm.FMulOp(scaled, _power_of_two(b, rest)))
    return b.emit(llvm.SelectOp(vanishes, zero, result))


# tanh on f32 as onnxruntime's MLAS and Eigen compute it: x P(x^2) / Q(x^2), a rational
# minimax form of degrees 13 / 6, on x clamped to +-_TANH_CLAMP (where, with fused
# multiply-adds, it reaches 1.0); below |x| = _TANH_TINY tanh(x) is x to float32.
_TANH_CLAMP = 7.99881172180175781
_TANH_TINY = 0.0004
_TANH_P = (
    4.89352455891786e-03,
    6.37261928875436e-04,
    1.48572235717979e-05,
    5.12229709037114e-08,
    -8.60467152213735e-11,
    2.00018790482477e-13,
    -2.76076847742355e-16,
)
_TANH_Q = (4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06)


def tanh_f32(b: Builder, x: SSAValue) -> SSAValue:
    """
    Inline branch-free tanh for f32, so loops over it vectorise (libm's tanhf does not):
    about 15 instructions and one division, against ~40 for 1 - 2 / (exp(2|x|) + 1),
    within 5 ulp (the exp form was within 3; the LSTM's and GRU's gates run two tanh an
    element, a tanh GELU one).

    The clamp (`llvm.minimum`/`maximum`) saturates +-inf to +-1 and propagates NaN; tiny
    inputs are returned as they are, so that -0 stays -0 and subnormals are exact.
    """
    clamp = _float(b, _TANH_CLAMP, f32)
    y = b.intrinsic("llvm.minimum.f32", [x, clamp], f32)
    y = b.intrinsic("llvm.maximum.f32", [y, _float(b, -_TANH_CLAMP, f32)], f32)
    y2 = b.emit(llvm.FMulOp(y, y))
    p = b.emit(llvm.FMulOp(y, _horner(b, y2, _TANH_P, f32)))
    q = _horner(b, y2, _TANH_Q, f32)
    ratio = b.emit(llvm.FDivOp(p, q))
    ax = b.intrinsic("llvm.fabs.f32", [x], f32)
    tiny = b.emit(llvm.FCmpOp(ax, _float(b, _TANH_TINY, f32), "olt"))
    return b.emit(llvm.SelectOp(tiny, x, ratio))


def erf_f32(b: Builder, x: SSAValue) -> SSAValue:
    """Inline branch-free erf for f32 (A&S 7.1.26, Maclaurin series near zero)."""
    ax = b.intrinsic("llvm.fabs.f32", [x], f32)
    # A&S on |x|, sign restored with copysign.
    denominator = b.intrinsic("llvm.fma.f32", [_float(b, _AS_P, f32), ax, _float(b, 1.0, f32)], f32)
    t = b.emit(llvm.FDivOp(_float(b, 1.0, f32), denominator))
    poly = b.emit(llvm.FMulOp(t, _horner(b, t, _AS_A, f32)))
    x2 = b.emit(llvm.FMulOp(x, x))
    gauss = exp_f32(b, b.emit(llvm.FNegOp(x2)))
    tail = b.emit(llvm.FSubOp(_float(b, 1.0, f32), b.emit(llvm.FMulOp(poly, gauss))))
    tail = b.intrinsic("llvm.copysign.f32", [tail, x], f32)
    series = b.emit(llvm.FMulOp(x, _horner(b, x2, _TAYLOR, f32)))
    small = b.emit(llvm.FCmpOp(ax, _float(b, 0.5, f32), "olt"))
    return b.emit(llvm.SelectOp(small, series, tail))


# The f32 functions written out inline (f16 through f32; see the module docstring).
INLINE_F32: dict[type[Operation], Callable[[Builder, SSAValue], SSAValue]] = {
    math.ExpOp: exp_f32,
    math.TanhOp: tanh_f32,
    math.ErfOp: erf_f32,
}


class ConvertMath(RewritePattern):
    """Every supported `math` op (see the module docstring)."""

    def __init__(self, record: TypeRecord, libdevice: bool = False):
        self.record = record
        self.libdevice = libdevice

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.dialect_name() != "math" or not op.results:
            return  # not a math op
        type_ = op.results[0].type
        b = self.record.builder(op)
        if not self._intrinsic(b, op, type_):
            self._other(b, op, type_)
        replace(rewriter, op, b.ops)

    def _intrinsic(self, b: Builder, op: Operation, type_: Attribute) -> bool:
        """One overloaded LLVM intrinsic call for the op, or False if it has none."""
        args = list(op.operands)
        if isinstance(op, math.ExpOp | math.TanhOp) and isinstance(
            type_, Float32Type | Float16Type
        ):
            if not self.libdevice:
                return False  # inline, see `exp_f32` and `tanh_f32`
        if (name := UNARY_INTRINSICS.get(type(op))) is not None:
            if isinstance(op, math.AbsIOp):
                args.append(b.emit(llvm.ConstantOp(IntegerAttr(0, i1), i1)))  # no poison
        elif (name := BINARY_INTRINSICS.get(type(op))) is not None:
            pass
        elif isinstance(op, math.FmaOp):
            name = "llvm.fma"
        elif isinstance(op, math.FPowIOp):
            name = f"llvm.powi.{type_}.{op.rhs.type}"
            b.intrinsic(name, args, type_)
            return True
        else:
            return False
        b.intrinsic(f"{name}.{type_}", args, type_)
        return True

    def _other(self, b: Builder, op: Operation, type_: Attribute) -> None:
        """rsqrt, libm calls and erf."""
        if isinstance(op, math.RsqrtOp):
            root = b.intrinsic(f"llvm.sqrt.{type_}", [op.operand], type_)
            b.emit(llvm.FDivOp(_float(b, 1.0, type_), root))
        elif (names := LIBM_FUNCTIONS.get(type(op))) is not None:
            self._libm(b, names, list(op.operands), type_)
        elif isinstance(op, math.ErfOp) and (isinstance(type_, Float64Type) or self.libdevice):
            self._libm(b, ("erff", "erf"), [op.operand], type_)
        elif (inline := INLINE_F32.get(type(op))) is not None:
            if isinstance(type_, Float16Type):  # through f32
                wide = inline(b, b.emit(llvm.FPExtOp(op.operand, f32)))
                b.emit(llvm.FPTruncOp(wide, type_))
            else:
                inline(b, op.operand)

    def _libm(
        self, b: Builder, names: tuple[str, str], args: list[SSAValue], type_: Attribute
    ) -> None:
        """Call libm's f32 or f64 function; f16 and bf16 go through f32."""
        if isinstance(type_, Float16Type | BFloat16Type):
            wide = [b.emit(llvm.FPExtOp(arg, f32)) for arg in args]
            self._libm(b, names, wide, f32)
            b.emit(llvm.FPTruncOp(b.ops[-1].results[0], type_))
            return
        name = names[0] if isinstance(type_, Float32Type) else names[1]
        self.record.declare(name, [type_] * len(args), type_)
        b.call(name, args, type_)

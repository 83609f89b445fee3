// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null

// math ops with an LLVM intrinsic become calls of the type-suffixed intrinsic.

// CHECK-LABEL: llvm.func @intrinsics(%x: f32, %y: f32) -> f32
// CHECK-NEXT:    %[[E:.*]] = llvm.call_intrinsic "llvm.exp2.f32"(%x) : (f32) -> f32
// CHECK-NEXT:    %[[L:.*]] = llvm.call_intrinsic "llvm.log.f32"(%[[E]]) : (f32) -> f32
// CHECK-NEXT:    %[[P:.*]] = llvm.call_intrinsic "llvm.pow.f32"(%[[L]], %y) : (f32, f32) -> f32
// CHECK-NEXT:    %[[F:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[P]], %x, %y) : (f32, f32, f32) -> f32
// CHECK-NEXT:    %[[A:.*]] = llvm.call_intrinsic "llvm.fabs.f32"(%[[F]]) : (f32) -> f32
// CHECK-NEXT:    %[[M:.*]] = llvm.call_intrinsic "llvm.maximum.f32"(%[[A]], %x) : (f32, f32) -> f32
// CHECK-NEXT:    llvm.return %[[M]] : f32
func.func @intrinsics(%x: f32, %y: f32) -> f32 {
  %0 = math.exp2 %x : f32
  %2 = math.log %0 : f32
  %3 = math.powf %2, %y : f32
  %4 = math.fma %3, %x, %y : f32
  %5 = math.absf %4 : f32
  %6 = arith.maximumf %5, %x : f32
  func.return %6 : f32
}

// -----

// tanh on f32 is inline straight-line code (no call, no exp): a rational function of
// x clamped to +-7.9988, one division, x itself below |x| = 4e-4; so loops over it
// vectorise. f16 goes through it in f32, f64 keeps the intrinsic.

// CHECK-LABEL: llvm.func @tanh32(%x: f32) -> f32
// CHECK-NOT:     llvm.call @
// CHECK-NOT:     "llvm.roundeven.f32"
// CHECK:         %[[HI:.*]] = llvm.call_intrinsic "llvm.minimum.f32"(%x, %{{.*}}) : (f32, f32) -> f32
// CHECK:         %[[Y:.*]] = llvm.call_intrinsic "llvm.maximum.f32"(%[[HI]], %{{.*}}) : (f32, f32) -> f32
// CHECK-NEXT:    %[[Y2:.*]] = llvm.fmul %[[Y]], %[[Y]] : f32
// CHECK-COUNT-6: llvm.call_intrinsic "llvm.fma.f32"({{.*}}, %[[Y2]], {{.*}})
// CHECK:         %[[P:.*]] = llvm.fmul %[[Y]], %{{.*}} : f32
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.fma.f32"({{.*}}, %[[Y2]], {{.*}})
// CHECK-NEXT:    %[[R:.*]] = llvm.fdiv %[[P]], %{{.*}} : f32
// CHECK-NEXT:    %[[ABS:.*]] = llvm.call_intrinsic "llvm.fabs.f32"(%x) : (f32) -> f32
// CHECK-NEXT:    %[[TINY_C:.*]] = llvm.mlir.constant(4.000000e-04 : f32) : f32
// CHECK-NEXT:    %[[TINY:.*]] = llvm.fcmp "olt" %[[ABS]], %[[TINY_C]] : f32
// CHECK-NEXT:    %[[T:.*]] = llvm.select %[[TINY]], %x, %[[R]] : i1, f32
// CHECK-NEXT:    llvm.return %[[T]] : f32
// CHECK-LABEL: llvm.func @tanh16(%{{.*}}: f16) -> f16
// CHECK-NEXT:    %{{.*}} = llvm.fpext %{{.*}} : f16 to f32
// CHECK-NOT:     llvm.call @
// CHECK:         llvm.fptrunc %{{.*}} : f32 to f16
// CHECK-NEXT:    llvm.return
// CHECK-LABEL: llvm.func @tanh64(%{{.*}}: f64) -> f64
// CHECK-NEXT:    %[[T:.*]] = llvm.call_intrinsic "llvm.tanh.f64"(%{{.*}}) : (f64) -> f64
// CHECK-NEXT:    llvm.return %[[T]] : f64
func.func @tanh32(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  func.return %0 : f32
}
func.func @tanh16(%x: f16) -> f16 {
  %0 = math.tanh %x : f16
  func.return %0 : f16
}
func.func @tanh64(%x: f64) -> f64 {
  %0 = math.tanh %x : f64
  func.return %0 : f64
}

// -----

// rsqrt is 1 / sqrt(x).

// CHECK-LABEL: llvm.func @rsqrt(%x: f64) -> f64
// CHECK-NEXT:    %[[S:.*]] = llvm.call_intrinsic "llvm.sqrt.f64"(%x) : (f64) -> f64
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f64) : f64
// CHECK-NEXT:    %{{.*}} = llvm.fdiv %[[ONE]], %[[S]] : f64
func.func @rsqrt(%x: f64) -> f64 {
  %0 = math.rsqrt %x : f64
  func.return %0 : f64
}

// -----

// erf on f32 is inline straight-line code (no call), so loops over it vectorise;
// on f64 it calls libm's erf, which the pass declares.

// CHECK:       llvm.func @erf(f64) -> f64
// CHECK-LABEL: llvm.func @erf32(%x: f32) -> f32
// CHECK-NOT:     llvm.call @
// CHECK-NOT:     "llvm.exp.f32"
// CHECK:         llvm.call_intrinsic "llvm.roundeven.f32"
// CHECK:         llvm.select
// CHECK:         llvm.select
// CHECK-NEXT:    llvm.return
// CHECK-LABEL: llvm.func @erf64(%{{.*}}: f64) -> f64
// CHECK-NEXT:    %[[R:.*]] = llvm.call @erf(%{{.*}}) : (f64) -> f64
// CHECK-NEXT:    llvm.return %[[R]] : f64
func.func @erf32(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  func.return %0 : f32
}
func.func @erf64(%x: f64) -> f64 {
  %0 = math.erf %x : f64
  func.return %0 : f64
}

// -----

// The arith casts without a plain xDSL llvm op: saturating intrinsics, and uitofp
// through zext + sitofp (narrow) or the halve-and-double select (i64).

// CHECK-LABEL: llvm.func @casts
// CHECK-NEXT:    llvm.call_intrinsic "llvm.fptoui.sat.i32.f32"(%x) : (f32) -> i32
// CHECK-NEXT:    %[[Z:.*]] = llvm.zext %b : i1 to i64
// CHECK-NEXT:    llvm.sitofp %[[Z]] : i64 to f32
// CHECK:         llvm.icmp "slt" %n
// CHECK-NEXT:    llvm.select
// CHECK:         llvm.bitcast %x : f32 to i32
// CHECK:         llvm.fcmp "uno" %x, %x : f32
func.func @casts(%x: f32, %b: i1, %n: i64) -> (i32, f32, f64, i32, i1) {
  %0 = arith.fptoui %x : f32 to i32
  %1 = arith.uitofp %b : i1 to f32
  %2 = arith.uitofp %n : i64 to f64
  %3 = arith.bitcast %x : f32 to i32
  %4 = arith.cmpf uno, %x, %x : f32
  func.return %0, %1, %2, %3, %4 : i32, f32, f64, i32, i1
}

// -----

// exp on f32 is inline too (Cephes' expf): clamp, n = roundeven(x log2 e), the
// reduced argument with ln 2 in two parts, a polynomial, and 2^n as two exponent
// bit patterns. n becomes an i32 through the bits of n + 1.5 * 2^23 (0x4B400000),
// not a saturating conversion, which x86 without AVX-512 runs lane by lane.
// Below -104 (under half the least subnormal) the lane computes exp(0) and 0 is
// selected after: no underflow through subnormals. f16 goes through it in f32; f64
// keeps the intrinsic.

// CHECK-LABEL: llvm.func @exp32(%x: f32) -> f32
// CHECK-NOT:     llvm.call @
// CHECK:         %[[MIN:.+]] = llvm.mlir.constant(-1.040000e+02 : f32) : f32
// CHECK-NEXT:    %[[LOW:.+]] = llvm.fcmp "olt" %x, %[[MIN]] : f32
// CHECK-NEXT:    %[[ZERO:.+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    %[[SAFE:.+]] = llvm.select %[[LOW]], %[[ZERO]], %x : i1, f32
// CHECK-NEXT:    %{{.+}} = llvm.mlir.constant(8.900000e+01 : f32) : f32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.minimum.f32"(%[[SAFE]], %{{.*}})
// CHECK-NOT:     llvm.call_intrinsic "llvm.maximum.f32"
// CHECK:         %[[N:.+]] = llvm.call_intrinsic "llvm.roundeven.f32"
// CHECK-NOT:     fptosi
// CHECK:         %[[MAGIC:.+]] = llvm.mlir.constant(0x4B400000 : f32) : f32
// CHECK:         %[[SHIFTED:.+]] = llvm.fadd %[[N]], %[[MAGIC]] : f32
// CHECK-NEXT:    %[[BITS:.+]] = llvm.bitcast %[[SHIFTED]] : f32 to i32
// CHECK-NEXT:    %[[OFFSET:.+]] = llvm.mlir.constant(1262485504 : i32) : i32
// CHECK-NEXT:    llvm.sub %[[BITS]], %[[OFFSET]] : i32
// CHECK:         llvm.shl
// CHECK:         llvm.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[R:.+]] = llvm.select %[[LOW]], %[[ZERO]], %{{.+}} : i1, f32
// CHECK-NEXT:    llvm.return %[[R]]
// CHECK-LABEL: llvm.func @exp16(%{{.*}}: f16) -> f16
// CHECK-NEXT:    llvm.fpext %{{.*}} : f16 to f32
// CHECK:         llvm.fptrunc %{{.*}} : f32 to f16
// CHECK-LABEL: llvm.func @exp64(%{{.*}}: f64) -> f64
// CHECK-NEXT:    %[[E:.*]] = llvm.call_intrinsic "llvm.exp.f64"(%{{.*}}) : (f64) -> f64
// CHECK-NEXT:    llvm.return %[[E]] : f64
func.func @exp32(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  func.return %0 : f32
}
func.func @exp16(%x: f16) -> f16 {
  %0 = math.exp %x : f16
  func.return %0 : f16
}
func.func @exp64(%x: f64) -> f64 {
  %0 = math.exp %x : f64
  func.return %0 : f64
}

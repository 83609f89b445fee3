// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// f64 -> f16 rounds to odd in f32 first (no `fptrunc double to half`, which would call
// compiler-rt's __truncdfhf2), then truncates f32 -> f16.

// CHECK-LABEL: llvm.func @f64_to_f16(%x: f64) -> f16
// CHECK-NEXT:    %[[N:.*]] = llvm.fptrunc %x : f64 to f32
// CHECK-NEXT:    %[[B:.*]] = llvm.fpext %[[N]] : f32 to f64
// CHECK-NEXT:    %[[EXACT:.*]] = llvm.fcmp "ueq" %[[B]], %x : f64
// CHECK-NEXT:    %[[AB:.*]] = llvm.call_intrinsic "llvm.fabs.f64"(%[[B]]) : (f64) -> f64
// CHECK-NEXT:    %[[AX:.*]] = llvm.call_intrinsic "llvm.fabs.f64"(%x) : (f64) -> f64
// CHECK-NEXT:    %[[AWAY:.*]] = llvm.fcmp "ogt" %[[AB]], %[[AX]] : f64
// CHECK-NEXT:    %[[BITS:.*]] = llvm.bitcast %[[N]] : f32 to i32
// CHECK-NEXT:    %[[STEP:.*]] = llvm.zext %[[AWAY]] : i1 to i32
// CHECK-NEXT:    %[[TZ:.*]] = llvm.sub %[[BITS]], %[[STEP]] : i32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[ODD:.*]] = llvm.or %[[TZ]], %[[ONE]] : i32
// CHECK-NEXT:    %[[SEL:.*]] = llvm.select %[[EXACT]], %[[BITS]], %[[ODD]] : i1, i32
// CHECK-NEXT:    %[[F:.*]] = llvm.bitcast %[[SEL]] : i32 to f32
// CHECK-NEXT:    %[[H:.*]] = llvm.fptrunc %[[F]] : f32 to f16
// CHECK-NEXT:    llvm.return %[[H]] : f16
// CHECK-NOT:     f64 to f16

// LOC-LABEL: llvm.func @f64_to_f16
// LOC:         llvm.fptrunc %x : f64 to f32 loc("{{.*}}convert-to-llvm-half.mlir":[[# @LINE + 2]]:3)
func.func @f64_to_f16(%x: f64) -> f16 {
  %0 = arith.truncf %x : f64 to f16
  func.return %0 : f16
}

// -----

// The other half-precision casts stay single LLVM casts (the hardware has them).

// CHECK-LABEL: llvm.func @others(%x: f32, %y: f16, %z: f64) -> !llvm.struct<(f16, f64, f32)>
// CHECK-NEXT:    %{{.*}} = llvm.fptrunc %x : f32 to f16
// CHECK-NEXT:    %{{.*}} = llvm.fpext %y : f16 to f64
// CHECK-NEXT:    %{{.*}} = llvm.fptrunc %z : f64 to f32
// CHECK-NOT:     llvm.bitcast
func.func @others(%x: f32, %y: f16, %z: f64) -> (f16, f64, f32) {
  %0 = arith.truncf %x : f32 to f16
  %1 = arith.extf %y : f16 to f64
  %2 = arith.truncf %z : f64 to f32
  func.return %0, %1, %2 : f16, f64, f32
}

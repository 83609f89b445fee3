// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s

// Trigonometric and hyperbolic math ops: an LLVM intrinsic where LLVM has one, libm
// (declared by the pass) otherwise; f16 calls libm's f32 function.

// CHECK-LABEL: llvm.func @intrinsics(%x: f32) -> f32
// CHECK-NEXT:    %[[S:.*]] = llvm.call_intrinsic "llvm.sin.f32"(%x) : (f32) -> f32
// CHECK-NEXT:    %[[A:.*]] = llvm.call_intrinsic "llvm.asin.f32"(%[[S]]) : (f32) -> f32
// CHECK-NEXT:    %[[C:.*]] = llvm.call_intrinsic "llvm.acos.f32"(%[[A]]) : (f32) -> f32
// CHECK-NEXT:    %[[SH:.*]] = llvm.call_intrinsic "llvm.sinh.f32"(%[[C]]) : (f32) -> f32
// CHECK-NEXT:    %[[CH:.*]] = llvm.call_intrinsic "llvm.cosh.f32"(%[[SH]]) : (f32) -> f32
// CHECK-NEXT:    %[[R:.*]] = llvm.call_intrinsic "llvm.roundeven.f32"(%[[CH]]) : (f32) -> f32
// CHECK-NEXT:    llvm.return %[[R]] : f32
func.func @intrinsics(%x: f32) -> f32 {
  %0 = math.sin %x : f32
  %1 = math.asin %0 : f32
  %2 = math.acos %1 : f32
  %3 = math.sinh %2 : f32
  %4 = math.cosh %3 : f32
  %5 = math.roundeven %4 : f32
  func.return %5 : f32
}

// -----

// CHECK-DAG:   llvm.func @asinh(f64) -> f64
// CHECK-DAG:   llvm.func @acoshf(f32) -> f32
// CHECK-DAG:   llvm.func @atanhf(f32) -> f32
// CHECK-LABEL: llvm.func @libm(%x: f64, %y: f32, %h: f16)
// CHECK:         llvm.call @asinh(%x) : (f64) -> f64
// CHECK:         llvm.call @acoshf(%y) : (f32) -> f32
// CHECK:         %[[W:.*]] = llvm.fpext %h : f16 to f32
// CHECK-NEXT:    %[[T:.*]] = llvm.call @atanhf(%[[W]]) : (f32) -> f32
// CHECK-NEXT:    llvm.fptrunc %[[T]] : f32 to f16
func.func @libm(%x: f64, %y: f32, %h: f16) -> (f64, f32, f16) {
  %0 = math.asinh %x : f64
  %1 = math.acosh %y : f32
  %2 = math.atanh %h : f16
  func.return %0, %1, %2 : f64, f32, f16
}

// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-to-llvm
// RUN: not mlc-opt %s --split-input-file -p convert-to-llvm 2>&1 | filecheck %s --check-prefix=LOC

// What convert-to-llvm cannot lower yet stops it with a located error, never a crash.

// LOC-NOT: Traceback
// LOC: convert-to-llvm-invalid.mlir:[[# @LINE + 2]]:1: error: 'func.func' op on type tensor<4xf32> is not supported
// expected-error @+1 {{on type tensor<4xf32> is not supported by convert-to-llvm yet}}
func.func @tensor_arg(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// -----

func.func @math_op(%a: f32) -> f32 {
  // expected-error @+1 {{'math.exp' op is not supported by convert-to-llvm yet}}
  %0 = math.exp %a : f32
  func.return %0 : f32
}

// -----

func.func @memref_load(%m: memref<4xf32>, %i: index) -> f32 {
  // expected-error @+1 {{'memref.load' op is not supported by convert-to-llvm yet}}
  %0 = memref.load %m[%i] : memref<4xf32>
  func.return %0 : f32
}

// -----

// expected-error @+1 {{with several results is not supported by convert-to-llvm yet}}
func.func @two_results(%a: f32) -> (f32, f32) {
  func.return %a, %a : f32, f32
}

// -----

// Structured control flow must be lowered first (convert-scf-to-cf).
func.func @scf_left(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.for' op is not supported by convert-to-llvm yet}}
  scf.for %i = %c0 to %n step %c1 {
  }
  func.return
}

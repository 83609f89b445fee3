// RUN: mlc-opt %s --split-input-file --verify-diagnostics
// RUN: not mlc-opt %s --split-input-file 2>&1 | filecheck %s

// Programs that parse but hold values xDSL cannot represent (f80 and f128 constants)
// are one located error each, never an internal error.

// CHECK-NOT: Traceback
// CHECK-NOT: internal error

func.func @scalar_f80() -> f80 {
  // CHECK: mlc-opt-unsupported-types.mlir:[[# @LINE + 2]]:3: error: 'arith.constant' op has an f80 constant, which mlc does not support
  // expected-error @+1 {{'arith.constant' op has an f80 constant, which mlc does not support}}
  %c = arith.constant 1.0 : f80
  func.return %c : f80
}

// -----

func.func @dense_f80() -> tensor<4xf80> {
  // CHECK: mlc-opt-unsupported-types.mlir:[[# @LINE + 2]]:28: error: dense f80 elements are not supported
  // expected-error @+1 {{dense f80 elements are not supported}}
  %c = arith.constant dense<1.0> : tensor<4xf80>
  func.return %c : tensor<4xf80>
}

// -----

func.func @dense_f128() -> tensor<2xf128> {
  // CHECK: mlc-opt-unsupported-types.mlir:[[# @LINE + 2]]:28: error: dense f128 elements are not supported
  // expected-error @+1 {{dense f128 elements are not supported}}
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf128>
  func.return %c : tensor<2xf128>
}

// -----

// In an attribute of any op, nested in an array.
func.func @f80_attribute() {
  // CHECK: mlc-opt-unsupported-types.mlir:[[# @LINE + 2]]:3: error: 'func.call' op has an f80 constant
  // expected-error @+1 {{'func.call' op has an f80 constant, which mlc does not support}}
  func.call @g() {weights = [1.0 : f32, 2.0 : f80]} : () -> ()
  func.return
}
func.func private @g()

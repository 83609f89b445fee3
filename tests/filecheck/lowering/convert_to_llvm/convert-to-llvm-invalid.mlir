// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-to-llvm
// RUN: not mlc-opt %s --split-input-file -p convert-to-llvm 2>&1 | filecheck %s --check-prefix=LOC

// What convert-to-llvm cannot lower stops it with a located error, never a crash.

// LOC-NOT: Traceback
// LOC: convert-to-llvm-invalid.mlir:[[# @LINE + 2]]:1: error: 'func.func' op on type tensor<4xf32> is not supported
// expected-error @+1 {{on type tensor<4xf32> is not supported by convert-to-llvm yet}}
func.func @tensor_arg(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// -----

func.func @math_op(%a: i32) -> i32 {
  // expected-error @+1 {{'math.ctlz' op is not supported by convert-to-llvm yet}}
  %0 = math.ctlz %a : i32
  func.return %0 : i32
}

// -----

// expected-error @+1 {{on type memref<4xcomplex<f32>> is not supported: no LLVM type for element type complex<f32>}}
func.func @complex_memref(%m: memref<4xcomplex<f32>>) {
  func.return
}

// -----

func.func @dynamic_dim_index(%m: memref<?xf32>, %i: index) -> index {
  // expected-error @+1 {{'memref.dim' op with a non-constant dimension index is not supported}}
  %d = memref.dim %m, %i : memref<?xf32>
  func.return %d : index
}

// -----

func.func @strided_alloc() {
  // expected-error @+1 {{'memref.alloc' op with a non-identity layout is not supported}}
  %m = memref.alloc() : memref<4xf32, strided<[2]>>
  func.return
}

// -----

func.func @collapse_strided(%m: memref<2x3xf32, strided<[6, 1]>>) {
  // expected-error @+1 {{'memref.collapse_shape' op is only supported on identity layouts}}
  %c = memref.collapse_shape %m [[0, 1]] : memref<2x3xf32, strided<[6, 1]>> into memref<6xf32, strided<[1]>>
  func.return
}

// -----

// expected-error @+1 {{'memref.global' op without a dense initial value must be public (an external declaration)}}
"memref.global"() <{sym_name = "buffer", sym_visibility = "private", type = memref<4xf32>, initial_value}> : () -> ()

// RUN: mlc-translate --mlir-to-llvmir %s | filecheck %s
// RUN: mlc-opt %s -p convert-ml-to-linalg | mlc-translate --mlir-to-llvmir - | filecheck %s
// RUN: mlc-opt %s -p convert-ml-to-linalg,bufferize | mlc-translate --mlir-to-llvmir | filecheck %s
// RUN: mlc-opt %s -p convert-ml-to-linalg,bufferize,convert-linalg-to-loops \
// RUN:   | mlc-translate --mlir-to-llvmir | filecheck %s
// RUN: mlc-opt %s -p convert-ml-to-linalg,bufferize,convert-linalg-to-loops,lower-affine,convert-to-llvm \
// RUN:   | mlc-translate --mlir-to-llvmir | filecheck %s
// RUN: mlc-translate --mlir-to-llvmir -O3 %s | filecheck %s --check-prefix=O3
// RUN: mlc-translate --mlir-to-llvmir %s -o %t && filecheck %s --input-file %t

// An elementwise product: whatever level the input is at (ml, linalg on tensors or on
// memrefs, loops, llvm), it is lowered as far as it needs and translated to the same
// function, its ctypes wrapper, and a loop nest around the `fmul`.

// CHECK:     define {{.*}} @"mul"(
// CHECK:       phi i64
// CHECK:       fmul float
// CHECK:       br label
// CHECK:     define void @"_mlc_invoke_mul"(ptr

// -O3 is the IR the JIT runs: optimised for the host, unrolled (six `fmul`s, no loop).
// O3:        define {{.*}} @mul(
// O3-NOT:    phi
// O3-COUNT-6: fmul float
// O3:        define void @_mlc_invoke_mul(

func.func @mul(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ml.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-ml-to-linalg
// RUN: not mlc-opt %s --split-input-file -p convert-ml-to-linalg 2>&1 | filecheck %s --check-prefix=LOC

// Unsigned integers lower (convert-ml-to-linalg-unsigned.mlir) except where a lowering
// has no unsigned form yet (reduce max/min/mean): a located error, not invalid IR.

// LOC-NOT: Traceback
// LOC: convert-ml-to-linalg-invalid.mlir:[[# @LINE + 3]]:3: error: 'ml.reduce_max' op convert-ml-to-linalg: element type ui64 is not supported yet
func.func @unsigned_reduce(%a: tensor<2x3xui64>) -> tensor<2xui64> {
  // expected-error @+1 {{convert-ml-to-linalg: element type ui64 is not supported yet}}
  %0 = ml.reduce_max %a {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xui64>) -> tensor<2xui64>
  func.return %0 : tensor<2xui64>
}

// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-ml-to-linalg
// RUN: not mlc-opt %s --split-input-file -p convert-ml-to-linalg 2>&1 | filecheck %s --check-prefix=LOC

// Unsigned integers pass the ml verifier, but arith works on signless integers only,
// so the lowering stops with a located error rather than emit invalid IR.

// LOC-NOT: Traceback
// LOC: convert-ml-to-linalg-invalid.mlir:[[# @LINE + 3]]:3: error: 'ml.add' op convert-ml-to-linalg: element type ui8 is not supported yet
func.func @unsigned_add(%a: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{convert-ml-to-linalg: element type ui8 is not supported yet}}
  %0 = ml.add %a, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @cast_to_unsigned(%a: tensor<4xf32>) -> tensor<4xui16> {
  // expected-error @+1 {{convert-ml-to-linalg: element type ui16 is not supported yet}}
  %0 = ml.cast %a : (tensor<4xf32>) -> tensor<4xui16>
  func.return %0 : tensor<4xui16>
}

// -----

func.func @unsigned_matmul(%a: tensor<2x2xui32>) -> tensor<2x2xui32> {
  // expected-error @+1 {{convert-ml-to-linalg: element type ui32 is not supported yet}}
  %0 = ml.matmul %a, %a : (tensor<2x2xui32>, tensor<2x2xui32>) -> tensor<2x2xui32>
  func.return %0 : tensor<2x2xui32>
}

// -----

func.func @unsigned_reduce(%a: tensor<2x3xui64>) -> tensor<2xui64> {
  // expected-error @+1 {{convert-ml-to-linalg: element type ui64 is not supported yet}}
  %0 = ml.reduce_max %a {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xui64>) -> tensor<2xui64>
  func.return %0 : tensor<2xui64>
}

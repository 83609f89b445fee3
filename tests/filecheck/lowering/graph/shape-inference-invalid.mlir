// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p shape-inference
// RUN: not mlc-opt %s --split-input-file -p shape-inference 2>&1 | filecheck %s --check-prefix=LOC

// Conflicts that only show once types are refined are located errors.

// LOC-NOT: Traceback
// LOC: shape-inference-invalid.mlir:[[# @LINE + 4]]:3: error: 'ml.matmul' op contracting dimensions differ: lhs dimension 1 is 8, rhs dimension 0 is 9
func.func @matmul_after_refinement(%x: tensor<4x8xf32>, %w: tensor<9x2xf32>) -> tensor<?x?xf32> {
  %a = ml.relu %x : (tensor<4x8xf32>) -> tensor<?x?xf32>
  // expected-error @+1 {{contracting dimensions differ: lhs dimension 1 is 8, rhs dimension 0 is 9}}
  %m = ml.matmul %a, %w : (tensor<?x?xf32>, tensor<9x2xf32>) -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}

// -----

// %r's dim 1 must be 3 (by the first matmul) and 5 (by the second).

func.func @unification_conflict(%x: tensor<?x?xf32>, %c: tensor<3x2xf32>, %d: tensor<5x2xf32>) {
  %r = ml.relu %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %a = ml.matmul %r, %c : (tensor<?x?xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  // expected-error @+1 {{operand #0 dim 1 (3) must equal operand #1 dim 0 (5)}}
  %b = ml.matmul %r, %d : (tensor<?x?xf32>, tensor<5x2xf32>) -> tensor<?x2xf32>
  func.return
}

// -----

// expected-error @+1 {{arguments share the dim name 'batch' but have sizes 2 and 3}}
func.func @dim_name_conflict(%x: tensor<2xf32> {ml.dim_names = ["batch"]}, %y: tensor<3xf32> {ml.dim_names = ["batch"]}) {
  func.return
}

// -----

// expected-error @+1 {{ml.dim_names of argument #0 names 1 dims, for tensor<2x3xf32> with 2}}
func.func @dim_names_wrong_length(%x: tensor<2x3xf32> {ml.dim_names = ["batch"]}) {
  func.return
}

// RUN: not mlc-opt %s 2>&1 | filecheck %s
// RUN: not mlc-opt %s -p cse,canonicalize -o %t 2>&1 | filecheck %s

// IR that parses but does not verify: one error per invalid op, in textual order,
// each `file:line:col: error: 'op' op message` with the source line and a caret;
// exit status 1, no traceback, and no pass runs.

// CHECK-NOT: Traceback

func.func @invalid(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x3xf32> {
  // CHECK:      mlc-opt-verify-error.mlir:[[# @LINE + 3]]:3: error: 'ml.matmul' op contracting dimensions differ: lhs dimension 1 is 3, rhs dimension 0 is 4
  // CHECK-NEXT: {{^}}  %0 = ml.matmul
  // CHECK-NEXT: {{^}}  ^{{$}}
  %0 = ml.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  // CHECK:      mlc-opt-verify-error.mlir:[[# @LINE + 1]]:3: error: 'ml.transpose' op perm [0, 0] is not a permutation of the 2 dimensions
  %1 = ml.transpose %a {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  // CHECK:      mlc-opt-verify-error.mlir:[[# @LINE + 1]]:3: error: 'func.return' op expected arguments to have the same types as the function output types
  func.return %b : tensor<4x5xf32>
}

// CHECK-NOT: error:
// CHECK-NOT: Traceback

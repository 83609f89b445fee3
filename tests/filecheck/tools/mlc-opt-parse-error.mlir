// RUN: not mlc-opt %s 2>&1 | filecheck %s
// RUN: not mlc-opt %s -p cse -o %t 2>&1 | filecheck %s

// Malformed IR: one error, `file:line:col: error: message`, then the source line
// and a caret under the column; exit status 1 and no traceback.

func.func @malformed(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT:  Traceback
  // CHECK:      mlc-opt-parse-error.mlir:[[# @LINE + 4]]:18: error: expected ':'
  // CHECK-NEXT: {{^}}  %0 = ml.neg %a (tensor<4xf32>) -> tensor<4xf32>{{$}}
  // CHECK-NEXT: {{^}}                 ^{{$}}
  // CHECK-NOT:  {{.}}
  %0 = ml.neg %a (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

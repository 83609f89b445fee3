// RUN: mlc-opt %s --allow-unregistered-dialect | filecheck %s
// RUN: mlc-opt %s --allow-unregistered-dialect --print-op-generic \
// RUN:   | mlc-opt --allow-unregistered-dialect --verify-roundtrip | filecheck %s
// RUN: mlc-opt %s --allow-unregistered-dialect -p cse,canonicalize | filecheck %s --check-prefix=PASS
// RUN: not mlc-opt %s 2>&1 | filecheck %s --check-prefix=ERR

// `--allow-unregistered-dialect` accepts ops of dialects mlc does not know and keeps
// them as they are (in the generic form); without it they are a parse error.

func.func @unregistered(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR-NOT:  Traceback
  // ERR:      mlc-opt-allow-unregistered-dialect.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: operation acme.frob is not registered
  // ERR-NEXT: "acme.frob"
  // ERR-NEXT: ^
  // ERR-NOT:  {{.}}
  %0 = "acme.frob"(%a) {level = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// CHECK-LABEL: func.func @unregistered
// CHECK-NEXT:    %[[F:[a-zA-Z0-9_]+]] = "acme.frob"(%a) {level = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    ml.neg %[[F]]

// Passes leave an unregistered op alone: it may have side effects, so it is kept
// even though its result is unused after canonicalization.
func.func @kept(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "acme.frob"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// PASS-LABEL: func.func @kept
// PASS-NEXT:    "acme.frob"(%a)

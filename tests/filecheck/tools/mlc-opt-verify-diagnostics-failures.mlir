// RUN: not mlc-opt %s --split-input-file --verify-diagnostics 2>&1 >/dev/null | filecheck %s
// RUN: not mlc-opt %s --split-input-file --verify-diagnostics -o %t.unwritten 2>&1 | filecheck %s
// RUN: not test -e %t.unwritten

// Each mismatch between the diagnostics and the `expected-*` comments is itself an
// error, at the diagnostic (unexpected) or at the comment (not produced); mlc-opt
// exits 1, goes on with the next chunk, and reports every mismatch once.

// CHECK-NOT: Traceback

// A diagnostic no comment expects.
func.func @unexpected(%a: tensor<4xf32>) -> tensor<3xf32> {
  // CHECK:      mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 3]]:3: error: unexpected error: 'ml.neg' op result type tensor<3xf32> contradicts the inferred type tensor<4xf32>
  // CHECK-NEXT: {{^}}  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  // CHECK-NEXT: {{^}}  ^
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// A comment no diagnostic matches: valid IR.
func.func @not_produced(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 1]]:6: error: expected error "does not verify" was not produced
  // expected-error @+1 {{does not verify}}
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// The right text on the wrong line: both sides are reported.
func.func @wrong_line(%a: tensor<4xf32>) -> tensor<3xf32> {
  // CHECK: mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 2]]:3: error: unexpected error: 'ml.neg' op result type
  // CHECK: mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 2]]:6: error: expected error "contradicts" was not produced
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  // expected-error @+1 {{contradicts}}
  func.return %0 : tensor<3xf32>
}

// -----

// The right line with the wrong text.
func.func @wrong_text(%a: tensor<4xf32>) -> tensor<3xf32> {
  // CHECK: mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 3]]:3: error: unexpected error: 'ml.neg' op result type
  // CHECK: mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 1]]:6: error: expected error "no such text" was not produced
  // expected-error @below {{no such text}}
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// The right line and text with the wrong severity.
func.func @wrong_severity(%a: tensor<4xf32>) -> tensor<3xf32> {
  // CHECK: mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 2]]:3: error: unexpected error: 'ml.neg' op result type
  // CHECK: mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 2]]:6: error: expected warning "contradicts" was not produced
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  // expected-warning @above {{contradicts}}
  func.return %0 : tensor<3xf32>
}

// -----

// One diagnostic meets one expectation only: the second is not produced.
func.func @expected_twice(%a: tensor<4xf32>) -> tensor<3xf32> {
  // CHECK:      mlc-opt-verify-diagnostics-failures.mlir:[[# @LINE + 5]]:6: error: expected error "contradicts" was not produced
  // CHECK-NEXT: // expected-error @+1
  // CHECK-NEXT: ^
  // CHECK-NOT:  {{.}}
  // expected-error @+2 {{contradicts}}
  // expected-error @+1 {{contradicts}}
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

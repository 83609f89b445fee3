// RUN: mlc-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not mlc-opt %s --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=PLAIN

// Every diagnostic is matched by an `expected-*` comment, so mlc-opt exits 0 and
// prints the chunks that produced no error. The comment names its target line on
// the same line, `@+N` / `@-N` lines away, or `@above` / `@below`; its text is a
// substring of the message. The failing cases are in
// mlc-opt-verify-diagnostics-failures.mlir.

// A chunk without diagnostics is printed as usual.
func.func @clean(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @clean
// CHECK-NOT:   func.func

// -----

// Every op that fails to verify gives its own error, each matched by a comment.
func.func @every_position(%a: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<4xf32> {
  %0 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32> // expected-error {{contradicts the inferred type tensor<4xf32>}}
  // expected-error @+1 {{expects operands of one element type, got (f32, i32)}}
  %1 = ml.add %a, %i : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  %2 = ml.exp %i : (tensor<4xi32>) -> tensor<4xi32>
  // expected-error @-1 {{expected a floating-point element type}}
  // expected-error @+3 {{'ml.sqrt' op operand #0 has element type i32}}


  %3 = ml.sqrt %i : (tensor<4xi32>) -> tensor<4xi32>
  %4 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  // expected-error @above {{'ml.neg' op result type tensor<3xf32>}}
  // expected-error @below {{unknown predicate "foo"}}
  %5 = ml.cmp "foo", %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return %a : tensor<4xf32>
}

// PLAIN: mlc-opt-verify-diagnostics.mlir:[[# @LINE - 16]]:3: error: 'ml.add' op result type tensor<5xf32> contradicts
// PLAIN: error: 'ml.add' op expects operands of one element type
// PLAIN: error: 'ml.exp' op operand #0 has element type i32
// PLAIN: error: 'ml.sqrt' op operand #0 has element type i32
// PLAIN: error: 'ml.neg' op result type tensor<3xf32>
// PLAIN: mlc-opt-verify-diagnostics.mlir:[[# @LINE - 9]]:3: error: 'ml.cmp' op unknown predicate "foo"

// -----

// A parse error is a diagnostic like any other; its line is the file's.
func.func @parse_error(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected ':'}}
  %0 = ml.neg %a (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Two expectations on one line match two diagnostics on their target line.
func.func @two_on_one_line(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ml.neg' op result type}} expected-error @+1 {{'ml.abs' op result type}}
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>  %1 = ml.abs %a : (tensor<4xf32>) -> tensor<2xf32>
  func.return %a : tensor<4xf32>
}

// RUN: not python %S/Inputs/mlc_opt_with_broken_pass.py %s -p test-misplace-index,cse 2>&1 \
// RUN:   | filecheck %s
// RUN: not python %S/Inputs/mlc_opt_with_broken_pass.py %s -p test-misplace-index,cse \
// RUN:   --verify-each 2>&1 | filecheck %s
// RUN: not python %S/Inputs/mlc_opt_with_broken_pass.py %s -p test-misplace-index,cse \
// RUN:   --verify-each=false 2>&1 | filecheck %s --check-prefix=ONCE
// RUN: python %S/Inputs/mlc_opt_with_broken_pass.py %s -p cse,cse --verify-each=false \
// RUN:   | filecheck %s --check-prefix=VALID
// RUN: python %S/Inputs/mlc_opt_with_broken_pass.py %s --split-input-file \
// RUN:   --verify-diagnostics -p test-misplace-index
// RUN: not python %S/Inputs/mlc_opt_with_broken_pass.py %s --verify-each=maybe 2>&1 | filecheck %s --check-prefix=USAGE

// `--verify-each` (on unless `--verify-each=false`, as in mlir-opt) verifies the IR
// after every pass: IR that a pass leaves invalid is reported with that pass's name.
// Off, the IR is verified once, after the last pass, and the error names no pass.

// CHECK:      mlc-opt-verify-each.mlir:[[# @LINE + 5]]:1: error: 'linalg.index' op {{.*}}expects parent op 'linalg.generic' (invalid after pass 'test-misplace-index')
// CHECK-NOT:  Traceback
// ONCE:       mlc-opt-verify-each.mlir:[[# @LINE + 3]]:1: error: 'linalg.index' op {{.*}}expects parent op 'linalg.generic'{{$}}
// VALID:      func.func @f
// expected-error @+1 {{expects parent op 'linalg.generic' (invalid after pass 'test-misplace-index')}}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{expects parent op 'linalg.generic' (invalid after pass 'test-misplace-index')}}
func.func @g() {
  func.return
}

// USAGE: mlc-opt: error: argument --verify-each: 'maybe' is not true or false

// RUN: not mlc-translate --mlir-to-llvmir %s -o %t.out 2>&1 | filecheck %s
// RUN: not test -e %t.out
// RUN: not mlc-translate %s 2>&1 | filecheck %s --check-prefix=NO-TRANSLATION
// RUN: not mlc-translate --mlir-to-llvmir %t.does-not-exist.mlir 2>&1 \
// RUN:   | filecheck %s --check-prefix=MISSING

// Invalid IR is reported at its line, with exit status 1 and no
// traceback, and `-o` is not written.
func.func @wrong_result_shape(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: Traceback
  // CHECK:     mlc-translate-errors.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'ml.neg' op result type tensor<3xf32> contradicts{{.*}}
  // CHECK-NOT: Traceback
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  func.return %a : tensor<4xf32>
}

// A translation flag is required (argparse's usage error).
// NO-TRANSLATION: usage: mlc-translate
// NO-TRANSLATION: error: one of the arguments --mlir-to-llvmir --mlir-to-ptx is required

// MISSING-NOT: Traceback
// MISSING:     mlc-translate: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory

// RUN: rm -f %t %t.long %t.bad-pass %t.bad-ir
// RUN: mlc-opt %s --allow-unregistered-dialect -o %t
// RUN: filecheck %s --input-file %t
// RUN: mlc-opt %s --allow-unregistered-dialect --output=%t.long
// RUN: filecheck %s --input-file %t.long

// On an error nothing is written, not even an empty file: a bad command line...
// RUN: not mlc-opt %s --allow-unregistered-dialect -p no-such-pass -o %t.bad-pass 2>&1 \
// RUN:   | filecheck %s --check-prefix=BAD-PASS
// RUN: not test -e %t.bad-pass
// ...or IR that is rejected (here: the unregistered op without the flag).
// RUN: not mlc-opt %s -o %t.bad-ir 2>&1 | filecheck %s --check-prefix=BAD-IR
// RUN: not test -e %t.bad-ir

// An unwritable output is a one-line error too.
// RUN: not mlc-opt %s --allow-unregistered-dialect -o %t.missing-dir/out.mlir 2>&1 \
// RUN:   | filecheck %s --check-prefix=NO-DIR

func.func @written(%a: tensor<4xf32>) -> tensor<4xf32> {
  // BAD-IR-NOT: Traceback
  // BAD-IR:     mlc-opt-output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: operation acme.frob is not registered
  // BAD-IR-NOT: Traceback
  %0 = "acme.frob"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @written
// CHECK-NEXT:    "acme.frob"(%a)

// BAD-PASS-NOT: Traceback
// BAD-PASS:     mlc-opt: error: unknown pass 'no-such-pass'
// BAD-PASS-NOT: Traceback

// NO-DIR-NOT: Traceback
// NO-DIR:     mlc-opt: error: cannot write '{{.*}}out.mlir': No such file or directory
// NO-DIR-NOT: Traceback

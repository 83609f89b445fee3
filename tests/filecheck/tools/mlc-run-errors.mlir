// RUN: not mlc-run %s 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not mlc-run %s %t.does-not-exist.npy %t.does-not-exist.npy 2>&1 \
// RUN:   | filecheck %s --check-prefix=MISSING-NPY
// RUN: not mlc-run %s %s %s 2>&1 | filecheck %s --check-prefix=NOT-NPY
// RUN: not mlc-run %s --random --entry nope 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not mlc-run %s --random --shape y=2x3 2>&1 | filecheck %s --check-prefix=SHAPE-NAME
// RUN: not mlc-run %s --random --shape a=4x3 2>&1 | filecheck %s --check-prefix=SHAPE-SIZE
// RUN: not mlc-run %t.does-not-exist.mlir --random 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: sed -e 's/ml.add %%a, %%b :/ml.add %%a, %%b/' %s > %t.bad.mlir
// RUN: not mlc-run %t.bad.mlir --random --save %t.npz 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: not test -e %t.npz
// RUN: not mlc-run %s --random --repeat 0 2>&1 | filecheck %s --check-prefix=USAGE
// RUN: not mlc-run %s --random --int-range 3,1 2>&1 | filecheck %s --check-prefix=INT-RANGE

// Bad inputs and flags are one `mlc-run: error: ...` line, exit status 1, no traceback.

// COUNT-NOT: Traceback
// COUNT:     mlc-run: error: @main takes 2 argument(s), got 0
// COUNT-NOT: {{.}}

// MISSING-NPY: mlc-run: error: cannot read '{{.*}}does-not-exist.npy': No such file or directory
// MISSING-NPY-NOT: {{.}}

// NOT-NPY: mlc-run: error: '{{.*}}mlc-run-errors.mlir' is not a .npy file
// NOT-NPY-NOT: {{.}}

// ENTRY: mlc-run: error: no public function @nope (functions: @main)
// ENTRY-NOT: {{.}}

// SHAPE-NAME: mlc-run: error: --shape: no argument 'y' (arguments: %a, %b)
// SHAPE-NAME-NOT: {{.}}

// SHAPE-SIZE: mlc-run: error: @main: argument 0 (%a): expected size 2 in dim 0 for tensor<2x3xf32>, got shape (4, 3)
// SHAPE-SIZE-NOT: {{.}}

// MISSING: mlc-run: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
// MISSING-NOT: {{.}}

// A program that does not parse (@main without the `:` of its ml.add): the diagnostic
// at its line and column, and nothing saved.
// PARSE-NOT: Traceback
// PARSE:     .bad.mlir:[[# @LINE + 11]]:22: error: expected ':'
// PARSE-NOT: Traceback

// A bad flag value is argparse's usage error (exit status 2, which `not` accepts too).
// USAGE: usage: mlc-run
// USAGE: mlc-run: error: argument --repeat: expected an integer >= 1, got '0'

// INT-RANGE: usage: mlc-run
// INT-RANGE: mlc-run: error: argument --int-range: expected LO,HI with integers LO <= HI, got '3,1'

func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ml.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// RUN: not mlc-opt %s -p cs 2>&1 | filecheck %s --check-prefix=HINT
// RUN: not mlc-opt %s -p 'cse,zzzzzz' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not mlc-opt %s -p 'canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not mlc-opt %s -p 'memref-streamify{streams=abc}' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: not mlc-opt %s -p scf-parallel-loop-tiling 2>&1 | filecheck %s --check-prefix=REQUIRED
// RUN: not mlc-opt %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=BRACE
// RUN: not mlc-opt %s -p 'cse,,dce' 2>&1 | filecheck %s --check-prefix=COMMAS
// RUN: not mlc-opt %t.does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not mlc-opt %S 2>&1 | filecheck %s --check-prefix=DIRECTORY
// RUN: not mlc-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not mlc-opt %s -p 2>&1 | filecheck %s --check-prefix=NO-VALUE
// RUN: not mlc-opt %s %s 2>&1 | filecheck %s --check-prefix=TWO-INPUTS
// RUN: not mlc-opt %t.does-not-exist.mlir -p cs 2>&1 | filecheck %s --check-prefix=HINT
// RUN: not mlc-opt %s -p cs 2>/dev/null | filecheck %s --check-prefix=STDOUT --allow-empty

// Bad command lines: each is one `mlc-opt: error: ...` line on stderr, exit status 1,
// no traceback, no output. (Bad IR: mlc-opt-parse-error.mlir, mlc-opt-verify-error.mlir.)

// An unknown pass, with a hint when a registered name is close. The command line is
// checked before the input is read, so the second HINT run, whose input is missing
// too, reports the pipeline.
// HINT-NOT: Traceback
// HINT:     mlc-opt: error: unknown pass 'cs' (did you mean 'cse'?)
// HINT-NOT: {{.}}

// UNKNOWN-NOT: Traceback
// UNKNOWN:     mlc-opt: error: unknown pass 'zzzzzz'{{$}}
// UNKNOWN-NOT: {{.}}

// An option the pass does not have.
// OPTION-NOT: Traceback
// OPTION:     mlc-opt: error: pass 'canonicalize': unknown option 'bogus' (the pass takes none)
// OPTION-NOT: {{.}}

// An option value of the wrong type.
// VALUE-NOT: Traceback
// VALUE:     mlc-opt: error: pass 'memref-streamify': option 'streams' takes an integer, got 'abc'
// VALUE-NOT: {{.}}

// A required option left out.
// REQUIRED-NOT: Traceback
// REQUIRED:     mlc-opt: error: pass 'scf-parallel-loop-tiling': option 'parallel-loop-tile-sizes' is required
// REQUIRED-NOT: {{.}}

// Malformed pipelines.
// BRACE-NOT: Traceback
// BRACE:     mlc-opt: error: invalid pass pipeline 'cse{': {{.+}}
// BRACE-NOT: {{.}}

// COMMAS-NOT: Traceback
// COMMAS:     mlc-opt: error: invalid pass pipeline 'cse,,dce': {{.+}}
// COMMAS-NOT: {{.}}

// A missing file, and a directory.
// MISSING-NOT: Traceback
// MISSING:     mlc-opt: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
// MISSING-NOT: {{.}}

// DIRECTORY-NOT: Traceback
// DIRECTORY:     mlc-opt: error: cannot read '{{.*}}': Is a directory
// DIRECTORY-NOT: {{.}}

// An unknown flag, a flag without its value, and two inputs.
// FLAG-NOT: Traceback
// FLAG:     mlc-opt: error: unrecognized arguments: --no-such-flag (see 'mlc-opt --help')
// FLAG-NOT: {{.}}

// NO-VALUE-NOT: Traceback
// NO-VALUE:     mlc-opt: error: argument -p/--passes: expected one argument (see 'mlc-opt --help')
// NO-VALUE-NOT: {{.}}

// TWO-INPUTS-NOT: Traceback
// TWO-INPUTS:     mlc-opt: error: unrecognized arguments: {{.*}}mlc-opt-errors.mlir (see 'mlc-opt --help')
// TWO-INPUTS-NOT: {{.}}

// Nothing goes to stdout on an error.
// STDOUT-NOT: {{.}}

func.func @valid(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

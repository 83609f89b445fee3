// RUN: not mlc-opt %s --split-input-file 2>/dev/null | filecheck %s
// RUN: not mlc-opt %s --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not mlc-opt %s 2>&1 | filecheck %s --check-prefix=WHOLE

// Each `// -----` chunk is parsed, verified and printed on its own: the outputs of
// the chunks that succeed are joined by `// -----`, and an error in a later chunk
// names its line in the file, not in the chunk.

func.func @first(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @first
// CHECK:       // -----
// CHECK-LABEL: func.func @second
// CHECK-NOT:   // -----
// CHECK-NOT:   func.func

// -----

func.func @second(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.abs %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// A chunk that does not verify: the line is the file's.
func.func @does_not_verify(%a: tensor<4xf32>) -> tensor<3xf32> {
  // ERR-NOT: Traceback
  // ERR:     mlc-opt-split-input-file.mlir:[[# @LINE + 3]]:3: error: 'ml.neg' op result type tensor<3xf32> contradicts the inferred type tensor<4xf32>
  // ERR-NEXT: {{^}}  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  // ERR-NEXT: {{^}}  ^
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// A chunk that does not parse, after one that failed: still reported, at its line.
func.func @does_not_parse(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR:      mlc-opt-split-input-file.mlir:[[# @LINE + 3]]:18: error: expected ':'
  // ERR-NEXT: {{^}}  %0 = ml.neg %a (tensor<4xf32>) -> tensor<4xf32>
  // ERR-NEXT: {{^}}                 ^
  %0 = ml.neg %a (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// ERR-NOT: error
// ERR-NOT: Traceback

// Without the flag the separators are plain comments: the whole file is one module,
// and its first error is the parse error.
// WHOLE-NOT: Traceback
// WHOLE:     mlc-opt-split-input-file.mlir:[[# @LINE - 9]]:18: error: expected ':'
// WHOLE-NOT: error

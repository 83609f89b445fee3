// RUN: mlc-opt %s -p cse,canonicalize --timing -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s -p cse,canonicalize --mlir-timing -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s --split-input-file --timing -o %t 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: mlc-opt %s -p cse -o %t 2>&1 | filecheck %s --check-prefix=OFF --allow-empty

// `--timing` writes an MLIR-style execution time report to stderr after the run: wall
// time per phase (parsing, verification, each pass, printing), in the order the
// phases first ran, then the total.

func.func @timed(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK:      ===-{{-+}}-===
// CHECK-NEXT:   ... Execution time report ...
// CHECK-NEXT: ===-{{-+}}-===
// CHECK-NEXT:   Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// CHECK-EMPTY:
// CHECK-NEXT:   ----Wall Time----  ----Name----
// CHECK-NEXT:   {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Parser
// CHECK-NEXT:   {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Verifier
// CHECK-NEXT:   {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  cse
// CHECK-NEXT:   {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  canonicalize
// CHECK-NEXT:   {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Output
// CHECK-NEXT:   {{[0-9]+\.[0-9]+}} (100.0%)  Total
// CHECK-NOT:  {{.}}

// -----

// With --split-input-file the phases are summed over the chunks: one report.
func.func @second_chunk() {
  func.return
}

// SPLIT:     Execution time report
// SPLIT:     ----Wall Time----  ----Name----
// SPLIT-NEXT:  Parser
// SPLIT-NEXT:  Verifier
// SPLIT-NEXT:  Output
// SPLIT-NEXT:  Total
// SPLIT-NOT: Execution time report

// OFF-NOT: Execution time report

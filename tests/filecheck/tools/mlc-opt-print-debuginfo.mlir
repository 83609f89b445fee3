// RUN: mlc-opt %s --print-debuginfo | filecheck %s
// RUN: mlc-opt %s --mlir-print-debuginfo | filecheck %s
// RUN: mlc-opt %s -p cse,canonicalize --print-debuginfo | filecheck %s --check-prefix=PASS
// RUN: mlc-opt %s --print-debuginfo --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: mlc-opt %s | filecheck %s --check-prefix=NOLOC

// `--print-debuginfo` prints each op's location. An op parsed without `loc(...)`
// is at its text, `loc("<file>":line:col)`; an explicit location is kept.

func.func @locations(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ml.neg %a : (tensor<4xf32>) -> tensor<4xf32> loc("{{.*}}mlc-opt-print-debuginfo.mlir":[[# @LINE + 1]]:3)
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: ml.abs %{{.*}} : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":7:3)
  %1 = ml.abs %0 : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":7:3)
  // CHECK: ml.relu %{{.*}} loc("relu1")
  %2 = ml.relu %1 : (tensor<4xf32>) -> tensor<4xf32> loc("relu1")
  // CHECK: func.return %{{.*}} : tensor<4xf32> loc("{{.*}}mlc-opt-print-debuginfo.mlir":[[# @LINE + 1]]:3)
  func.return %2 : tensor<4xf32>
// CHECK: } loc("{{.*}}mlc-opt-print-debuginfo.mlir":[[# @LINE - 9]]:1)
}

// Locations survive the passes: the ml.add that cse keeps is still at its text.
func.func @after_passes(%a: tensor<4xf32>) -> tensor<4xf32> {
  // PASS-LABEL: func.func @after_passes
  // PASS: ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("{{.*}}mlc-opt-print-debuginfo.mlir":[[# @LINE + 1]]:3)
  %0 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("dup.py":1:1)
  // PASS-NOT: ml.add
  // PASS: ml.mul
  %2 = ml.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// GENERIC: "ml.abs"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":7:3)

// NOLOC-NOT: loc(

// RUN: mlc-opt < %s | filecheck %s
// RUN: mlc-opt - < %s | filecheck %s
// RUN: cat %s | mlc-opt - | filecheck %s
// RUN: cat %s | mlc-opt | filecheck %s
// RUN: mlc-opt --print-debuginfo < %s | filecheck %s --check-prefix=LOC

// With no input file, or `-`, mlc-opt reads stdin; locations (and diagnostics)
// name it `<stdin>`.

func.func @from_stdin(%a: tensor<4xf32>) -> tensor<4xf32> {
  // LOC: ml.neg %a : (tensor<4xf32>) -> tensor<4xf32> loc("<stdin>":[[# @LINE + 1]]:3)
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @from_stdin
// CHECK-NEXT:    %[[N:[a-zA-Z0-9_]+]] = ml.neg %a
// CHECK-NEXT:    func.return %[[N]]

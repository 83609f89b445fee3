// RUN: mlc-opt %s -p cse,canonicalize --print-ir-before-all -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s -p cse,canonicalize --mlir-print-ir-before-all -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s -p cse,canonicalize --print-ir-before-all 2>/dev/null | filecheck %s --check-prefix=STDOUT

// `--print-ir-before-all` dumps the IR to stderr before every pass, under an MLIR-style
// header naming the pass; stdout holds only the result.

func.func @dumped(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = ml.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// Before cse, both ml.add ops are there; before canonicalize, cse has merged them.
// CHECK:      // -----// IR Dump Before cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        ml.add
// CHECK-NEXT:   ml.add
// CHECK:      // -----// IR Dump Before canonicalize //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        ml.add
// CHECK-NEXT:   ml.mul
// CHECK-NOT:  IR Dump

// STDOUT-NOT:   IR Dump
// STDOUT-LABEL: func.func @dumped
// STDOUT-NOT:   IR Dump

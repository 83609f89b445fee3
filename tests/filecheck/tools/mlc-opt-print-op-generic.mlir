// RUN: mlc-opt %s --print-op-generic | filecheck %s
// RUN: mlc-opt %s --mlir-print-op-generic | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s --check-prefix=CUSTOM
// RUN: mlc-opt %s -p cse --print-op-generic | filecheck %s --check-prefix=AFTER-PASS

// `--print-op-generic` prints every op in the generic form: quoted name, operands in
// parentheses, properties in `<{...}>`, regions in `({...})`, a function type. The
// generic text parses back to the same IR.

func.func @generic(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x2xf32> {
  %0 = ml.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = ml.transpose %0 {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "func.func"() <{sym_name = "generic", function_type = (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x2xf32>}> ({
// CHECK-NEXT:   ^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
// CHECK-NEXT:     %[[SUM:[a-zA-Z0-9_]+]] = "ml.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:     %[[T:[a-zA-Z0-9_]+]] = "ml.transpose"(%[[SUM]]) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:     "func.return"(%[[T]]) : (tensor<3x2xf32>) -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) : () -> ()

// CUSTOM-LABEL: func.func @generic
// CUSTOM-NEXT:    %[[SUM:[a-zA-Z0-9_]+]] = ml.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CUSTOM-NEXT:    %[[T:[a-zA-Z0-9_]+]] = ml.transpose %[[SUM]] {perm = array<i64: 1, 0>}
// CUSTOM-NEXT:    func.return %[[T]]

// The flag applies to the output after the passes too.
// AFTER-PASS: "ml.transpose"

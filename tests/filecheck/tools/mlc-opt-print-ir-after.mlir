// RUN: mlc-opt %s -p cse,canonicalize,cse --print-ir-after=cse -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s -p cse,canonicalize --print-ir-after=canonicalize,dce -o %t 2>&1 \
// RUN:   | filecheck %s --check-prefix=LIST
// RUN: mlc-opt %s -p cse --print-ir-after=canonicalize -o %t 2>&1 \
// RUN:   | filecheck %s --check-prefix=NOT-RUN --allow-empty

// `--print-ir-after=<passes>` dumps the IR to stderr after each run of the named
// passes (a comma-separated list) only.

func.func @dumped(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = ml.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// cse runs twice, so it is dumped twice; canonicalize is not dumped.
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK-NOT:  IR Dump After canonicalize
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK-NOT:  IR Dump

// LIST-NOT:  IR Dump After cse
// LIST:      // -----// IR Dump After canonicalize //----- //
// LIST-NOT:  IR Dump

// A named pass that is not in the pipeline dumps nothing.
// NOT-RUN-NOT: IR Dump

// RUN: mlc-opt %s -p canonicalize,cse --print-ir-after-all -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s -p canonicalize,cse --mlir-print-ir-after-all -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s -p canonicalize,cse --print-ir-after-all --print-debuginfo -o %t 2>&1 \
// RUN:   | filecheck %s --check-prefix=LOC

// `--print-ir-after-all` dumps the IR to stderr after every pass, under an MLIR-style
// header naming the pass. The dumps follow the printing flags.

func.func @dumped(%a: tensor<4xf32>) -> tensor<4xf32> {
  // LOC: // -----// IR Dump After canonicalize //----- //
  // LOC: ml.add {{.*}} loc("{{.*}}mlc-opt-print-ir-after-all.mlir":[[# @LINE + 1]]:3)
  %0 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = ml.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = ml.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// After canonicalize, the dead ml.relu is gone and both ml.add ops are left; after
// cse, one ml.add is left.
// CHECK:      // -----// IR Dump After canonicalize //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        ml.add
// CHECK-NEXT:   ml.add
// CHECK-NEXT:   ml.mul
// CHECK-NEXT:   func.return
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        ml.add
// CHECK-NEXT:   ml.mul
// CHECK-NEXT:   func.return
// CHECK-NOT:  IR Dump

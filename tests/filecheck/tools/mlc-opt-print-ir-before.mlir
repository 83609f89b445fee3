// RUN: mlc-opt %s -p cse,canonicalize --print-ir-before=canonicalize -o %t 2>&1 | filecheck %s
// RUN: mlc-opt %s -p cse,canonicalize --print-ir-before=cse --print-ir-after=cse -o %t 2>&1 \
// RUN:   | filecheck %s --check-prefix=BOTH

// `--print-ir-before=<passes>` dumps the IR to stderr before the named passes only;
// it combines with `--print-ir-after`.

func.func @dumped(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = ml.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// CHECK-NOT:  IR Dump Before cse
// CHECK:      // -----// IR Dump Before canonicalize //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        ml.add
// CHECK-NEXT:   ml.mul
// CHECK-NOT:  IR Dump

// BOTH:      // -----// IR Dump Before cse //----- //
// BOTH:        ml.add
// BOTH-NEXT:   ml.add
// BOTH:      // -----// IR Dump After cse //----- //
// BOTH:        ml.add
// BOTH-NEXT:   ml.mul
// BOTH-NOT:  IR Dump

// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise | filecheck %s

// What fusion leaves apart around contractions, so that linalg-tile's kernels take them.

// A matrix-vector product keeps its epilogue apart: the dot-product kernel takes none.
// CHECK-LABEL: func.func @matvec_epilogue
// CHECK:         %[[M:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-NOT:       scf.if
// CHECK:         } -> tensor<8x1xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[M]], %c : tensor<8x1xf32>, tensor<8x1xf32>)
// CHECK:           arith.addf
func.func @matvec_epilogue(%g: tensor<8x8xf32>, %p: tensor<8x1xf32>, %c: tensor<8x1xf32>) -> tensor<8x1xf32> {
  %m = ml.matmul %g, %p : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %s = ml.add %m, %c : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  func.return %s : tensor<8x1xf32>
}

// -----

// A producer read once per output column is not recomputed inside the matmul: the
// matmul's operands stay plain reads, which its kernel packs once.
// CHECK-LABEL: func.func @producer_into_matmul
// CHECK:         %[[R:.+]] = linalg.generic
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %b : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NOT:       arith.maximumf
// CHECK:         func.return
func.func @producer_into_matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %r = ml.relu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = ml.matmul %r, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %m : tensor<4x16xf32>
}

// -----

// A reduction over an empty dim never reaches its last iteration: the epilogue stays
// apart, so log(sum([])) is log(0) = -inf, not the untouched 0.
// CHECK-LABEL: func.func @empty_reduction_keeps_its_epilogue
// CHECK:         %[[S:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-NOT:       scf.if
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<2x1x4xf32>)
// CHECK:           math.log
func.func @empty_reduction_keeps_its_epilogue(%x: tensor<2x0x4xf32>) -> tensor<2x1x4xf32> {
  %s = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  %l = ml.log %s : (tensor<2x1x4xf32>) -> tensor<2x1x4xf32>
  func.return %l : tensor<2x1x4xf32>
}

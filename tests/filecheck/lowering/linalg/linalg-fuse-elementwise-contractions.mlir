// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise \
// RUN:   --print-op-generic | mlc-opt --split-input-file > /dev/null

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

// A convolution at batch 1 with a 1x1 output reads each weight once, but weights made
// without inputs (a flip, read through `tensor.extract`) stay apart: fused, nothing
// would read the kernel loops on their own (only the input's `oh + kh`), and the
// maps would not be invertible. (The input gradient of a padded conv builds this.)
// CHECK-LABEL: func.func @flipped_weights_stay_apart
// CHECK:         %[[F:.+]] = linalg.generic
// CHECK:           tensor.extract %w
// CHECK:         linalg.generic {{.*}} ins(%x, %[[F]] : tensor<1x4x3x3xf32>, tensor<4x4x3x3xf32>)
// CHECK-NOT:       tensor.extract
// CHECK:         func.return
func.func @flipped_weights_stay_apart(%x: tensor<1x4x3x3xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x1x1xf32> {
  %f = ml.slice %w {starts = array<i64: 0, 0, 2, 2>, ends = array<i64: 9223372036854775807, 9223372036854775807, -4, -4>, steps = array<i64: 1, 1, -1, -1>} : (tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32>
  %y = ml.conv2d %x, %f : (tensor<1x4x3x3xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return %y : tensor<1x4x1x1xf32>
}

// -----

// Weights computed from an input (a relu) read once are fused: the relu's input keeps
// the plain kernel loops.
// CHECK-LABEL: func.func @weights_with_inputs_fused
// CHECK:         linalg.generic {{.*}} ins(%x, %w : tensor<1x4x3x3xf32>, tensor<4x4x3x3xf32>)
// CHECK:           arith.maximumf
// CHECK:           arith.mulf
// CHECK:         func.return
func.func @weights_with_inputs_fused(%x: tensor<1x4x3x3xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x1x1xf32> {
  %f = ml.relu %w : (tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32>
  %y = ml.conv2d %x, %f : (tensor<1x4x3x3xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return %y : tensor<1x4x1x1xf32>
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

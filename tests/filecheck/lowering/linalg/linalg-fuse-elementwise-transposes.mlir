// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise,linalg-fuse-elementwise \
// RUN:   | filecheck %s

// Transposes fold into the indexing maps of the matmuls that read them: no copy is
// materialised, and linalg-tile's kernel packs the operand from its own layout.

// `x @ w.T` (ONNX Gemm's transB): the matmul reads w as (j, k).
// CHECK-LABEL: func.func @transposed_b
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<16x8xf32>)
// CHECK-NOT:     linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
// CHECK-SAME:      ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<16x8xf32>)

// LOC-LABEL: func.func @transposed_b
// LOC:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// LOC:         loc("model.py":2:7)
func.func @transposed_b(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %t = ml.transpose %w {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32> loc("model.py":1:7)
  %m = ml.matmul %x, %t : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc("model.py":2:7)
  func.return %m : tensor<4x16xf32>
}

// -----

// ONNX Gemm's transA and transB together, with a bias and relu fused as the epilogue.
// CHECK-LABEL: func.func @transposed_both
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<8x4xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<16x8xf32>, %[[BIAS:[a-zA-Z0-9_]+]]: tensor<16xf32>)
// CHECK-NOT:     ins(%[[A]] : tensor<8x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
// CHECK-SAME:      ins(%[[A]], %[[B]], %[[BIAS]] :
// CHECK:           scf.if
// CHECK:             arith.maximumf
func.func @transposed_both(%a: tensor<8x4xf32>, %b: tensor<16x8xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  %ta = ml.transpose %a {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %tb = ml.transpose %b {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %m = ml.matmul %ta, %tb : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %s = ml.add %m, %bias : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = ml.relu %s : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %r : tensor<4x16xf32>
}

// -----

// Attention's heads: q and k of shape (batch, seq, heads, dim) permuted to
// (batch, heads, seq, dim) and (batch, heads, dim, seq); q @ k^T reads both in place.
// CHECK-LABEL: func.func @attention_scores
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<1x5x2x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<1x5x2x8xf32>)
// CHECK-NOT:     linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>]
// CHECK-SAME:      ins(%[[Q]], %[[K]] :
func.func @attention_scores(%q: tensor<1x5x2x8xf32>, %k: tensor<1x5x2x8xf32>) -> tensor<1x2x5x5xf32> {
  %tq = ml.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x5x2x8xf32>) -> tensor<1x2x5x8xf32>
  %tk = ml.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x5x2x8xf32>) -> tensor<1x2x8x5xf32>
  %s = ml.matmul %tq, %tk : (tensor<1x2x5x8xf32>, tensor<1x2x8x5xf32>) -> tensor<1x2x5x5xf32>
  func.return %s : tensor<1x2x5x5xf32>
}

// -----

// A transpose with another user: the matmul reads the source, and the other user
// fuses the transpose as an elementwise producer, as before.
// CHECK-LABEL: func.func @transpose_shared
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<16x8xf32>)
// CHECK-DAG:     linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]], %[[W]] :
// CHECK-DAG:     linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[W]] : tensor<16x8xf32>)
// CHECK-DAG:       math.exp
func.func @transpose_shared(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %t = ml.transpose %w {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %m = ml.matmul %x, %t : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %e = ml.exp %t : (tensor<8x16xf32>) -> tensor<8x16xf32>
  func.return %m, %e : tensor<4x16xf32>, tensor<8x16xf32>
}

// -----

// A transposed convolution weight stays materialised: the convolution (three
// reduction loops) packs its image, not its weight.
// CHECK-LABEL: func.func @conv_weight_kept
// CHECK:         %[[TW:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[TW]] : tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>)
func.func @conv_weight_kept(%img: tensor<1x3x6x6xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %tw = ml.transpose %w {perm = array<i64: 1, 0, 2, 3>} : (tensor<3x4x3x3xf32>) -> tensor<4x3x3x3xf32>
  %y = ml.conv2d %img, %tw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// -----

// The transpose folds before elementwise fusion runs: `relu` is computed once in its
// own layout (a producer of a matmul is not recomputed in it), and the matmul reads
// its result transposed.
// CHECK-LABEL: func.func @computed_then_transposed
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
// CHECK-SAME:      ins(%{{.*}}, %[[R]] : tensor<4x8xf32>, tensor<16x8xf32>)
func.func @computed_then_transposed(%x: tensor<4x8xf32>, %v: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %r = ml.relu %v : (tensor<16x8xf32>) -> tensor<16x8xf32>
  %tr = ml.transpose %r {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  %m = ml.matmul %x, %tr : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %m : tensor<4x16xf32>
}

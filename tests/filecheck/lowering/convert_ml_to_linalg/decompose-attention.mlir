// RUN: mlc-opt %s --split-input-file -p 'decompose-attention{block-q=4 block-k=8}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'decompose-attention{block-q=4 block-k=8}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Lengths that are multiples of the blocks: a loop over query blocks, inside it a loop
// over key blocks carrying the max, the sum and the accumulator; q is scaled once, no
// band is needed, the normalised rows are inserted into the output.

// CHECK-LABEL: func.func @plain
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x8x16xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x32x16xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x32x4xf32>)
// CHECK:         %[[QS:.+]] = ml.mul %[[Q]], %{{.*}} : (tensor<2x8x16xf32>, tensor<f32>)
// CHECK:         %[[OUT:.+]] = scf.for %[[I:[a-zA-Z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (tensor<2x8x4xf32>)
// CHECK:           %[[QB:.+]] = tensor.extract_slice %[[QS]][0, %[[I]], 0] [2, 4, 16] [1, 1, 1] : tensor<2x8x16xf32> to tensor<2x4x16xf32>
// CHECK:           %{{.*}}, %[[L:[a-zA-Z0-9_]+]], %[[ACC:[a-zA-Z0-9_]+]] = scf.for %[[J:[a-zA-Z0-9_]+]] = {{.*}} -> (tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<2x4x4xf32>)
// CHECK:             %[[KB:.+]] = tensor.extract_slice %[[K]][0, %[[J]], 0] [2, 8, 16]
// CHECK:             %[[VB:.+]] = tensor.extract_slice %[[V]][0, %[[J]], 0] [2, 8, 4]
// CHECK:             %[[KT:.+]] = ml.transpose %[[KB]] {perm = array<i64: 0, 2, 1>}
// The scores: a (batch, i, k, j) contraction into a zero fill.
// CHECK:             %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[QB]], %[[KT]] : {{.*}})
// No mask, no band: the row max reads the scores directly.
// CHECK:             %[[M:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]] : tensor<2x4x8xf32>)
// CHECK:               arith.maximumf
// CHECK:             %[[P:.+]] = linalg.generic {{.*}} ins(%[[S]], %[[M]] : tensor<2x4x8xf32>, tensor<2x4x1xf32>)
// CHECK:               math.exp
// CHECK:             %[[ROWSUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<2x4x8xf32>)
// CHECK:             %[[PV:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[P]], %[[VB]] : tensor<2x4x8xf32>, tensor<2x8x4xf32>)
// CHECK:             scf.yield %[[M]], %[[ROWSUM]], %[[PV]]
// CHECK:           %[[ROWS:.+]] = linalg.generic {{.*}} ins(%[[ACC]], %[[L]] : tensor<2x4x4xf32>, tensor<2x4x1xf32>)
// CHECK:             arith.divf
// CHECK:           tensor.insert_slice %[[ROWS]] into %{{.*}}[0, %[[I]], 0] [2, 4, 4] [1, 1, 1]
// CHECK:         func.return %[[OUT]]

// LOC-LABEL:   func.func @plain
// LOC:           ml.mul {{.*}} loc("model.py":4:2)
// LOC:           tensor.extract_slice {{.*}} loc("model.py":4:2)
// LOC:           tensor.insert_slice {{.*}} loc("model.py":4:2)
func.func @plain(%q: tensor<2x8x16xf32>, %k: tensor<2x32x16xf32>, %v: tensor<2x32x4xf32>) -> tensor<2x8x4xf32> {
  %o = ml.attention %q, %k, %v {scale = 0.25 : f64} : (tensor<2x8x16xf32>, tensor<2x32x16xf32>, tensor<2x32x4xf32>) -> tensor<2x8x4xf32> loc("model.py":4:2)
  func.return %o : tensor<2x8x4xf32>
}

// -----

// Causal, grouped K/V heads, a bool mask, lengths that are not multiples of the blocks:
// K and V are gathered to the query heads; the last blocks start at `S - B`
// (`minsi`), the key loop ends at the causal band, and one generic masks the keys
// already seen and those past the band.

// CHECK-LABEL: func.func @causal_gqa_mask
// CHECK:         %[[IDX:.+]] = arith.constant dense<[0, 0, 0, 1, 1, 1]> : tensor<6xi64>
// CHECK:         ml.gather %{{.*}}, %[[IDX]] {axis = 1 : i64} : (tensor<1x2x13x8xf32>, tensor<6xi64>) -> tensor<1x6x13x8xf32>
// CHECK:         scf.for %[[I:[a-zA-Z0-9_]+]] =
// CHECK:           %[[START:.+]] = arith.minsi %[[I]], %{{.*}} : index
// CHECK:           tensor.extract_slice %{{.*}}[0, 0, %[[START]], 0] [1, 6, 4, 8]
// CHECK:           tensor.extract_slice %{{.*}}[%[[START]], 0] [4, 13]
// CHECK:           %[[KEND:.+]] = arith.maxsi
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[KEND]] step
// The band generic reads the bool mask block, the first unseen key and the diagonal.
// CHECK:             linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK:               linalg.index 3
// CHECK:               arith.cmpi sge
// CHECK:               linalg.index 2
// CHECK:               arith.cmpi sle
// CHECK:               arith.andi
// CHECK:               arith.select
func.func @causal_gqa_mask(%q: tensor<1x6x9x8xf32>, %k: tensor<1x2x13x8xf32>, %v: tensor<1x2x13x8xf32>, %m: tensor<9x13xi1>) -> tensor<1x6x9x8xf32> {
  %o = ml.attention %q, %k, %v, %m {scale = 0.5 : f64, causal = true} : (tensor<1x6x9x8xf32>, tensor<1x2x13x8xf32>, tensor<1x2x13x8xf32>, tensor<9x13xi1>) -> tensor<1x6x9x8xf32>
  func.return %o : tensor<1x6x9x8xf32>
}

// -----

// f16 is computed in f32 and rounded once; an additive mask is cast too, and added.
// Dynamic lengths give blocks of run-time size.

// CHECK-LABEL: func.func @f16_dynamic
// CHECK:         ml.cast %{{.*}} : (tensor<3x?x8xf16>) -> tensor<3x?x8xf32>
// CHECK:         %[[MASK:.+]] = ml.cast %{{.*}} : (tensor<?x?xf16>) -> tensor<?x?xf32>
// A mask with dynamic dims (maybe 1 at run time) is broadcast to the scores first.
// CHECK:         %[[FULL:.+]] = ml.broadcast_to %[[MASK]], %{{.*}} : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<3x?x?xf32>
// CHECK:         scf.for
// CHECK:           arith.minsi
// CHECK:           tensor.extract_slice {{.*}} to tensor<3x?x8xf32>
// CHECK:           %[[ROWS:.+]] = tensor.extract_slice %[[FULL]]
// CHECK:           scf.for
// CHECK:             tensor.extract_slice %[[ROWS]]
// CHECK:             linalg.generic
// CHECK:               arith.addf
// CHECK:               arith.select
// CHECK:           linalg.generic
// CHECK:             arith.divf
// CHECK:             arith.truncf {{.*}} : f32 to f16
func.func @f16_dynamic(%q: tensor<3x?x8xf16>, %k: tensor<3x?x8xf16>, %m: tensor<?x?xf16>) -> tensor<3x?x8xf16> {
  %o = ml.attention %q, %k, %k, %m {scale = 1.0 : f64} : (tensor<3x?x8xf16>, tensor<3x?x8xf16>, tensor<3x?x8xf16>, tensor<?x?xf16>) -> tensor<3x?x8xf16>
  func.return %o : tensor<3x?x8xf16>
}

// -----

// The result knows a head count the operands leave `?` (from the mask, as T5's export
// gives it): the output's empty tensor takes sizes for its dynamic dims only. (The
// operands' `?` head counts have K and V gathered to the query heads first.)

// CHECK-LABEL: func.func @heads_known_from_the_mask
// CHECK:         ml.gather %k
// CHECK:         ml.gather %v
// CHECK:         %[[B:.+]] = tensor.dim %q, %{{.*}} : tensor<?x?x?x16xf32>
// CHECK-NEXT:    arith.constant 1
// CHECK-NEXT:    tensor.dim %q
// CHECK-NEXT:    arith.constant 2
// CHECK-NEXT:    %[[S:.+]] = tensor.dim %q, %{{.*}} : tensor<?x?x?x16xf32>
// CHECK:         %[[OUT:.+]] = tensor.empty(%[[B]], %[[S]]) : tensor<?x2x?x16xf32>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[OUT]]) -> (tensor<?x2x?x16xf32>)
func.func @heads_known_from_the_mask(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>, %m: tensor<?x2x?x?xf32>) -> tensor<?x2x?x16xf32> {
  %o = ml.attention %q, %k, %v, %m {scale = 1.0 : f64} : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x16xf32>
  func.return %o : tensor<?x2x?x16xf32>
}

// -----

// Head counts known only at run time may still differ: K and V are gathered to the
// query heads by indices computed then, `h // (H / Hkv)`, once for both.

// CHECK-LABEL: func.func @dynamic_grouped_heads
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<?x4x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>)
// CHECK:         %[[H:.+]] = tensor.dim %[[Q]]
// CHECK:         %[[H64:.+]] = arith.index_cast %[[H]] : index to i64
// CHECK:         %[[G:.+]] = arith.divsi %[[H64]], %{{.*}} : i64
// CHECK:         %[[POS:.+]] = ml.cumsum %{{.*}} {axis = 0 : i64, exclusive = true}
// CHECK:         %[[IDX:.+]] = ml.div %[[POS]], %{{.*}} : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
// CHECK:         ml.gather %[[K]], %[[IDX]] {axis = 0 : i64} : (tensor<2x4x8xf32>, tensor<?xi64>) -> tensor<?x4x8xf32>
// CHECK:         ml.gather %[[K]], %[[IDX]] {axis = 0 : i64}
// CHECK:         scf.for

// LOC-LABEL:   func.func @dynamic_grouped_heads
// LOC:           ml.cumsum {{.*}} loc("model.py":7:3)
// LOC:           ml.gather {{.*}} loc("model.py":7:3)
func.func @dynamic_grouped_heads(%q: tensor<?x4x8xf32>, %k: tensor<2x4x8xf32>) -> tensor<?x4x8xf32> {
  %o = ml.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<?x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<?x4x8xf32> loc("model.py":7:3)
  func.return %o : tensor<?x4x8xf32>
}

// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A matmul is a zero fill and one generic over (i, k, j): the innermost loop j
// walks rows of b and c.

// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<8x16xf32>)
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT:    %[[Z:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<4x16xf32>)
// CHECK-NEXT:    ^bb0(%{{.+}}: f32):
// CHECK-NEXT:      %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      linalg.yield %[[ZERO]] : f32
// CHECK:         %[[C:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[Z]] : tensor<4x16xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[X]], %[[Y]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[ACC]], %[[P]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         func.return %[[C]]

// LOC-LABEL:   func.func @matmul_2d
// LOC:           tensor.empty() : tensor<4x16xf32> loc("mm.py":1:1)
// LOC:           arith.mulf {{.*}} loc("mm.py":1:1)
// LOC:           } -> tensor<4x16xf32> loc("mm.py":1:1)
func.func @matmul_2d(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = ml.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc("mm.py":1:1)
  func.return %0 : tensor<4x16xf32>
}

// -----

// Batch dims broadcast: b's missing leading dim is dropped and its static size-1
// batch dim reads index 0; dynamic sizes come from tensor.dim of the operand that has them.

// CHECK-LABEL: func.func @matmul_batch_broadcast
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x3x4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x8x?xf32>)
// CHECK-DAG:     %[[N:.+]] = tensor.dim %[[A]], %{{.+}} : tensor<?x3x4x8xf32>
// CHECK-DAG:     %[[M:.+]] = tensor.dim %[[B]], %{{.+}} : tensor<1x8x?xf32>
// CHECK:         %[[E:.+]] = tensor.empty(%[[N]], %[[M]]) : tensor<?x3x4x?xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
func.func @matmul_batch_broadcast(%a: tensor<?x3x4x8xf32>, %b: tensor<1x8x?xf32>) -> tensor<?x3x4x?xf32> {
  %0 = ml.matmul %a, %b : (tensor<?x3x4x8xf32>, tensor<1x8x?xf32>) -> tensor<?x3x4x?xf32>
  func.return %0 : tensor<?x3x4x?xf32>
}

// -----

// Integer matmul multiplies and adds with muli / addi, from a zero of its type.

// CHECK-LABEL: func.func @matmul_i64
// CHECK:         arith.constant 0 : i64
// CHECK:         iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK:           %[[P:.+]] = arith.muli %{{.+}}, %{{.+}} : i64
// CHECK-NEXT:      arith.addi %{{.+}}, %[[P]] : i64
func.func @matmul_i64(%a: tensor<2x4x8xi64>, %b: tensor<2x8x3xi64>) -> tensor<2x4x3xi64> {
  %0 = ml.matmul %a, %b : (tensor<2x4x8xi64>, tensor<2x8x3xi64>) -> tensor<2x4x3xi64>
  func.return %0 : tensor<2x4x3xi64>
}

// -----

// i32 matmul with a batch on the rhs only.

// CHECK-LABEL: func.func @matmul_i32_rhs_batch
// CHECK:         indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>]
// CHECK:           arith.muli %{{.+}}, %{{.+}} : i32
func.func @matmul_i32_rhs_batch(%a: tensor<4x8xi32>, %b: tensor<5x8x3xi32>) -> tensor<5x4x3xi32> {
  %0 = ml.matmul %a, %b : (tensor<4x8xi32>, tensor<5x8x3xi32>) -> tensor<5x4x3xi32>
  func.return %0 : tensor<5x4x3xi32>
}

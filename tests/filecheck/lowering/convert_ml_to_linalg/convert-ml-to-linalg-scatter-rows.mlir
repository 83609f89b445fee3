// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg | filecheck %s

// A grouped scatter_nd of rows (scatter_rows.py): one scf.for over the tuples carrying
// the result, each taking its destination row (the tuple's entries wrapped and clamped)
// and its row of updates as slices and combining them with a generic parallel over the
// row, whose last dim is the innermost loop; no counting loops.

// CHECK-LABEL: func.func @rows_add
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1024x512xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<?x1xi64>, %[[U:[a-zA-Z0-9_]+]]: tensor<?x512xf32>)
// CHECK:         %[[N:.+]] = tensor.dim %[[I]], %{{.+}} : tensor<?x1xi64>
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_nd' op index {} is out of range [-1024, 1024) of data dim 0" {mlc.reports_value}
// CHECK-NOT:     mlc.sequential
// CHECK:         %{{.+}} = scf.for %[[T:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[X]]) -> (tensor<1024x512xf32>) {
// CHECK:           %[[E:.+]] = tensor.extract %[[I]][%[[T]], %{{.+}}] : tensor<?x1xi64>
// CHECK:           %[[P:.+]] = arith.minui
// CHECK:           %[[ROW:.+]] = tensor.extract_slice %[[ACC]][%[[P]], 0] [1, 512] [1, 1] : tensor<1024x512xf32> to tensor<1x512xf32>
// CHECK:           %[[UPD:.+]] = tensor.extract_slice %[[U]][%[[T]], 0] [1, 512] [1, 1] : tensor<?x512xf32> to tensor<1x512xf32>
// CHECK:           %[[NEW:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[UPD]] : tensor<1x512xf32>) outs(%[[ROW]] : tensor<1x512xf32>)
// CHECK:           ^bb0(%[[V:.+]]: f32, %[[A:.+]]: f32):
// CHECK:             %[[SUM:.+]] = arith.addf %[[A]], %[[V]] : f32
// CHECK:             linalg.yield %[[SUM]] : f32
// CHECK:           %[[BACK:.+]] = tensor.insert_slice %[[NEW]] into %[[ACC]][%[[P]], 0] [1, 512] [1, 1] : tensor<1x512xf32> into tensor<1024x512xf32>
// CHECK:           scf.yield %[[BACK]] : tensor<1024x512xf32>
// CHECK-NOT:     mlc.sequential
// CHECK:         func.return
func.func @rows_add(%x: tensor<1024x512xf32>, %i: tensor<?x1xi64>, %u: tensor<?x512xf32>) -> tensor<1024x512xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<1024x512xf32>, tensor<?x1xi64>, tensor<?x512xf32>) -> tensor<1024x512xf32>
  func.return %s : tensor<1024x512xf32>
}

// -----

// Tuples of two entries into rows of a dynamic size, in a 2-D grid of tuples
// (delinearised), with `none`: the generic yields the update, the last tuple in
// row-major order writing last.

// CHECK-LABEL: func.func @rows_none_dynamic
// CHECK:         scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (tensor<4x5x?xf32>) {
// CHECK:           arith.remui %[[T]]
// CHECK:           arith.divui %[[T]]
// CHECK:           %[[ROW:.+]] = tensor.extract_slice %[[ACC]][%{{.+}}, %{{.+}}, 0] [1, 1, %{{.+}}] [1, 1, 1] : tensor<4x5x?xf32> to tensor<1x1x?xf32>
// CHECK:           tensor.extract_slice %{{.+}}[%{{.+}}, %{{.+}}, 0] [1, 1, %{{.+}}] [1, 1, 1] : tensor<?x3x?xf32> to tensor<1x1x?xf32>
// CHECK:           linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK:           ^bb0(%[[V:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:        linalg.yield %[[V]] : f32
// CHECK:           tensor.insert_slice
func.func @rows_none_dynamic(%x: tensor<4x5x?xf32>, %i: tensor<?x3x2xi32>, %u: tensor<?x3x?xf32>) -> tensor<4x5x?xf32> {
  %s = ml.scatter_nd %x, %i, %u : (tensor<4x5x?xf32>, tensor<?x3x2xi32>, tensor<?x3x?xf32>) -> tensor<4x5x?xf32>
  func.return %s : tensor<4x5x?xf32>
}

// -----

// Not for tuples of single elements (q = rank) nor for scatter_elements: no row to
// vectorise, they keep the grouped form's counting loops.

// CHECK-LABEL: func.func @elements_nd
// CHECK-NOT:     tensor.extract_slice
// CHECK-COUNT-3: } {mlc.sequential}
// CHECK-NOT:     tensor.insert_slice
// CHECK:         func.return
func.func @elements_nd(%x: tensor<4x5xf32>, %i: tensor<?x2xi64>, %u: tensor<?xf32>) -> tensor<4x5xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "max"} : (tensor<4x5xf32>, tensor<?x2xi64>, tensor<?xf32>) -> tensor<4x5xf32>
  func.return %s : tensor<4x5xf32>
}

// -----

// CHECK-LABEL: func.func @elements_scatter_elements
// CHECK-NOT:     tensor.extract_slice
// CHECK-COUNT-3: } {mlc.sequential}
// CHECK-NOT:     tensor.insert_slice
// CHECK:         func.return
func.func @elements_scatter_elements(%x: tensor<4x5xf32>, %i: tensor<?x5xi64>, %u: tensor<?x5xf32>) -> tensor<4x5xf32> {
  %s = ml.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "add"} : (tensor<4x5xf32>, tensor<?x5xi64>, tensor<?x5xf32>) -> tensor<4x5xf32>
  func.return %s : tensor<4x5xf32>
}

// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo | filecheck %s --check-prefix=LOC

// scatter_elements: the indices checked against the axis, then one generic over the
// result (data as its init) with an inner reduction loop over the updates along the
// axis (sized by an i8 tensor.empty), reading the index and the update with
// tensor.extract and combining where the clamped index is the element's.

// CHECK-LABEL: func.func @scatter_elements_add
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3x5xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<3x2xi64>, %[[U:[a-zA-Z0-9_]+]]: tensor<3x2xf32>)
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_elements' op index {} is out of range [-5, 5) of data dim 1" {mlc.reports_value}
// CHECK:         %[[STEPS:.+]] = tensor.empty() : tensor<2xi8>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[STEPS]] : tensor<2xi8>) outs(%[[X]] : tensor<3x5xf32>)
// CHECK:           tensor.extract %[[I]]
// CHECK:           tensor.extract %[[U]]
// CHECK:           arith.minui
// CHECK:           %[[SUM:.+]] = arith.addf
// CHECK:           arith.select %{{.+}}, %[[SUM]], %{{.+}} : f32

// LOC-LABEL:   func.func @scatter_elements_add
// LOC:           cf.assert {{.*}} loc("model.py":4:5)
// LOC:           } -> tensor<3x5xf32> loc("model.py":4:5)
func.func @scatter_elements_add(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<3x5xf32> {
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32> loc("model.py":4:5)
  func.return %s : tensor<3x5xf32>
}

// -----

// Dynamic dims: the indices off the axis must not exceed the data, the updates must
// equal the indices. A size not known when compiling takes the form grouped by
// destination (scatter_grouped.py): a generic numbering each update's destination
// element, three sequential loops (count, prefix sum, place) and a parallel generic
// over the result walking only its element's updates, in order.

// CHECK-LABEL: func.func @scatter_elements_dynamic
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_elements' op indices dim 0 must not exceed the data's"
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_elements' op indices dim 0 must equal the updates'"
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_elements' op index {} is out of range [-n, n) (n its size) of data dim 1"
// CHECK:         %[[DEST:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} ins(%{{.+}} : tensor<?x?xi32>) outs(%{{.+}} : tensor<?x?xi64>)
// CHECK:         scf.for
// CHECK:           tensor.extract %[[DEST]]
// CHECK:           tensor.insert
// CHECK:         } {mlc.sequential}
// CHECK:         scf.for
// CHECK:         } {mlc.sequential}
// CHECK:         scf.for
// CHECK:         } {mlc.sequential}
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.+}} : tensor<?x?xi32>)
// CHECK:           scf.for
// CHECK:             arith.maxsi
func.func @scatter_elements_dynamic(%x: tensor<?x?xi32>, %i: tensor<?x?xi32>, %u: tensor<?x?xi32>) -> tensor<?x?xi32> {
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "max"} : (tensor<?x?xi32>, tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  func.return %s : tensor<?x?xi32>
}

// -----

// Constant indices are checked when compiling: no run-time check (one out of range is
// an error at the op: convert-ml-to-linalg-invalid-scatter.mlir).

// CHECK-LABEL: func.func @scatter_elements_constant
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic
func.func @scatter_elements_constant(%x: tensor<3x5xf32>, %u: tensor<3x1xf32>) -> tensor<3x5xf32> {
  %i = arith.constant dense<[[0], [4], [-5]]> : tensor<3x1xi64>
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>, tensor<3x1xf32>) -> tensor<3x5xf32>
  func.return %s : tensor<3x5xf32>
}

// -----

// scatter_nd: each entry of the tuples checked against its dim, then one generic over
// the result with a reduction loop over the tuples, which reads the indices at
// [t, 0] and so gives that loop its size.

// CHECK-LABEL: func.func @scatter_nd
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x5x6xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<3x2xi64>, %[[U:[a-zA-Z0-9_]+]]: tensor<3x6xf32>)
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_nd' op index {} is out of range [-4, 4) of data dim 0" {mlc.reports_value}
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_nd' op index {} is out of range [-5, 5) of data dim 1" {mlc.reports_value}
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[I]] : tensor<3x2xi64>) outs(%[[X]] : tensor<4x5x6xf32>)
// CHECK:           tensor.extract %[[I]]
// CHECK:           tensor.extract %[[U]]
// CHECK-NOT:       arith.addf
// CHECK:           arith.select

// LOC-LABEL:   func.func @scatter_nd
// LOC:           } -> tensor<4x5x6xf32> loc("model.py":9:1)
func.func @scatter_nd(%x: tensor<4x5x6xf32>, %i: tensor<3x2xi64>, %u: tensor<3x6xf32>) -> tensor<4x5x6xf32> {
  %s = ml.scatter_nd %x, %i, %u : (tensor<4x5x6xf32>, tensor<3x2xi64>, tensor<3x6xf32>) -> tensor<4x5x6xf32> loc("model.py":9:1)
  func.return %s : tensor<4x5x6xf32>
}

// -----

// A dynamic count of tuples of single elements (q = rank: no rows, so not
// scatter_rows.py's loop): the updates' dims checked against it, then the form
// grouped by destination: (a) count the tuples of each element at the slot after it,
// (b) an inclusive prefix sum, (c) each tuple's number at its element's next slot, the
// cursor moving on, then (d) a parallel generic over the result whose element
// walks [end[p - 1], end[p]) of the order, in order (mul: every update).

// CHECK-LABEL: func.func @scatter_nd_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x5xi64>, %[[I:[a-zA-Z0-9_]+]]: tensor<?x2xi32>, %[[U:[a-zA-Z0-9_]+]]: tensor<?xi64>)
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_nd' op indices dim 0 of updates must equal indices' or data's"
// CHECK:         %[[DEST:.+]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[I]] : tensor<?x2xi32>) outs(%{{.+}} : tensor<?xi64>)
// CHECK:           arith.minui
// CHECK:         %[[ZEROS:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<21xi64>)
// CHECK:         %[[COUNTS:.+]] = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[S:.+]] = %[[ZEROS]]) -> (tensor<21xi64>) {
// CHECK:           %[[D:.+]] = tensor.extract %[[DEST]][%[[T]]] : tensor<?xi64>
// CHECK:           tensor.insert %{{.+}} into %[[S]]
// CHECK:         } {mlc.sequential}
// CHECK:         %[[START:.+]], %{{.+}} = scf.for {{.+}} iter_args(%{{.+}} = %[[COUNTS]], %{{.+}} = %{{.+}}) -> (tensor<21xi64>, i64) {
// CHECK:         } {mlc.sequential}
// CHECK:         %[[END:.+]], %[[ORDER:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[START]], %{{.+}} = %{{.+}}) -> (tensor<21xi64>, tensor<?xi64>) {
// CHECK:         } {mlc.sequential}
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[X]] : tensor<4x5xi64>) {
// CHECK:           tensor.extract %[[END]]
// CHECK:           scf.for
// CHECK:             tensor.extract %[[ORDER]]
// CHECK:             tensor.extract %[[U]]
// CHECK:             arith.muli
// CHECK-NOT:     linalg.generic
// CHECK:         func.return

// LOC-LABEL:   func.func @scatter_nd_dynamic
// LOC:           tensor.insert {{.*}} loc("model.py":12:3)
// LOC:           } {mlc.sequential} loc("model.py":12:3)
// LOC:           } -> tensor<4x5xi64> loc("model.py":12:3)
func.func @scatter_nd_dynamic(%x: tensor<4x5xi64>, %i: tensor<?x2xi32>, %u: tensor<?xi64>) -> tensor<4x5xi64> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "mul"} : (tensor<4x5xi64>, tensor<?x2xi32>, tensor<?xi64>) -> tensor<4x5xi64> loc("model.py":12:3)
  func.return %s : tensor<4x5xi64>
}

// -----

// The threshold (scatter_grouped.GROUPED_MIN_PAIRS = 4096 rows x tuples), its two
// sides: 64 rows x 64 tuples keep the generic walking every tuple; 65 x 64 take the
// loop over the tuples of scatter_rows.py (rows of 3).

// CHECK-LABEL: func.func @scatter_nd_at_threshold
// CHECK-NOT:     scf.for
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT:     scf.for
// CHECK:         func.return
func.func @scatter_nd_at_threshold(%x: tensor<64x3xf32>, %i: tensor<64x1xi64>, %u: tensor<64x3xf32>) -> tensor<64x3xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<64x3xf32>, tensor<64x1xi64>, tensor<64x3xf32>) -> tensor<64x3xf32>
  func.return %s : tensor<64x3xf32>
}

// CHECK-LABEL: func.func @scatter_nd_above_threshold
// CHECK-NOT:     mlc.sequential
// CHECK:         scf.for
// CHECK:           tensor.extract_slice
// CHECK:           linalg.generic
// CHECK-NOT:         arith.addf
// CHECK:           tensor.insert_slice
// CHECK:         func.return
func.func @scatter_nd_above_threshold(%x: tensor<65x3xf32>, %i: tensor<64x1xi64>, %u: tensor<64x3xf32>) -> tensor<65x3xf32> {
  %s = ml.scatter_nd %x, %i, %u : (tensor<65x3xf32>, tensor<64x1xi64>, tensor<64x3xf32>) -> tensor<65x3xf32>
  func.return %s : tensor<65x3xf32>
}

// -----

// scatter_elements: the axis (4096) times the updates along it (2) is at the threshold;
// 2049 x 2 is above it: destinations are elements of the result.

// CHECK-LABEL: func.func @scatter_elements_at_threshold
// CHECK-NOT:     scf.for
// CHECK:         func.return
func.func @scatter_elements_at_threshold(%x: tensor<3x2048xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<3x2048xf32> {
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<3x2048xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x2048xf32>
  func.return %s : tensor<3x2048xf32>
}

// CHECK-LABEL: func.func @scatter_elements_above_threshold
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]{{.+}} outs(%{{.+}} : tensor<3x2xi64>)
// CHECK:         linalg.generic {{.+}} outs(%{{.+}} : tensor<6148xi64>)
// CHECK-COUNT-3: } {mlc.sequential}
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK:           arith.addf
func.func @scatter_elements_above_threshold(%x: tensor<3x2049xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<3x2049xf32> {
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<3x2049xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x2049xf32>
  func.return %s : tensor<3x2049xf32>
}

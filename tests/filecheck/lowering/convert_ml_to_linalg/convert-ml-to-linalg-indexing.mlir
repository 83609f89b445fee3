// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo | filecheck %s --check-prefix=LOC

// gather_elements: a check of the indices against the axis (reporting the index), then
// one generic reading the indices through the identity map and the data at the loop
// indices with the axis's replaced by the wrapped, clamped index.

// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3x5xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<3x2xi64>)
// CHECK:         cf.assert %{{.+}}, "'ml.gather_elements' op index {} is out of range [-5, 5) of data dim 1" {mlc.reports_value}
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[I]] : tensor<3x2xi64>)
// CHECK:           %[[K:.+]] = arith.minui
// CHECK:           tensor.extract %[[X]][%{{.+}}, %[[K]]] : tensor<3x5xf32>

// LOC-LABEL:   func.func @gather_elements
// LOC:           cf.assert {{.*}} loc("model.py":2:3)
func.func @gather_elements(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %g = ml.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32> loc("model.py":2:3)
  func.return %g : tensor<3x2xf32>
}

// -----

// Dynamic dims: indices dims off the axis are checked not to exceed the data's.

// CHECK-LABEL: func.func @gather_elements_dynamic
// CHECK:         arith.cmpi sle
// CHECK-NEXT:    cf.assert %{{.+}}, "'ml.gather_elements' op indices dim 0 must not exceed the data's"
// CHECK:         cf.assert %{{.+}}, "'ml.gather_elements' op index {} is out of range [-n, n) (n its size) of data dim 1"
func.func @gather_elements_dynamic(%x: tensor<?x?xf32>, %i: tensor<?x?xi32>) -> tensor<?x?xf32> {
  %g = ml.gather_elements %x, %i {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  func.return %g : tensor<?x?xf32>
}

// -----

// gather_nd: one check per entry of the index tuple (a reduction keeping the last dim),
// then a generic with no input whose body reads the tuple from the indices.

// CHECK-LABEL: func.func @gather_nd
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x5x6xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<3x2xi64>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[I]] : tensor<3x2xi64>)
// CHECK:         cf.assert %{{.+}}, "'ml.gather_nd' op index {} is out of range [-4, 4) of data dim 0"
// CHECK:         cf.assert %{{.+}}, "'ml.gather_nd' op index {} is out of range [-5, 5) of data dim 1"
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%{{.+}} : tensor<3x6xf32>)
// CHECK:           tensor.extract %[[I]][%{{.+}}, %{{.+}}] : tensor<3x2xi64>
// CHECK:           tensor.extract %[[I]][%{{.+}}, %{{.+}}] : tensor<3x2xi64>
// CHECK:           tensor.extract %[[X]][%{{.+}}, %{{.+}}, %{{.+}}] : tensor<4x5x6xf32>
func.func @gather_nd(%x: tensor<4x5x6xf32>, %i: tensor<3x2xi64>) -> tensor<3x6xf32> {
  %g = ml.gather_nd %x, %i : (tensor<4x5x6xf32>, tensor<3x2xi64>) -> tensor<3x6xf32>
  func.return %g : tensor<3x6xf32>
}

// -----

// A dynamic batch dim is checked to be the data's.

// CHECK-LABEL: func.func @gather_nd_batch
// CHECK:         arith.cmpi eq
// CHECK-NEXT:    cf.assert %{{.+}}, "'ml.gather_nd' op indices dim 0 must equal the data's (a batch dim)"
func.func @gather_nd_batch(%x: tensor<?x5xf32>, %i: tensor<?x1xi64>) -> tensor<?xf32> {
  %g = ml.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<?x5xf32>, tensor<?x1xi64>) -> tensor<?xf32>
  func.return %g : tensor<?xf32>
}

// -----

// top_k: one generic of k selection passes per row: loops (rows, slot j, position i),
// j and i sequential; the previous slot's pick (filled with index -1: none) carried at
// the row, the values and indices written at (row, j).

// CHECK-LABEL: func.func @top_k
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<5x8xf32>)
// CHECK-NOT:     cf.assert
// CHECK:         %[[PREV:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<5x1xi64>)
// CHECK:           arith.constant -1 : i64
// CHECK:         %{{.+}}, %{{.+}}, %[[V:.+]], %[[I:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, 0)>, affine_map<(d0, d1, d2) -> (d0, 0)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]] : tensor<5x8xf32>)
// CHECK:           arith.cmpf uno
// CHECK:           arith.cmpf ogt
// CHECK:         func.return %[[V]], %[[I]]

// LOC-LABEL:   func.func @top_k
// LOC:           } -> (tensor<5x1xf32>, tensor<5x1xi64>, tensor<5x2xf32>, tensor<5x2xi64>) loc("model.py":6:2)
func.func @top_k(%x: tensor<5x8xf32>) -> (tensor<5x2xf32>, tensor<5x2xi64>) {
  %v, %i = ml.top_k %x {k = 2 : i64, axis = -1 : i64} : (tensor<5x8xf32>) -> (tensor<5x2xf32>, tensor<5x2xi64>) loc("model.py":6:2)
  func.return %v, %i : tensor<5x2xf32>, tensor<5x2xi64>
}

// -----

// The smallest along a dynamic first axis of unsigned integers: k is checked against
// the axis's size; the position loop is the last, the slot loop the axis's.

// CHECK-LABEL: func.func @top_k_smallest_dynamic
// CHECK:         arith.cmpi sle
// CHECK-NEXT:    cf.assert %{{.+}}, "'ml.top_k' op k (3) exceeds the size of dim 0"
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (0, d1)>, affine_map<(d0, d1, d2) -> (0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK:           arith.cmpi ult
// CHECK-NOT:       arith.cmpf
func.func @top_k_smallest_dynamic(%x: tensor<?x4xui8>) -> (tensor<3x4xui8>, tensor<3x4xi64>) {
  %v, %i = ml.top_k %x {k = 3 : i64, axis = 0 : i64, largest = false} : (tensor<?x4xui8>) -> (tensor<3x4xui8>, tensor<3x4xi64>)
  func.return %v, %i : tensor<3x4xui8>, tensor<3x4xi64>
}

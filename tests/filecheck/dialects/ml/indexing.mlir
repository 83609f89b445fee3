// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// ml.gather_elements and ml.gather_nd in the pretty form; batch_dims = 0 is left out.

// CHECK-LABEL: func.func @indexing
// CHECK-NEXT:    %{{.*}} = ml.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
// CHECK-NEXT:    %{{.*}} = ml.gather_nd %{{.*}}, %{{.*}} : (tensor<4x?x6xf32>, tensor<3x2xi32>) -> tensor<3x6xf32>
// CHECK-NEXT:    %{{.*}} = ml.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<4x?x6xf32>, tensor<4x1xi64>) -> tensor<4x6xf32>

// GENERIC-LABEL: sym_name = "indexing"
// GENERIC:       "ml.gather_elements"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}>
// GENERIC:       "ml.gather_nd"(%{{.*}}, %{{.*}}) <{batch_dims = 0 : i64}> : (tensor<4x?x6xf32>, tensor<3x2xi32>) -> tensor<3x6xf32>
// GENERIC:       "ml.gather_nd"(%{{.*}}, %{{.*}}) <{batch_dims = 1 : i64}>
func.func @indexing(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>, %y: tensor<4x?x6xf32>, %j: tensor<3x2xi32>, %k: tensor<4x1xi64>) -> (tensor<3x2xf32>, tensor<3x6xf32>, tensor<4x6xf32>) {
  %g = ml.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %n = ml.gather_nd %y, %j : (tensor<4x?x6xf32>, tensor<3x2xi32>) -> tensor<3x6xf32>
  %b = "ml.gather_nd"(%y, %k) <{batch_dims = 1 : i64}> : (tensor<4x?x6xf32>, tensor<4x1xi64>) -> tensor<4x6xf32>
  func.return %g, %n, %b : tensor<3x2xf32>, tensor<3x6xf32>, tensor<4x6xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_elements
// CHECK:         ml.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "add"} : (tensor<3x?xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x?xf32>
// CHECK:         ml.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<3x?xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x?xf32>
func.func @scatter_elements(%x: tensor<3x?xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> (tensor<3x?xf32>, tensor<3x?xf32>) {
  %a = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<3x?xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x?xf32>
  %b = "ml.scatter_elements"(%x, %i, %u) {axis = -1 : i64, reduction = "none"} : (tensor<3x?xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x?xf32>
  func.return %a, %b : tensor<3x?xf32>, tensor<3x?xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_nd
// CHECK:         ml.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "max"} : (tensor<4x5x6xi32>, tensor<?x2xi32>, tensor<?x6xi32>) -> tensor<4x5x6xi32>
func.func @scatter_nd(%x: tensor<4x5x6xi32>, %i: tensor<?x2xi32>, %u: tensor<?x6xi32>) -> tensor<4x5x6xi32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "max"} : (tensor<4x5x6xi32>, tensor<?x2xi32>, tensor<?x6xi32>) -> tensor<4x5x6xi32>
  func.return %s : tensor<4x5x6xi32>
}

// -----

// CHECK-LABEL: func.func @top_k
// CHECK:         %{{.*}}, %{{.*}} = ml.top_k %{{.*}} {k = 2 : i64, axis = -1 : i64} : (tensor<5x?xf32>) -> (tensor<5x2xf32>, tensor<5x2xi64>)
// CHECK:         ml.top_k %{{.*}} {k = 1 : i64, axis = 0 : i64, largest = false, sorted = false} : (tensor<5x?xf32>) -> (tensor<1x?xf32>, tensor<1x?xi64>)
func.func @top_k(%x: tensor<5x?xf32>) -> (tensor<5x2xi64>, tensor<1x?xf32>) {
  %v, %i = ml.top_k %x {k = 2 : i64, axis = -1 : i64} : (tensor<5x?xf32>) -> (tensor<5x2xf32>, tensor<5x2xi64>)
  %w, %j = "ml.top_k"(%x) {k = 1 : i64, axis = 0 : i64, largest = false, sorted = false} : (tensor<5x?xf32>) -> (tensor<1x?xf32>, tensor<1x?xi64>)
  func.return %i, %w : tensor<5x2xi64>, tensor<1x?xf32>
}

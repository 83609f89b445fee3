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

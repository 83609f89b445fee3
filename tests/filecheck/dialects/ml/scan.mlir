// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// The index reductions give i64 indices.

// CHECK-LABEL: func.func @arg_reductions
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x?xf32>)
// CHECK-NEXT:    %{{.*}} = ml.argmax %[[X]] {axis = 1 : i64, keepdims = false} : (tensor<4x?xf32>) -> tensor<4xi64>
// CHECK-NEXT:    %{{.*}} = ml.argmin %[[X]] {axis = -2 : i64, keepdims = true, select_last_index = true} : (tensor<4x?xf32>) -> tensor<1x?xi64>

// GENERIC-LABEL: sym_name = "arg_reductions"
// GENERIC:       "ml.argmax"(%{{.*}}) <{axis = 1 : i64, keepdims = false}> : (tensor<4x?xf32>) -> tensor<4xi64>
// GENERIC-NEXT:  "ml.argmin"(%{{.*}}) <{axis = -2 : i64, keepdims = true, select_last_index = true}> : (tensor<4x?xf32>) -> tensor<1x?xi64>
func.func @arg_reductions(%x: tensor<4x?xf32>) {
  %0 = ml.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<4x?xf32>) -> tensor<4xi64>
  %1 = ml.argmin %x {axis = -2 : i64, keepdims = true, select_last_index = true} : (tensor<4x?xf32>) -> tensor<1x?xi64>
  func.return
}

// -----

// A scan keeps its operand's type; exclusive and reverse default to false.

// CHECK-LABEL: func.func @cumsums
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x5xi32>)
// CHECK-NEXT:    %{{.*}} = ml.cumsum %[[X]] {axis = 0 : i64} : (tensor<?x5xi32>) -> tensor<?x5xi32>
// CHECK-NEXT:    %{{.*}} = ml.cumsum %[[X]] {axis = -1 : i64, exclusive = true, reverse = true} : (tensor<?x5xi32>) -> tensor<?x5xi32>

// GENERIC-LABEL: sym_name = "cumsums"
// GENERIC:       "ml.cumsum"(%{{.*}}) <{axis = 0 : i64}> : (tensor<?x5xi32>) -> tensor<?x5xi32>
// GENERIC-NEXT:  "ml.cumsum"(%{{.*}}) <{axis = -1 : i64, exclusive = true, reverse = true}> : (tensor<?x5xi32>) -> tensor<?x5xi32>
func.func @cumsums(%x: tensor<?x5xi32>) {
  %0 = ml.cumsum %x {axis = 0 : i64} : (tensor<?x5xi32>) -> tensor<?x5xi32>
  %1 = "ml.cumsum"(%x) <{axis = -1 : i64, exclusive = true, reverse = true}> : (tensor<?x5xi32>) -> tensor<?x5xi32>
  func.return
}

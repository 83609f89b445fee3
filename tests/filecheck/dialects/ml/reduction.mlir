// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// The reductions drop the reduced dims without keepdims.

// CHECK-LABEL: func.func @reduce_drop_dims
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %{{.*}} = ml.reduce_sum %[[X]] {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_mean %[[X]] {axes = array<i64: 0>, keepdims = false} : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_max %[[X]] {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_min %[[X]] {axes = array<i64: 1, 0>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>

// GENERIC-LABEL: sym_name = "reduce_drop_dims"
// GENERIC:       "ml.reduce_sum"(%{{.*}}) <{axes = array<i64: 1>, keepdims = false}> : (tensor<4x8xf32>) -> tensor<4xf32>
// GENERIC-NEXT:  "ml.reduce_mean"(%{{.*}}) <{axes = array<i64: 0>, keepdims = false}> : (tensor<4x8xf32>) -> tensor<8xf32>
// GENERIC-NEXT:  "ml.reduce_max"(%{{.*}}) <{axes = array<i64: 0, 1>, keepdims = false}> : (tensor<4x8xf32>) -> tensor<f32>
// GENERIC-NEXT:  "ml.reduce_min"(%{{.*}}) <{axes = array<i64: 1, 0>, keepdims = false}> : (tensor<4x8xf32>) -> tensor<f32>
func.func @reduce_drop_dims(%x: tensor<4x8xf32>) {
  %0 = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %1 = ml.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : (tensor<4x8xf32>) -> tensor<8xf32>
  %2 = ml.reduce_max %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  %3 = ml.reduce_min %x {axes = array<i64: 1, 0>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  func.return
}

// -----

// With keepdims, the reduced dims stay as size 1.

// CHECK-LABEL: func.func @reduce_keepdims
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x4xf64>)
// CHECK-NEXT:    %{{.*}} = ml.reduce_sum %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<2x1x4xf64>
// CHECK-NEXT:    %{{.*}} = ml.reduce_mean %[[X]] {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<1x3x1xf64>
// CHECK-NEXT:    %{{.*}} = ml.reduce_max %[[X]] {axes = array<i64: 0, 1, 2>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<1x1x1xf64>
// CHECK-NEXT:    %{{.*}} = ml.reduce_min %[[X]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<2x3x1xf64>

// GENERIC-LABEL: sym_name = "reduce_keepdims"
// GENERIC:       "ml.reduce_sum"(%{{.*}}) <{axes = array<i64: 1>, keepdims = true}> : (tensor<2x3x4xf64>) -> tensor<2x1x4xf64>
// GENERIC-NEXT:  "ml.reduce_mean"(%{{.*}}) <{axes = array<i64: 0, 2>, keepdims = true}> : (tensor<2x3x4xf64>) -> tensor<1x3x1xf64>
// GENERIC-NEXT:  "ml.reduce_max"(%{{.*}}) <{axes = array<i64: 0, 1, 2>, keepdims = true}> : (tensor<2x3x4xf64>) -> tensor<1x1x1xf64>
// GENERIC-NEXT:  "ml.reduce_min"(%{{.*}}) <{axes = array<i64: 2>, keepdims = true}> : (tensor<2x3x4xf64>) -> tensor<2x3x1xf64>
func.func @reduce_keepdims(%x: tensor<2x3x4xf64>) {
  %0 = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<2x1x4xf64>
  %1 = ml.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<1x3x1xf64>
  %2 = ml.reduce_max %x {axes = array<i64: 0, 1, 2>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<1x1x1xf64>
  %3 = ml.reduce_min %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf64>) -> tensor<2x3x1xf64>
  func.return
}

// -----

// Negative axes count from the end.

// CHECK-LABEL: func.func @reduce_negative_axes
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x4xi32>)
// CHECK-NEXT:    %{{.*}} = ml.reduce_sum %[[X]] {axes = array<i64: -1>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_mean %[[X]] {axes = array<i64: -1>, keepdims = true} : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_max %[[X]] {axes = array<i64: -3, 1>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_min %[[X]] {axes = array<i64: -2>, keepdims = true} : (tensor<2x3x4xi32>) -> tensor<2x1x4xi32>

// GENERIC-LABEL: sym_name = "reduce_negative_axes"
// GENERIC:       "ml.reduce_sum"(%{{.*}}) <{axes = array<i64: -1>, keepdims = false}> : (tensor<2x3x4xi32>) -> tensor<2x3xi32>
// GENERIC-NEXT:  "ml.reduce_mean"(%{{.*}}) <{axes = array<i64: -1>, keepdims = true}> : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
// GENERIC-NEXT:  "ml.reduce_max"(%{{.*}}) <{axes = array<i64: -3, 1>, keepdims = false}> : (tensor<2x3x4xi32>) -> tensor<4xi32>
// GENERIC-NEXT:  "ml.reduce_min"(%{{.*}}) <{axes = array<i64: -2>, keepdims = true}> : (tensor<2x3x4xi32>) -> tensor<2x1x4xi32>
func.func @reduce_negative_axes(%x: tensor<2x3x4xi32>) {
  %0 = ml.reduce_sum %x {axes = array<i64: -1>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<2x3xi32>
  %1 = ml.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
  %2 = ml.reduce_max %x {axes = array<i64: -3, 1>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<4xi32>
  %3 = ml.reduce_min %x {axes = array<i64: -2>, keepdims = true} : (tensor<2x3x4xi32>) -> tensor<2x1x4xi32>
  func.return
}

// -----

// Empty axes reduce nothing (numpy's axis=()): the shape is kept, with or without
// keepdims, rank 0 included.

// CHECK-LABEL: func.func @reduce_empty_axes
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf16>, %[[S:[a-zA-Z0-9_]+]]: tensor<i8>)
// CHECK-NEXT:    %{{.*}} = ml.reduce_sum %[[X]] {axes = array<i64>, keepdims = false} : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %{{.*}} = ml.reduce_max %[[X]] {axes = array<i64>, keepdims = true} : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %{{.*}} = ml.reduce_min %[[S]] {axes = array<i64>, keepdims = false} : (tensor<i8>) -> tensor<i8>

// GENERIC-LABEL: sym_name = "reduce_empty_axes"
// GENERIC:       "ml.reduce_sum"(%{{.*}}) <{axes = array<i64>, keepdims = false}> : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC-NEXT:  "ml.reduce_max"(%{{.*}}) <{axes = array<i64>, keepdims = true}> : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC-NEXT:  "ml.reduce_min"(%{{.*}}) <{axes = array<i64>, keepdims = false}> : (tensor<i8>) -> tensor<i8>
func.func @reduce_empty_axes(%x: tensor<4x8xf16>, %s: tensor<i8>) {
  %0 = ml.reduce_sum %x {axes = array<i64>, keepdims = false} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = ml.reduce_max %x {axes = array<i64>, keepdims = true} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %2 = ml.reduce_min %s {axes = array<i64>, keepdims = false} : (tensor<i8>) -> tensor<i8>
  func.return
}

// -----

// Dynamic dims: a reduced dynamic dim disappears (or becomes 1), the others stay.

// CHECK-LABEL: func.func @reduce_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x8x?xbf16>)
// CHECK-NEXT:    %{{.*}} = ml.reduce_sum %[[X]] {axes = array<i64: 0>, keepdims = false} : (tensor<?x8x?xbf16>) -> tensor<8x?xbf16>
// CHECK-NEXT:    %{{.*}} = ml.reduce_mean %[[X]] {axes = array<i64: 2>, keepdims = true} : (tensor<?x8x?xbf16>) -> tensor<?x8x1xbf16>

// GENERIC-LABEL: sym_name = "reduce_dynamic"
// GENERIC:       "ml.reduce_sum"(%{{.*}}) <{axes = array<i64: 0>, keepdims = false}> : (tensor<?x8x?xbf16>) -> tensor<8x?xbf16>
// GENERIC-NEXT:  "ml.reduce_mean"(%{{.*}}) <{axes = array<i64: 2>, keepdims = true}> : (tensor<?x8x?xbf16>) -> tensor<?x8x1xbf16>
func.func @reduce_dynamic(%x: tensor<?x8x?xbf16>) {
  %0 = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<?x8x?xbf16>) -> tensor<8x?xbf16>
  %1 = ml.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<?x8x?xbf16>) -> tensor<?x8x1xbf16>
  func.return
}

// -----

// The reductions take the integer element types, unsigned included.

// CHECK-LABEL: func.func @reduce_integer_types
// CHECK-NEXT:    ml.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = false} : (tensor<4xi8>) -> tensor<i8>
// CHECK-NEXT:    ml.reduce_mean %{{.*}} {axes = array<i64: 0>, keepdims = false} : (tensor<4xi64>) -> tensor<i64>
// CHECK-NEXT:    ml.reduce_max %{{.*}} {axes = array<i64: 0>, keepdims = false} : (tensor<4xui8>) -> tensor<ui8>
// CHECK-NEXT:    ml.reduce_min %{{.*}} {axes = array<i64: 0>, keepdims = true} : (tensor<4xi32>) -> tensor<1xi32>

// GENERIC-LABEL: sym_name = "reduce_integer_types"
// GENERIC:       "ml.reduce_max"(%{{.*}}) <{axes = array<i64: 0>, keepdims = false}> : (tensor<4xui8>) -> tensor<ui8>
func.func @reduce_integer_types(%a: tensor<4xi8>, %b: tensor<4xi64>, %c: tensor<4xui8>, %d: tensor<4xi32>) {
  %0 = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xi8>) -> tensor<i8>
  %1 = ml.reduce_mean %b {axes = array<i64: 0>, keepdims = false} : (tensor<4xi64>) -> tensor<i64>
  %2 = ml.reduce_max %c {axes = array<i64: 0>, keepdims = false} : (tensor<4xui8>) -> tensor<ui8>
  %3 = ml.reduce_min %d {axes = array<i64: 0>, keepdims = true} : (tensor<4xi32>) -> tensor<1xi32>
  func.return
}

// -----

// The reductions in the generic form, with attributes and with properties.

// CHECK-LABEL: func.func @reduce_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3x5xf32>)
// CHECK-NEXT:    %{{.*}} = ml.reduce_sum %[[X]] {axes = array<i64: 1>, keepdims = false} : (tensor<3x5xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_mean %[[X]] {axes = array<i64: -1>, keepdims = true} : (tensor<3x5xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_max %[[X]] {axes = array<i64: 0>, keepdims = false} : (tensor<3x5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %{{.*}} = ml.reduce_min %[[X]] {axes = array<i64>, keepdims = true} : (tensor<3x5xf32>) -> tensor<3x5xf32>

// GENERIC-LABEL: sym_name = "reduce_generic_input"
// GENERIC:       "ml.reduce_sum"(%{{.*}}) <{axes = array<i64: 1>, keepdims = false}> : (tensor<3x5xf32>) -> tensor<3xf32>
// GENERIC-NEXT:  "ml.reduce_mean"(%{{.*}}) <{axes = array<i64: -1>, keepdims = true}> : (tensor<3x5xf32>) -> tensor<3x1xf32>
// GENERIC-NEXT:  "ml.reduce_max"(%{{.*}}) <{axes = array<i64: 0>, keepdims = false}> : (tensor<3x5xf32>) -> tensor<5xf32>
// GENERIC-NEXT:  "ml.reduce_min"(%{{.*}}) <{axes = array<i64>, keepdims = true}> : (tensor<3x5xf32>) -> tensor<3x5xf32>
func.func @reduce_generic_input(%x: tensor<3x5xf32>) {
  %0 = "ml.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<3x5xf32>) -> tensor<3xf32>
  %1 = "ml.reduce_mean"(%x) <{axes = array<i64: -1>, keepdims = true}> : (tensor<3x5xf32>) -> tensor<3x1xf32>
  %2 = "ml.reduce_max"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<3x5xf32>) -> tensor<5xf32>
  %3 = "ml.reduce_min"(%x) <{axes = array<i64>, keepdims = true}> : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

// ml.softmax keeps the shape, along a positive or negative axis, on float types and
// dynamic dims.

// CHECK-LABEL: func.func @softmax
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x10xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<?x4x?xf16>)
// CHECK-NEXT:    %{{.*}} = ml.softmax %[[X]] {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// CHECK-NEXT:    %{{.*}} = ml.softmax %[[X]] {axis = 0 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
// CHECK-NEXT:    %{{.*}} = ml.softmax %[[Y]] {axis = 2 : i64} : (tensor<?x4x?xf16>) -> tensor<?x4x?xf16>

// GENERIC-LABEL: sym_name = "softmax"
// GENERIC:       "ml.softmax"(%{{.*}}) <{axis = -1 : i64}> : (tensor<2x10xf32>) -> tensor<2x10xf32>
// GENERIC-NEXT:  "ml.softmax"(%{{.*}}) <{axis = 0 : i64}> : (tensor<2x10xf32>) -> tensor<2x10xf32>
// GENERIC-NEXT:  "ml.softmax"(%{{.*}}) <{axis = 2 : i64}> : (tensor<?x4x?xf16>) -> tensor<?x4x?xf16>
func.func @softmax(%x: tensor<2x10xf32>, %y: tensor<?x4x?xf16>) {
  %0 = ml.softmax %x {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %1 = ml.softmax %x {axis = 0 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %2 = ml.softmax %y {axis = 2 : i64} : (tensor<?x4x?xf16>) -> tensor<?x4x?xf16>
  func.return
}

// -----

// ml.softmax in the generic form, `axis` as an attribute and as a property.

// CHECK-LABEL: func.func @softmax_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<8xbf16>)
// CHECK-NEXT:    %{{.*}} = ml.softmax %[[X]] {axis = 0 : i64} : (tensor<8xbf16>) -> tensor<8xbf16>
// CHECK-NEXT:    %{{.*}} = ml.softmax %[[X]] {axis = -1 : i64} : (tensor<8xbf16>) -> tensor<8xbf16>

// GENERIC-LABEL: sym_name = "softmax_generic_input"
// GENERIC:       "ml.softmax"(%{{.*}}) <{axis = 0 : i64}> : (tensor<8xbf16>) -> tensor<8xbf16>
// GENERIC-NEXT:  "ml.softmax"(%{{.*}}) <{axis = -1 : i64}> : (tensor<8xbf16>) -> tensor<8xbf16>
func.func @softmax_generic_input(%x: tensor<8xbf16>) {
  %0 = "ml.softmax"(%x) {axis = 0 : i64} : (tensor<8xbf16>) -> tensor<8xbf16>
  %1 = "ml.softmax"(%x) <{axis = -1 : i64}> : (tensor<8xbf16>) -> tensor<8xbf16>
  func.return
}

// -----

// ml.layer_norm over the last dim, over the last two (scale and bias broadcasting to
// the normalized dims: rank-extending, size 1, rank 0), and with dynamic dims.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x8x16xf32>, %[[G:[a-zA-Z0-9_]+]]: tensor<16xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<16xf32>, %[[G2:[a-zA-Z0-9_]+]]: tensor<1x16xf32>, %[[S:[a-zA-Z0-9_]+]]: tensor<f32>, %[[D:[a-zA-Z0-9_]+]]: tensor<?x?x16xf32>)
// CHECK-NEXT:    %{{.*}} = ml.layer_norm %[[X]], %[[G]], %[[B]] {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.layer_norm %[[X]], %[[G2]], %[[S]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.layer_norm %[[D]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>

// GENERIC-LABEL: sym_name = "layer_norm"
// GENERIC:       "ml.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = -1 : i64, epsilon = 1.000000e-05 : f32}> : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// GENERIC-NEXT:  "ml.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 1 : i64, epsilon = 1.000000e-03 : f32}> : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
// GENERIC-NEXT:  "ml.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 2 : i64, epsilon = 1.000000e-05 : f32}> : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
func.func @layer_norm(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %g2: tensor<1x16xf32>, %s: tensor<f32>, %d: tensor<?x?x16xf32>) {
  %0 = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  %1 = ml.layer_norm %x, %g2, %s {axis = 1 : i64, epsilon = 1.0e-03 : f32} : (tensor<2x8x16xf32>, tensor<1x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
  %2 = ml.layer_norm %d, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  func.return
}

// -----

// ml.layer_norm in the generic form, with attributes and with properties, in f64 and
// f16; epsilon in the spelling MLIR prints for an f32 1e-5.

// CHECK-LABEL: func.func @layer_norm_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x6xf64>, %[[G:[a-zA-Z0-9_]+]]: tensor<6xf64>, %[[H:[a-zA-Z0-9_]+]]: tensor<4x6xf16>, %[[K:[a-zA-Z0-9_]+]]: tensor<4x6xf16>)
// CHECK-NEXT:    %{{.*}} = ml.layer_norm %[[X]], %[[G]], %[[G]] {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<4x6xf64>, tensor<6xf64>, tensor<6xf64>) -> tensor<4x6xf64>
// CHECK-NEXT:    %{{.*}} = ml.layer_norm %[[H]], %[[K]], %[[K]] {axis = 0 : i64, epsilon = 1.000000e-05 : f32} : (tensor<4x6xf16>, tensor<4x6xf16>, tensor<4x6xf16>) -> tensor<4x6xf16>

// GENERIC-LABEL: sym_name = "layer_norm_generic_input"
// GENERIC:       "ml.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 1 : i64, epsilon = 1.000000e-05 : f32}> : (tensor<4x6xf64>, tensor<6xf64>, tensor<6xf64>) -> tensor<4x6xf64>
// GENERIC-NEXT:  "ml.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 0 : i64, epsilon = 1.000000e-05 : f32}> : (tensor<4x6xf16>, tensor<4x6xf16>, tensor<4x6xf16>) -> tensor<4x6xf16>
func.func @layer_norm_generic_input(%x: tensor<4x6xf64>, %g: tensor<6xf64>, %h: tensor<4x6xf16>, %k: tensor<4x6xf16>) {
  %0 = "ml.layer_norm"(%x, %g, %g) {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x6xf64>, tensor<6xf64>, tensor<6xf64>) -> tensor<4x6xf64>
  %1 = "ml.layer_norm"(%h, %k, %k) <{axis = 0 : i64, epsilon = 9.99999974E-6 : f32}> : (tensor<4x6xf16>, tensor<4x6xf16>, tensor<4x6xf16>) -> tensor<4x6xf16>
  func.return
}

// -----

// Over a dynamic normalized dim, scale and bias need only agree with each other (a
// size-1 bias broadcasts against a size-16 scale).

// CHECK-LABEL: func.func @layer_norm_dynamic_normalized
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x?xf32>, %[[G:[a-zA-Z0-9_]+]]: tensor<16xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1xf32>)
// CHECK-NEXT:    %{{.*}} = ml.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x?xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<2x?xf32>

// GENERIC-LABEL: sym_name = "layer_norm_dynamic_normalized"
// GENERIC:       "ml.layer_norm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 1 : i64, epsilon = 1.000000e-05 : f32}> : (tensor<2x?xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<2x?xf32>
func.func @layer_norm_dynamic_normalized(%x: tensor<2x?xf32>, %g: tensor<16xf32>, %b: tensor<1xf32>) {
  %0 = ml.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x?xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<2x?xf32>
  func.return
}

// -----

// ml.batch_norm normalises over channel dim 1; the four parameters have one entry per
// channel; the input may be of rank 2 or more, with dynamic dims.

// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x3x8x8xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<3xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<?x3xf32>, %[[Z:[a-zA-Z0-9_]+]]: tensor<2x?x5xf32>)
// CHECK-NEXT:    %{{.*}} = ml.batch_norm %[[X]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-05 : f32} : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT:    %{{.*}} = ml.batch_norm %[[Y]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-03 : f32} : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %{{.*}} = ml.batch_norm %[[Z]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-05 : f32} : (tensor<2x?x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5xf32>

// GENERIC-LABEL: sym_name = "batch_norm"
// GENERIC:       "ml.batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-05 : f32}> : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
// GENERIC-NEXT:  "ml.batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-03 : f32}> : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// GENERIC-NEXT:  "ml.batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-05 : f32}> : (tensor<2x?x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5xf32>
func.func @batch_norm(%x: tensor<1x3x8x8xf32>, %p: tensor<3xf32>, %y: tensor<?x3xf32>, %z: tensor<2x?x5xf32>) {
  %0 = ml.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
  %1 = ml.batch_norm %y, %p, %p, %p, %p {epsilon = 1.0e-03 : f32} : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %2 = ml.batch_norm %z, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<2x?x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

// ml.batch_norm in the generic form, with an attribute and with a property, in bf16
// and with dynamic parameter sizes.

// CHECK-LABEL: func.func @batch_norm_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x4x3xbf16>, %[[P:[a-zA-Z0-9_]+]]: tensor<4xbf16>, %[[Q:[a-zA-Z0-9_]+]]: tensor<?xbf16>)
// CHECK-NEXT:    %{{.*}} = ml.batch_norm %[[X]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-05 : f32} : (tensor<2x4x3xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<2x4x3xbf16>
// CHECK-NEXT:    %{{.*}} = ml.batch_norm %[[X]], %[[Q]], %[[P]], %[[Q]], %[[P]] {epsilon = 1.000000e-02 : f32} : (tensor<2x4x3xbf16>, tensor<?xbf16>, tensor<4xbf16>, tensor<?xbf16>, tensor<4xbf16>) -> tensor<2x4x3xbf16>

// GENERIC-LABEL: sym_name = "batch_norm_generic_input"
// GENERIC:       "ml.batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-05 : f32}> : (tensor<2x4x3xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<2x4x3xbf16>
// GENERIC-NEXT:  "ml.batch_norm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-02 : f32}> : (tensor<2x4x3xbf16>, tensor<?xbf16>, tensor<4xbf16>, tensor<?xbf16>, tensor<4xbf16>) -> tensor<2x4x3xbf16>
func.func @batch_norm_generic_input(%x: tensor<2x4x3xbf16>, %p: tensor<4xbf16>, %q: tensor<?xbf16>) {
  %0 = "ml.batch_norm"(%x, %p, %p, %p, %p) {epsilon = 1.0e-05 : f32} : (tensor<2x4x3xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<2x4x3xbf16>
  %1 = "ml.batch_norm"(%x, %q, %p, %q, %p) <{epsilon = 1.0e-02 : f32}> : (tensor<2x4x3xbf16>, tensor<?xbf16>, tensor<4xbf16>, tensor<?xbf16>, tensor<4xbf16>) -> tensor<2x4x3xbf16>
  func.return
}

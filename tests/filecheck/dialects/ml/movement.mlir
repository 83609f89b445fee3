// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// ml.transpose in the pretty form: result dim i is operand dim perm[i].

// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<2x?x4xi8>)
// CHECK-NEXT:    %{{.*}} = ml.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %{{.*}} = ml.transpose %[[Y]] {perm = array<i64: 2, 0, 1>} : (tensor<2x?x4xi8>) -> tensor<4x2x?xi8>
// CHECK-NEXT:    %{{.*}} = ml.transpose %[[Y]] {perm = array<i64: 0, 1, 2>} : (tensor<2x?x4xi8>) -> tensor<2x?x4xi8>

// GENERIC-LABEL: sym_name = "transpose"
// GENERIC:       "ml.transpose"(%{{.*}}) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
// GENERIC-NEXT:  "ml.transpose"(%{{.*}}) <{perm = array<i64: 2, 0, 1>}> : (tensor<2x?x4xi8>) -> tensor<4x2x?xi8>
// GENERIC-NEXT:  "ml.transpose"(%{{.*}}) <{perm = array<i64: 0, 1, 2>}> : (tensor<2x?x4xi8>) -> tensor<2x?x4xi8>
func.func @transpose(%x: tensor<2x3xf32>, %y: tensor<2x?x4xi8>) {
  %0 = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = ml.transpose %y {perm = array<i64: 2, 0, 1>} : (tensor<2x?x4xi8>) -> tensor<4x2x?xi8>
  %2 = ml.transpose %y {perm = array<i64: 0, 1, 2>} : (tensor<2x?x4xi8>) -> tensor<2x?x4xi8>
  func.return
}

// -----

// ml.transpose in the generic form, `perm` as an attribute and as a property; a
// rank-0 tensor takes the empty permutation, and i1 is a legal element type.

// CHECK-LABEL: func.func @transpose_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3xi1>, %[[S:[a-zA-Z0-9_]+]]: tensor<f64>)
// CHECK-NEXT:    %{{.*}} = ml.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<2x3xi1>) -> tensor<3x2xi1>
// CHECK-NEXT:    %{{.*}} = ml.transpose %[[X]] {perm = array<i64: 0, 1>} : (tensor<2x3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT:    %{{.*}} = ml.transpose %[[S]] {perm = array<i64>} : (tensor<f64>) -> tensor<f64>

// GENERIC-LABEL: sym_name = "transpose_generic_input"
// GENERIC:       "ml.transpose"(%{{.*}}) <{perm = array<i64: 1, 0>}> : (tensor<2x3xi1>) -> tensor<3x2xi1>
// GENERIC-NEXT:  "ml.transpose"(%{{.*}}) <{perm = array<i64: 0, 1>}> : (tensor<2x3xi1>) -> tensor<2x3xi1>
// GENERIC-NEXT:  "ml.transpose"(%{{.*}}) <{perm = array<i64>}> : (tensor<f64>) -> tensor<f64>
func.func @transpose_generic_input(%x: tensor<2x3xi1>, %s: tensor<f64>) {
  %0 = "ml.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xi1>) -> tensor<3x2xi1>
  %1 = "ml.transpose"(%x) <{perm = array<i64: 0, 1>}> : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %2 = "ml.transpose"(%s) <{perm = array<i64>}> : (tensor<f64>) -> tensor<f64>
  func.return
}

// -----

// ml.reshape to a static result type needs no shape operand: merging, splitting, to
// and from rank 0, and from a dynamic operand (whose count is checked at run time).

// CHECK-LABEL: func.func @reshape_static
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>, %[[O:[a-zA-Z0-9_]+]]: tensor<1x1xi32>, %[[D:[a-zA-Z0-9_]+]]: tensor<?x4xbf16>)
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
// CHECK-NEXT:    %[[S:[a-zA-Z0-9_]+]] = ml.reshape %[[O]] : (tensor<1x1xi32>) -> tensor<i32>
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[S]] : (tensor<i32>) -> tensor<1x1x1xi32>
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[D]] : (tensor<?x4xbf16>) -> tensor<2x8xbf16>

// GENERIC-LABEL: sym_name = "reshape_static"
// GENERIC:       "ml.reshape"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// GENERIC:       "ml.reshape"(%{{.*}}) : (tensor<?x4xbf16>) -> tensor<2x8xbf16>
func.func @reshape_static(%x: tensor<2x3x4xf32>, %o: tensor<1x1xi32>, %d: tensor<?x4xbf16>) {
  %0 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<2x3x2x2xf32>
  %s = ml.reshape %o : (tensor<1x1xi32>) -> tensor<i32>
  %2 = ml.reshape %s : (tensor<i32>) -> tensor<1x1x1xi32>
  %3 = ml.reshape %d : (tensor<?x4xbf16>) -> tensor<2x8xbf16>
  func.return
}

// -----

// ml.reshape to a dynamic result type takes a shape operand (tensor<Nxi64>, one entry
// per result dim); a static result may take one too.

// CHECK-LABEL: func.func @reshape_shape_operand
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x4xf32>, %[[S2:[a-zA-Z0-9_]+]]: tensor<2xi64>, %[[S3:[a-zA-Z0-9_]+]]: tensor<3xi64>)
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[X]], %[[S2]] : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[X]], %[[S3]] : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[X]], %[[S2]] : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>

// GENERIC-LABEL: sym_name = "reshape_shape_operand"
// GENERIC:       "ml.reshape"(%{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
// GENERIC-NEXT:  "ml.reshape"(%{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// GENERIC-NEXT:  "ml.reshape"(%{{.*}}, %{{.*}}) : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
func.func @reshape_shape_operand(%x: tensor<?x4xf32>, %s2: tensor<2xi64>, %s3: tensor<3xi64>) {
  %0 = ml.reshape %x, %s2 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  %1 = ml.reshape %x, %s3 : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %2 = ml.reshape %x, %s2 : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  func.return
}

// -----

// ml.reshape in the generic form, with and without the shape operand.

// CHECK-LABEL: func.func @reshape_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x6xui8>, %[[S:[a-zA-Z0-9_]+]]: tensor<2xi64>)
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[X]] : (tensor<4x6xui8>) -> tensor<24xui8>
// CHECK-NEXT:    %{{.*}} = ml.reshape %[[X]], %[[S]] : (tensor<4x6xui8>, tensor<2xi64>) -> tensor<?x12xui8>

// GENERIC-LABEL: sym_name = "reshape_generic_input"
// GENERIC:       "ml.reshape"(%{{.*}}) : (tensor<4x6xui8>) -> tensor<24xui8>
// GENERIC-NEXT:  "ml.reshape"(%{{.*}}, %{{.*}}) : (tensor<4x6xui8>, tensor<2xi64>) -> tensor<?x12xui8>
func.func @reshape_generic_input(%x: tensor<4x6xui8>, %s: tensor<2xi64>) {
  %0 = "ml.reshape"(%x) : (tensor<4x6xui8>) -> tensor<24xui8>
  %1 = "ml.reshape"(%x, %s) : (tensor<4x6xui8>, tensor<2xi64>) -> tensor<?x12xui8>
  func.return
}

// -----

// ml.broadcast_to without a shape operand: rank extension, size-1 dims, a scalar, and
// a dynamic result dim that the operand's own dynamic dim gives.

// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3x1xf32>, %[[S:[a-zA-Z0-9_]+]]: tensor<i1>, %[[D:[a-zA-Z0-9_]+]]: tensor<?x1xi64>)
// CHECK-NEXT:    %{{.*}} = ml.broadcast_to %[[X]] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %{{.*}} = ml.broadcast_to %[[X]] : (tensor<3x1xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %{{.*}} = ml.broadcast_to %[[S]] : (tensor<i1>) -> tensor<4x4xi1>
// CHECK-NEXT:    %{{.*}} = ml.broadcast_to %[[D]] : (tensor<?x1xi64>) -> tensor<5x?x8xi64>

// GENERIC-LABEL: sym_name = "broadcast_to"
// GENERIC:       "ml.broadcast_to"(%{{.*}}) : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
// GENERIC-NEXT:  "ml.broadcast_to"(%{{.*}}) : (tensor<3x1xf32>) -> tensor<3x1xf32>
// GENERIC-NEXT:  "ml.broadcast_to"(%{{.*}}) : (tensor<i1>) -> tensor<4x4xi1>
// GENERIC-NEXT:  "ml.broadcast_to"(%{{.*}}) : (tensor<?x1xi64>) -> tensor<5x?x8xi64>
func.func @broadcast_to(%x: tensor<3x1xf32>, %s: tensor<i1>, %d: tensor<?x1xi64>) {
  %0 = ml.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = ml.broadcast_to %x : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %2 = ml.broadcast_to %s : (tensor<i1>) -> tensor<4x4xi1>
  %3 = ml.broadcast_to %d : (tensor<?x1xi64>) -> tensor<5x?x8xi64>
  func.return
}

// -----

// ml.broadcast_to with a shape operand gives dynamic result dims at run time; the
// generic form spells both variants.

// CHECK-LABEL: func.func @broadcast_to_shape_operand
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x4xf16>, %[[S:[a-zA-Z0-9_]+]]: tensor<2xi64>, %[[T:[a-zA-Z0-9_]+]]: tensor<3xi64>)
// CHECK-NEXT:    %{{.*}} = ml.broadcast_to %[[X]], %[[S]] : (tensor<1x4xf16>, tensor<2xi64>) -> tensor<?x4xf16>
// CHECK-NEXT:    %{{.*}} = ml.broadcast_to %[[X]], %[[T]] : (tensor<1x4xf16>, tensor<3xi64>) -> tensor<?x?x?xf16>
// CHECK-NEXT:    %{{.*}} = ml.broadcast_to %[[X]] : (tensor<1x4xf16>) -> tensor<8x4xf16>

// GENERIC-LABEL: sym_name = "broadcast_to_shape_operand"
// GENERIC:       "ml.broadcast_to"(%{{.*}}, %{{.*}}) : (tensor<1x4xf16>, tensor<2xi64>) -> tensor<?x4xf16>
// GENERIC-NEXT:  "ml.broadcast_to"(%{{.*}}, %{{.*}}) : (tensor<1x4xf16>, tensor<3xi64>) -> tensor<?x?x?xf16>
// GENERIC-NEXT:  "ml.broadcast_to"(%{{.*}}) : (tensor<1x4xf16>) -> tensor<8x4xf16>
func.func @broadcast_to_shape_operand(%x: tensor<1x4xf16>, %s: tensor<2xi64>, %t: tensor<3xi64>) {
  %0 = ml.broadcast_to %x, %s : (tensor<1x4xf16>, tensor<2xi64>) -> tensor<?x4xf16>
  %1 = "ml.broadcast_to"(%x, %t) : (tensor<1x4xf16>, tensor<3xi64>) -> tensor<?x?x?xf16>
  %2 = "ml.broadcast_to"(%x) : (tensor<1x4xf16>) -> tensor<8x4xf16>
  func.return
}

// -----

// ml.concat joins along a positive or a negative axis, of one or several operands.

// CHECK-LABEL: func.func @concat
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK-NEXT:    %{{.*}} = ml.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %{{.*}} = ml.concat %[[A]], %[[B]], %[[A]] {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
// CHECK-NEXT:    %{{.*}} = ml.concat %[[A]], %[[A]] {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    %{{.*}} = ml.concat %[[A]] {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>

// GENERIC-LABEL: sym_name = "concat"
// GENERIC:       "ml.concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// GENERIC-NEXT:  "ml.concat"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = -1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
// GENERIC-NEXT:  "ml.concat"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// GENERIC-NEXT:  "ml.concat"(%{{.*}}) <{axis = 0 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) {
  %0 = ml.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %1 = ml.concat %a, %b, %a {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
  %2 = ml.concat %a, %a {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %3 = ml.concat %a {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// ml.concat with dynamic dims: a dynamic dim off the axis takes its size from another
// operand, and a dynamic dim on the axis makes the result dim dynamic.

// CHECK-LABEL: func.func @concat_dynamic
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x5xi32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x?xi32>)
// CHECK-NEXT:    %{{.*}} = ml.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<?x3xi32>, tensor<2x5xi32>) -> tensor<2x8xi32>
// CHECK-NEXT:    %{{.*}} = ml.concat %[[B]], %[[C]] {axis = 1 : i64} : (tensor<2x5xi32>, tensor<2x?xi32>) -> tensor<2x?xi32>
// CHECK-NEXT:    %{{.*}} = ml.concat %[[A]], %[[A]] {axis = -2 : i64} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>

// GENERIC-LABEL: sym_name = "concat_dynamic"
// GENERIC:       "ml.concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (tensor<?x3xi32>, tensor<2x5xi32>) -> tensor<2x8xi32>
// GENERIC-NEXT:  "ml.concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (tensor<2x5xi32>, tensor<2x?xi32>) -> tensor<2x?xi32>
// GENERIC-NEXT:  "ml.concat"(%{{.*}}, %{{.*}}) <{axis = -2 : i64}> : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
func.func @concat_dynamic(%a: tensor<?x3xi32>, %b: tensor<2x5xi32>, %c: tensor<2x?xi32>) {
  %0 = ml.concat %a, %b {axis = 1 : i64} : (tensor<?x3xi32>, tensor<2x5xi32>) -> tensor<2x8xi32>
  %1 = ml.concat %b, %c {axis = 1 : i64} : (tensor<2x5xi32>, tensor<2x?xi32>) -> tensor<2x?xi32>
  %2 = ml.concat %a, %a {axis = -2 : i64} : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  func.return
}

// -----

// ml.concat in the generic form, `axis` as an attribute and as a property.

// CHECK-LABEL: func.func @concat_generic_input
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4xi1>, %[[B:[a-zA-Z0-9_]+]]: tensor<2xi1>)
// CHECK-NEXT:    %{{.*}} = ml.concat %[[A]], %[[B]] {axis = 0 : i64} : (tensor<4xi1>, tensor<2xi1>) -> tensor<6xi1>
// CHECK-NEXT:    %{{.*}} = ml.concat %[[B]], %[[A]] {axis = -1 : i64} : (tensor<2xi1>, tensor<4xi1>) -> tensor<6xi1>

// GENERIC-LABEL: sym_name = "concat_generic_input"
// GENERIC:       "ml.concat"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<4xi1>, tensor<2xi1>) -> tensor<6xi1>
// GENERIC-NEXT:  "ml.concat"(%{{.*}}, %{{.*}}) <{axis = -1 : i64}> : (tensor<2xi1>, tensor<4xi1>) -> tensor<6xi1>
func.func @concat_generic_input(%a: tensor<4xi1>, %b: tensor<2xi1>) {
  %0 = "ml.concat"(%a, %b) {axis = 0 : i64} : (tensor<4xi1>, tensor<2xi1>) -> tensor<6xi1>
  %1 = "ml.concat"(%b, %a) <{axis = -1 : i64}> : (tensor<2xi1>, tensor<4xi1>) -> tensor<6xi1>
  func.return
}

// -----

// ml.slice with Python's slice semantics: a stride, an end past the dim (the largest
// i64, clamped), and a negative start counting from the end.

// CHECK-LABEL: func.func @slice
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x6xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<5xi64>)
// CHECK-NEXT:    %{{.*}} = ml.slice %[[X]] {starts = array<i64: 0, 1>, ends = array<i64: 4, 9223372036854775807>, steps = array<i64: 2, 1>} : (tensor<4x6xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %{{.*}} = ml.slice %[[Y]] {starts = array<i64: -3>, ends = array<i64: 100>, steps = array<i64: 1>} : (tensor<5xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %{{.*}} = ml.slice %[[Y]] {starts = array<i64: 3>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<5xi64>) -> tensor<0xi64>

// GENERIC-LABEL: sym_name = "slice"
// GENERIC:       "ml.slice"(%{{.*}}) <{starts = array<i64: 0, 1>, ends = array<i64: 4, 9223372036854775807>, steps = array<i64: 2, 1>}> : (tensor<4x6xf32>) -> tensor<2x5xf32>
// GENERIC-NEXT:  "ml.slice"(%{{.*}}) <{starts = array<i64: -3>, ends = array<i64: 100>, steps = array<i64: 1>}> : (tensor<5xi64>) -> tensor<3xi64>
// GENERIC-NEXT:  "ml.slice"(%{{.*}}) <{starts = array<i64: 3>, ends = array<i64: 1>, steps = array<i64: 1>}> : (tensor<5xi64>) -> tensor<0xi64>
func.func @slice(%x: tensor<4x6xf32>, %y: tensor<5xi64>) {
  %0 = ml.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 4, 9223372036854775807>, steps = array<i64: 2, 1>} : (tensor<4x6xf32>) -> tensor<2x5xf32>
  %1 = ml.slice %y {starts = array<i64: -3>, ends = array<i64: 100>, steps = array<i64: 1>} : (tensor<5xi64>) -> tensor<3xi64>
  %2 = ml.slice %y {starts = array<i64: 3>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<5xi64>) -> tensor<0xi64>
  func.return
}

// -----

// ml.slice with negative steps runs backwards; the smallest i64 as an end runs to the
// beginning.

// CHECK-LABEL: func.func @slice_negative_steps
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<6xf64>, %[[Y:[a-zA-Z0-9_]+]]: tensor<4x5xf64>)
// CHECK-NEXT:    %{{.*}} = ml.slice %[[X]] {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, steps = array<i64: -1>} : (tensor<6xf64>) -> tensor<6xf64>
// CHECK-NEXT:    %{{.*}} = ml.slice %[[X]] {starts = array<i64: 5>, ends = array<i64: -9223372036854775808>, steps = array<i64: -2>} : (tensor<6xf64>) -> tensor<3xf64>
// CHECK-NEXT:    %{{.*}} = ml.slice %[[Y]] {starts = array<i64: 3, 4>, ends = array<i64: 0, 0>, steps = array<i64: -1, -3>} : (tensor<4x5xf64>) -> tensor<3x2xf64>

// GENERIC-LABEL: sym_name = "slice_negative_steps"
// GENERIC:       "ml.slice"(%{{.*}}) <{starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, steps = array<i64: -1>}> : (tensor<6xf64>) -> tensor<6xf64>
// GENERIC-NEXT:  "ml.slice"(%{{.*}}) <{starts = array<i64: 5>, ends = array<i64: -9223372036854775808>, steps = array<i64: -2>}> : (tensor<6xf64>) -> tensor<3xf64>
// GENERIC-NEXT:  "ml.slice"(%{{.*}}) <{starts = array<i64: 3, 4>, ends = array<i64: 0, 0>, steps = array<i64: -1, -3>}> : (tensor<4x5xf64>) -> tensor<3x2xf64>
func.func @slice_negative_steps(%x: tensor<6xf64>, %y: tensor<4x5xf64>) {
  %0 = ml.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, steps = array<i64: -1>} : (tensor<6xf64>) -> tensor<6xf64>
  %1 = ml.slice %x {starts = array<i64: 5>, ends = array<i64: -9223372036854775808>, steps = array<i64: -2>} : (tensor<6xf64>) -> tensor<3xf64>
  %2 = ml.slice %y {starts = array<i64: 3, 4>, ends = array<i64: 0, 0>, steps = array<i64: -1, -3>} : (tensor<4x5xf64>) -> tensor<3x2xf64>
  func.return
}

// -----

// ml.slice of a dynamic dim has a dynamic length; the generic form takes the arrays
// as attributes or as properties.

// CHECK-LABEL: func.func @slice_dynamic_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x8xi8>)
// CHECK-NEXT:    %{{.*}} = ml.slice %[[X]] {starts = array<i64: 1, 0>, ends = array<i64: 9223372036854775807, 8>, steps = array<i64: 1, 4>} : (tensor<?x8xi8>) -> tensor<?x2xi8>
// CHECK-NEXT:    %{{.*}} = ml.slice %[[X]] {starts = array<i64: 0, 0>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<?x8xi8>) -> tensor<?x8xi8>

// GENERIC-LABEL: sym_name = "slice_dynamic_generic_input"
// GENERIC:       "ml.slice"(%{{.*}}) <{starts = array<i64: 1, 0>, ends = array<i64: 9223372036854775807, 8>, steps = array<i64: 1, 4>}> : (tensor<?x8xi8>) -> tensor<?x2xi8>
// GENERIC-NEXT:  "ml.slice"(%{{.*}}) <{starts = array<i64: 0, 0>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>}> : (tensor<?x8xi8>) -> tensor<?x8xi8>
func.func @slice_dynamic_generic_input(%x: tensor<?x8xi8>) {
  %0 = "ml.slice"(%x) {starts = array<i64: 1, 0>, ends = array<i64: 9223372036854775807, 8>, steps = array<i64: 1, 4>} : (tensor<?x8xi8>) -> tensor<?x2xi8>
  %1 = "ml.slice"(%x) <{starts = array<i64: 0, 0>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>}> : (tensor<?x8xi8>) -> tensor<?x8xi8>
  func.return
}

// -----

// ml.gather: the indices' shape replaces the gathered dim; i64 or i32 indices, and a
// rank-0 index removes the dim.

// CHECK-LABEL: func.func @gather
// CHECK-SAME:    (%[[T:[a-zA-Z0-9_]+]]: tensor<100x16xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<2x5xi64>, %[[J:[a-zA-Z0-9_]+]]: tensor<3xi32>, %[[K:[a-zA-Z0-9_]+]]: tensor<i64>)
// CHECK-NEXT:    %{{.*}} = ml.gather %[[T]], %[[I]] {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.gather %[[T]], %[[J]] {axis = 1 : i64} : (tensor<100x16xf32>, tensor<3xi32>) -> tensor<100x3xf32>
// CHECK-NEXT:    %{{.*}} = ml.gather %[[T]], %[[K]] {axis = 0 : i64} : (tensor<100x16xf32>, tensor<i64>) -> tensor<16xf32>

// GENERIC-LABEL: sym_name = "gather"
// GENERIC:       "ml.gather"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
// GENERIC-NEXT:  "ml.gather"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}> : (tensor<100x16xf32>, tensor<3xi32>) -> tensor<100x3xf32>
// GENERIC-NEXT:  "ml.gather"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<100x16xf32>, tensor<i64>) -> tensor<16xf32>
func.func @gather(%t: tensor<100x16xf32>, %i: tensor<2x5xi64>, %j: tensor<3xi32>, %k: tensor<i64>) {
  %0 = ml.gather %t, %i {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
  %1 = ml.gather %t, %j {axis = 1 : i64} : (tensor<100x16xf32>, tensor<3xi32>) -> tensor<100x3xf32>
  %2 = ml.gather %t, %k {axis = 0 : i64} : (tensor<100x16xf32>, tensor<i64>) -> tensor<16xf32>
  func.return
}

// -----

// ml.gather with a negative axis counts from the end; dynamic dims pass through, and
// the data may have any element type.

// CHECK-LABEL: func.func @gather_negative_axis
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<4x?x6xi1>, %[[I:[a-zA-Z0-9_]+]]: tensor<?xi64>)
// CHECK-NEXT:    %{{.*}} = ml.gather %[[D]], %[[I]] {axis = -1 : i64} : (tensor<4x?x6xi1>, tensor<?xi64>) -> tensor<4x?x?xi1>
// CHECK-NEXT:    %{{.*}} = ml.gather %[[D]], %[[I]] {axis = -3 : i64} : (tensor<4x?x6xi1>, tensor<?xi64>) -> tensor<?x?x6xi1>

// GENERIC-LABEL: sym_name = "gather_negative_axis"
// GENERIC:       "ml.gather"(%{{.*}}, %{{.*}}) <{axis = -1 : i64}> : (tensor<4x?x6xi1>, tensor<?xi64>) -> tensor<4x?x?xi1>
// GENERIC-NEXT:  "ml.gather"(%{{.*}}, %{{.*}}) <{axis = -3 : i64}> : (tensor<4x?x6xi1>, tensor<?xi64>) -> tensor<?x?x6xi1>
func.func @gather_negative_axis(%d: tensor<4x?x6xi1>, %i: tensor<?xi64>) {
  %0 = ml.gather %d, %i {axis = -1 : i64} : (tensor<4x?x6xi1>, tensor<?xi64>) -> tensor<4x?x?xi1>
  %1 = ml.gather %d, %i {axis = -3 : i64} : (tensor<4x?x6xi1>, tensor<?xi64>) -> tensor<?x?x6xi1>
  func.return
}

// -----

// ml.gather in the generic form, `axis` as an attribute and as a property.

// CHECK-LABEL: func.func @gather_generic_input
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<10x4xbf16>, %[[I:[a-zA-Z0-9_]+]]: tensor<7xi32>)
// CHECK-NEXT:    %{{.*}} = ml.gather %[[D]], %[[I]] {axis = 0 : i64} : (tensor<10x4xbf16>, tensor<7xi32>) -> tensor<7x4xbf16>
// CHECK-NEXT:    %{{.*}} = ml.gather %[[D]], %[[I]] {axis = -1 : i64} : (tensor<10x4xbf16>, tensor<7xi32>) -> tensor<10x7xbf16>

// GENERIC-LABEL: sym_name = "gather_generic_input"
// GENERIC:       "ml.gather"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<10x4xbf16>, tensor<7xi32>) -> tensor<7x4xbf16>
// GENERIC-NEXT:  "ml.gather"(%{{.*}}, %{{.*}}) <{axis = -1 : i64}> : (tensor<10x4xbf16>, tensor<7xi32>) -> tensor<10x7xbf16>
func.func @gather_generic_input(%d: tensor<10x4xbf16>, %i: tensor<7xi32>) {
  %0 = "ml.gather"(%d, %i) {axis = 0 : i64} : (tensor<10x4xbf16>, tensor<7xi32>) -> tensor<7x4xbf16>
  %1 = "ml.gather"(%d, %i) <{axis = -1 : i64}> : (tensor<10x4xbf16>, tensor<7xi32>) -> tensor<10x7xbf16>
  func.return
}

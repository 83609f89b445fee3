// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// ml.matmul of two matrices, in several numeric element types.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<8x16xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x3xi32>, %[[D:[a-zA-Z0-9_]+]]: tensor<3x5xi32>, %[[E:[a-zA-Z0-9_]+]]: tensor<2x2xf16>, %[[F:[a-zA-Z0-9_]+]]: tensor<2x2xi8>)
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[C]], %[[D]] : (tensor<2x3xi32>, tensor<3x5xi32>) -> tensor<2x5xi32>
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[E]], %[[E]] : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[F]], %[[F]] : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>

// GENERIC-LABEL: sym_name = "matmul"
// GENERIC:       "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// GENERIC-NEXT:  "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x3xi32>, tensor<3x5xi32>) -> tensor<2x5xi32>
// GENERIC-NEXT:  "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
// GENERIC-NEXT:  "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<2x3xi32>, %d: tensor<3x5xi32>, %e: tensor<2x2xf16>, %f: tensor<2x2xi8>) {
  %0 = ml.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = ml.matmul %c, %d : (tensor<2x3xi32>, tensor<3x5xi32>) -> tensor<2x5xi32>
  %2 = ml.matmul %e, %e : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  %3 = ml.matmul %f, %f : (tensor<2x2xi8>, tensor<2x2xi8>) -> tensor<2x2xi8>
  func.return
}

// -----

// ml.matmul batch dims broadcast as in numpy: rank extension and size-1 dims.

// CHECK-LABEL: func.func @matmul_batch_broadcast
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x3x4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<8x2xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x1x4x8xf64>, %[[D:[a-zA-Z0-9_]+]]: tensor<5x8x3xf64>)
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[A]], %[[B]] : (tensor<?x3x4x8xf32>, tensor<8x2xf32>) -> tensor<?x3x4x2xf32>
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[C]], %[[D]] : (tensor<2x1x4x8xf64>, tensor<5x8x3xf64>) -> tensor<2x5x4x3xf64>

// GENERIC-LABEL: sym_name = "matmul_batch_broadcast"
// GENERIC:       "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<?x3x4x8xf32>, tensor<8x2xf32>) -> tensor<?x3x4x2xf32>
// GENERIC-NEXT:  "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x1x4x8xf64>, tensor<5x8x3xf64>) -> tensor<2x5x4x3xf64>
func.func @matmul_batch_broadcast(%a: tensor<?x3x4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<2x1x4x8xf64>, %d: tensor<5x8x3xf64>) {
  %0 = ml.matmul %a, %b : (tensor<?x3x4x8xf32>, tensor<8x2xf32>) -> tensor<?x3x4x2xf32>
  %1 = ml.matmul %c, %d : (tensor<2x1x4x8xf64>, tensor<5x8x3xf64>) -> tensor<2x5x4x3xf64>
  func.return
}

// -----

// ml.matmul with dynamic dims: a dynamic contracting dim matches any static one, and
// dynamic m and n stay dynamic.

// CHECK-LABEL: func.func @matmul_dynamic
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x?xbf16>, %[[B:[a-zA-Z0-9_]+]]: tensor<8x16xbf16>, %[[C:[a-zA-Z0-9_]+]]: tensor<?x?xbf16>)
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[A]], %[[B]] : (tensor<4x?xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[C]], %[[C]] : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[C]], %[[B]] : (tensor<?x?xbf16>, tensor<8x16xbf16>) -> tensor<?x16xbf16>

// GENERIC-LABEL: sym_name = "matmul_dynamic"
// GENERIC:       "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<4x?xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// GENERIC-NEXT:  "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
// GENERIC-NEXT:  "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<?x?xbf16>, tensor<8x16xbf16>) -> tensor<?x16xbf16>
func.func @matmul_dynamic(%a: tensor<4x?xbf16>, %b: tensor<8x16xbf16>, %c: tensor<?x?xbf16>) {
  %0 = ml.matmul %a, %b : (tensor<4x?xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %1 = ml.matmul %c, %c : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
  %2 = ml.matmul %c, %b : (tensor<?x?xbf16>, tensor<8x16xbf16>) -> tensor<?x16xbf16>
  func.return
}

// -----

// ml.matmul written in the generic form, as tests outside the project write it.

// CHECK-LABEL: func.func @matmul_generic_input
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<8x16xf32>, %[[U:[a-zA-Z0-9_]+]]: tensor<3x3xui8>)
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.matmul %[[U]], %[[U]] : (tensor<3x3xui8>, tensor<3x3xui8>) -> tensor<3x3xui8>

// GENERIC-LABEL: sym_name = "matmul_generic_input"
// GENERIC:       "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// GENERIC-NEXT:  "ml.matmul"(%{{.*}}, %{{.*}}) : (tensor<3x3xui8>, tensor<3x3xui8>) -> tensor<3x3xui8>
func.func @matmul_generic_input(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %u: tensor<3x3xui8>) {
  %0 = "ml.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "ml.matmul"(%u, %u) : (tensor<3x3xui8>, tensor<3x3xui8>) -> tensor<3x3xui8>
  func.return
}

// -----

// ml.conv2d with every attribute left to its default (strides and dilations 1, pads
// 0, groups 1), with and without a bias.

// CHECK-LABEL: func.func @conv2d_defaults
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x3x8x8xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<4x3x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]], %[[B]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>

// GENERIC-LABEL: sym_name = "conv2d_defaults"
// GENERIC:       "ml.conv2d"(%{{.*}}, %{{.*}}) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
func.func @conv2d_defaults(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  %0 = ml.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = ml.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// ml.conv2d with strides and symmetric pads, with a bias; and with asymmetric pads
// (top, left, bottom, right).

// CHECK-LABEL: func.func @conv2d_strides_pads
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x3x32x32xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<16x3x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<16xf32>)
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] {pads = array<i64: 1, 0, 0, 2>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x31x32xf32>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] {strides = array<i64: 3, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x10x30xf32>

// GENERIC-LABEL: sym_name = "conv2d_strides_pads"
// GENERIC:       "ml.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) <{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}) <{pads = array<i64: 1, 0, 0, 2>}> : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x31x32xf32>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}) <{strides = array<i64: 3, 1>}> : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x10x30xf32>
func.func @conv2d_strides_pads(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) {
  %0 = ml.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  %1 = ml.conv2d %x, %w {pads = array<i64: 1, 0, 0, 2>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x31x32xf32>
  %2 = ml.conv2d %x, %w {strides = array<i64: 3, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x10x30xf32>
  func.return
}

// -----

// ml.conv2d with dilations: a 3x3 kernel dilated by 2 spans 5x5.

// CHECK-LABEL: func.func @conv2d_dilations
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x1x7x9xf64>, %[[W:[a-zA-Z0-9_]+]]: tensor<2x1x3x3xf64>)
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] {dilations = array<i64: 2, 2>} : (tensor<1x1x7x9xf64>, tensor<2x1x3x3xf64>) -> tensor<1x2x3x5xf64>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] {strides = array<i64: 2, 2>, dilations = array<i64: 1, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x7x9xf64>, tensor<2x1x3x3xf64>) -> tensor<1x2x4x3xf64>

// GENERIC-LABEL: sym_name = "conv2d_dilations"
// GENERIC:       "ml.conv2d"(%{{.*}}, %{{.*}}) <{dilations = array<i64: 2, 2>}> : (tensor<1x1x7x9xf64>, tensor<2x1x3x3xf64>) -> tensor<1x2x3x5xf64>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}) <{strides = array<i64: 2, 2>, dilations = array<i64: 1, 3>, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x1x7x9xf64>, tensor<2x1x3x3xf64>) -> tensor<1x2x4x3xf64>
func.func @conv2d_dilations(%x: tensor<1x1x7x9xf64>, %w: tensor<2x1x3x3xf64>) {
  %0 = ml.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x1x7x9xf64>, tensor<2x1x3x3xf64>) -> tensor<1x2x3x5xf64>
  %1 = ml.conv2d %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x7x9xf64>, tensor<2x1x3x3xf64>) -> tensor<1x2x4x3xf64>
  func.return
}

// -----

// ml.conv2d with groups > 1: C == I * groups and O % groups == 0; depthwise when
// groups == C.

// CHECK-LABEL: func.func @conv2d_groups
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x4x8x8xf16>, %[[W:[a-zA-Z0-9_]+]]: tensor<8x2x3x3xf16>, %[[DW:[a-zA-Z0-9_]+]]: tensor<4x1x3x3xf16>, %[[B:[a-zA-Z0-9_]+]]: tensor<4xf16>)
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] {groups = 2 : i64} : (tensor<1x4x8x8xf16>, tensor<8x2x3x3xf16>) -> tensor<1x8x6x6xf16>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[DW]], %[[B]] {pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf16>, tensor<4x1x3x3xf16>, tensor<4xf16>) -> tensor<1x4x8x8xf16>

// GENERIC-LABEL: sym_name = "conv2d_groups"
// GENERIC:       "ml.conv2d"(%{{.*}}, %{{.*}}) <{groups = 2 : i64}> : (tensor<1x4x8x8xf16>, tensor<8x2x3x3xf16>) -> tensor<1x8x6x6xf16>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) <{pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64}> : (tensor<1x4x8x8xf16>, tensor<4x1x3x3xf16>, tensor<4xf16>) -> tensor<1x4x8x8xf16>
func.func @conv2d_groups(%x: tensor<1x4x8x8xf16>, %w: tensor<8x2x3x3xf16>, %dw: tensor<4x1x3x3xf16>, %b: tensor<4xf16>) {
  %0 = ml.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf16>, tensor<8x2x3x3xf16>) -> tensor<1x8x6x6xf16>
  %1 = ml.conv2d %x, %dw, %b {pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x4x8x8xf16>, tensor<4x1x3x3xf16>, tensor<4xf16>) -> tensor<1x4x8x8xf16>
  func.return
}

// -----

// ml.conv2d with dynamic dims: the batch and spatial sizes stay dynamic, and a
// dynamic kernel size makes the output size dynamic.

// CHECK-LABEL: func.func @conv2d_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x3x?x8xbf16>, %[[W:[a-zA-Z0-9_]+]]: tensor<4x3x3x3xbf16>, %[[V:[a-zA-Z0-9_]+]]: tensor<4x3x?x3xbf16>, %[[Y:[a-zA-Z0-9_]+]]: tensor<1x?x8x8xbf16>)
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] : (tensor<?x3x?x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<?x4x?x6xbf16>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[Y]], %[[V]] : (tensor<1x?x8x8xbf16>, tensor<4x3x?x3xbf16>) -> tensor<1x4x?x6xbf16>

// GENERIC-LABEL: sym_name = "conv2d_dynamic"
// GENERIC:       "ml.conv2d"(%{{.*}}, %{{.*}}) : (tensor<?x3x?x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<?x4x?x6xbf16>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}) : (tensor<1x?x8x8xbf16>, tensor<4x3x?x3xbf16>) -> tensor<1x4x?x6xbf16>
func.func @conv2d_dynamic(%x: tensor<?x3x?x8xbf16>, %w: tensor<4x3x3x3xbf16>, %v: tensor<4x3x?x3xbf16>, %y: tensor<1x?x8x8xbf16>) {
  %0 = ml.conv2d %x, %w : (tensor<?x3x?x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<?x4x?x6xbf16>
  %1 = ml.conv2d %y, %v : (tensor<1x?x8x8xbf16>, tensor<4x3x?x3xbf16>) -> tensor<1x4x?x6xbf16>
  func.return
}

// -----

// ml.conv2d in the generic form: attributes, properties, a bias operand, and explicit
// default values (which the pretty form then leaves out).

// CHECK-LABEL: func.func @conv2d_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x4x6x6xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<6x2x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<6xf32>)
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]], %[[B]] {strides = array<i64: 1, 2>, groups = 2 : i64} : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x2xf32>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x6x6xf32>
// CHECK-NEXT:    %{{.*}} = ml.conv2d %[[X]], %[[W]] {groups = 2 : i64} : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32>

// GENERIC-LABEL: sym_name = "conv2d_generic_input"
// GENERIC:       "ml.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) <{strides = array<i64: 1, 2>, groups = 2 : i64}> : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x2xf32>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}) <{pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64}> : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x6x6xf32>
// GENERIC-NEXT:  "ml.conv2d"(%{{.*}}, %{{.*}}) <{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 2 : i64}> : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32>
func.func @conv2d_generic_input(%x: tensor<2x4x6x6xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) {
  %0 = "ml.conv2d"(%x, %w, %b) {strides = array<i64: 1, 2>, groups = 2 : i64} : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x2xf32>
  %1 = "ml.conv2d"(%x, %w) <{pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64}> : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x6x6xf32>
  %2 = "ml.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 2 : i64}> : (tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x4x4xf32>
  func.return
}

// -----

// The pools with strides and pads left to their defaults (1 and 0).

// CHECK-LABEL: func.func @pool_defaults
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x16x8x8xf32>)
// CHECK-NEXT:    %{{.*}} = ml.max_pool2d %[[X]] {kernel = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x7x7xf32>
// CHECK-NEXT:    %{{.*}} = ml.avg_pool2d %[[X]] {kernel = array<i64: 3, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x6x8xf32>

// GENERIC-LABEL: sym_name = "pool_defaults"
// GENERIC:       "ml.max_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>}> : (tensor<1x16x8x8xf32>) -> tensor<1x16x7x7xf32>
// GENERIC-NEXT:  "ml.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 3, 1>}> : (tensor<1x16x8x8xf32>) -> tensor<1x16x6x8xf32>
func.func @pool_defaults(%x: tensor<1x16x8x8xf32>) {
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x7x7xf32>
  %1 = ml.avg_pool2d %x {kernel = array<i64: 3, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x6x8xf32>
  func.return
}

// -----

// The pools with strides and pads (each pad smaller than the kernel).

// CHECK-LABEL: func.func @pool_strides_pads
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x16x32x32xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<1x16x8x8xf32>)
// CHECK-NEXT:    %{{.*}} = ml.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.avg_pool2d %[[Y]] {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
// CHECK-NEXT:    %{{.*}} = ml.max_pool2d %[[Y]] {kernel = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 0, 2, 1, 0>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x3xf32>

// GENERIC-LABEL: sym_name = "pool_strides_pads"
// GENERIC:       "ml.max_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
// GENERIC-NEXT:  "ml.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
// GENERIC-NEXT:  "ml.max_pool2d"(%{{.*}}) <{kernel = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 0, 2, 1, 0>}> : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x3xf32>
func.func @pool_strides_pads(%x: tensor<1x16x32x32xf32>, %y: tensor<1x16x8x8xf32>) {
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
  %1 = ml.avg_pool2d %y {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %2 = ml.max_pool2d %y {kernel = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 0, 2, 1, 0>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x3xf32>
  func.return
}

// -----

// The pools on dynamic dims and other element types: max_pool2d takes integers,
// avg_pool2d floats.

// CHECK-LABEL: func.func @pool_dynamic_types
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x?x?x8xi8>, %[[Y:[a-zA-Z0-9_]+]]: tensor<2x3x6x6xf16>, %[[Z:[a-zA-Z0-9_]+]]: tensor<1x1x4x4xf64>, %[[U:[a-zA-Z0-9_]+]]: tensor<1x2x4x4xui8>)
// CHECK-NEXT:    %{{.*}} = ml.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x?x?x8xi8>) -> tensor<?x?x?x4xi8>
// CHECK-NEXT:    %{{.*}} = ml.avg_pool2d %[[Y]] {kernel = array<i64: 2, 2>} : (tensor<2x3x6x6xf16>) -> tensor<2x3x5x5xf16>
// CHECK-NEXT:    %{{.*}} = ml.avg_pool2d %[[Z]] {kernel = array<i64: 4, 4>} : (tensor<1x1x4x4xf64>) -> tensor<1x1x1x1xf64>
// CHECK-NEXT:    %{{.*}} = ml.max_pool2d %[[U]] {kernel = array<i64: 1, 1>} : (tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8>

// GENERIC-LABEL: sym_name = "pool_dynamic_types"
// GENERIC:       "ml.max_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<?x?x?x8xi8>) -> tensor<?x?x?x4xi8>
// GENERIC-NEXT:  "ml.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>}> : (tensor<2x3x6x6xf16>) -> tensor<2x3x5x5xf16>
// GENERIC-NEXT:  "ml.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 4, 4>}> : (tensor<1x1x4x4xf64>) -> tensor<1x1x1x1xf64>
// GENERIC-NEXT:  "ml.max_pool2d"(%{{.*}}) <{kernel = array<i64: 1, 1>}> : (tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8>
func.func @pool_dynamic_types(%x: tensor<?x?x?x8xi8>, %y: tensor<2x3x6x6xf16>, %z: tensor<1x1x4x4xf64>, %u: tensor<1x2x4x4xui8>) {
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x?x?x8xi8>) -> tensor<?x?x?x4xi8>
  %1 = ml.avg_pool2d %y {kernel = array<i64: 2, 2>} : (tensor<2x3x6x6xf16>) -> tensor<2x3x5x5xf16>
  %2 = ml.avg_pool2d %z {kernel = array<i64: 4, 4>} : (tensor<1x1x4x4xf64>) -> tensor<1x1x1x1xf64>
  %3 = ml.max_pool2d %u {kernel = array<i64: 1, 1>} : (tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8>
  func.return
}

// -----

// The pools in the generic form, with attributes, with properties, and with explicit
// default values (which the pretty form then leaves out).

// CHECK-LABEL: func.func @pool_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x3x6x6xbf16>)
// CHECK-NEXT:    %{{.*}} = ml.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x6x6xbf16>) -> tensor<1x3x3x3xbf16>
// CHECK-NEXT:    %{{.*}} = ml.avg_pool2d %[[X]] {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xbf16>) -> tensor<1x3x6x6xbf16>
// CHECK-NEXT:    %{{.*}} = ml.avg_pool2d %[[X]] {kernel = array<i64: 2, 2>} : (tensor<1x3x6x6xbf16>) -> tensor<1x3x5x5xbf16>

// GENERIC-LABEL: sym_name = "pool_generic_input"
// GENERIC:       "ml.max_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x6x6xbf16>) -> tensor<1x3x3x3xbf16>
// GENERIC-NEXT:  "ml.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x6x6xbf16>) -> tensor<1x3x6x6xbf16>
// GENERIC-NEXT:  "ml.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}> : (tensor<1x3x6x6xbf16>) -> tensor<1x3x5x5xbf16>
func.func @pool_generic_input(%x: tensor<1x3x6x6xbf16>) {
  %0 = "ml.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x6x6xbf16>) -> tensor<1x3x3x3xbf16>
  %1 = "ml.avg_pool2d"(%x) <{kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x6x6xbf16>) -> tensor<1x3x6x6xbf16>
  %2 = "ml.avg_pool2d"(%x) <{kernel = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}> : (tensor<1x3x6x6xbf16>) -> tensor<1x3x5x5xbf16>
  func.return
}

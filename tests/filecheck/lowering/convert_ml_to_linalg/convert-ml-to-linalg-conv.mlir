// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// conv2d with pads, strides and a bias: the input is padded (a zero fill and an
// insert_slice), the output starts as zeros, and one generic accumulates with loops
// (n, f, oh, c, kh, kw, ow): the reductions sit between the output row and column,
// so the innermost loop walks an output row. The bias is an elementwise add after
// it, read along the channel dim (it fuses into the convolution's epilogue).

// CHECK-LABEL: func.func @conv_pads_strides_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x3x8x8xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<4x3x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK-NEXT:    %[[PE:.+]] = tensor.empty() : tensor<1x3x11x10xf32>
// CHECK-NEXT:    %[[PF:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[PE]] : tensor<1x3x11x10xf32>)
// CHECK-NEXT:    ^bb0(%{{.+}}: f32):
// CHECK-NEXT:      %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      linalg.yield %[[Z]] : f32
// CHECK:         %[[P:.+]] = tensor.insert_slice %[[X]] into %[[PF]][0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<1x3x8x8xf32> into tensor<1x3x11x10xf32>
// CHECK-NEXT:    %[[OE:.+]] = tensor.empty() : tensor<1x4x5x4xf32>
// CHECK-NEXT:    %[[INIT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[OE]] : tensor<1x4x5x4xf32>)
// CHECK-NEXT:    ^bb0(%{{.+}}: f32):
// CHECK-NEXT:      %[[Z0:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      linalg.yield %[[Z0]] : f32
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[P]], %[[W]] : tensor<1x3x11x10xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x5x4xf32>)
// CHECK-NEXT:    ^bb0(%[[XV:.+]]: f32, %[[WV:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[XV]], %[[WV]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[ACC]], %[[M]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         %[[BE:.+]] = tensor.empty() : tensor<1x4x5x4xf32>
// CHECK-NEXT:    %[[Y:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[B]], %[[R]] : tensor<4xf32>, tensor<1x4x5x4xf32>) outs(%[[BE]] : tensor<1x4x5x4xf32>)
// CHECK-NEXT:    ^bb0(%[[BV:.+]]: f32, %[[RV:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[RV]], %[[BV]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32
// CHECK:         func.return %[[Y]]

// LOC-LABEL:   func.func @conv_pads_strides_bias
// LOC:           tensor.empty{{.*}} loc("model.py":9:1)
// LOC:           tensor.insert_slice {{.*}} loc("model.py":9:1)
// LOC:           arith.mulf {{.*}} loc("model.py":9:1)
// LOC:           } -> tensor<1x4x5x4xf32> loc("model.py":9:1)
func.func @conv_pads_strides_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x5x4xf32> {
  %0 = ml.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 2, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x4xf32> loc("model.py":9:1)
  func.return %0 : tensor<1x4x5x4xf32>
}

// -----

// Dilations enter the input map (oh + kh * 2); without pads the input is read as
// is, and dynamic output dims follow floor((H - dh * (KH - 1) - 1) / sh) + 1.

// CHECK-LABEL: func.func @conv_dilated_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x3x?x?xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<8x3x3x3xf32>)
// CHECK:         %[[N:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x3x?x?xf32>
// CHECK:         %[[H:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x3x?x?xf32>
// CHECK-NEXT:    %[[C5:.+]] = arith.constant 5 : index
// CHECK-NEXT:    %[[ROOM:.+]] = arith.subi %[[H]], %[[C5]] : index
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[OH:.+]] = arith.addi %[[ROOM]], %[[C1]] : index
// CHECK:         %[[WD:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x3x?x?xf32>
// CHECK-NEXT:    %[[C3:.+]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ROOMW:.+]] = arith.subi %[[WD]], %[[C3]] : index
// CHECK-NEXT:    %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[QW:.+]] = arith.floordivsi %[[ROOMW]], %[[C2]] : index
// CHECK-NEXT:    %[[C1B:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[OW:.+]] = arith.addi %[[QW]], %[[C1B]] : index
// CHECK-NEXT:    %[[E:.+]] = tensor.empty(%[[N]], %[[OH]], %[[OW]]) : tensor<?x8x?x?xf32>
// CHECK-NEXT:    %[[INIT:.+]] = linalg.generic
// CHECK:           arith.constant 0.000000e+00 : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, (d2 + (d4 * 2)), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>]
// CHECK-SAME:      ins(%[[X]], %[[W]] : tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) outs(%[[INIT]] : tensor<?x8x?x?xf32>)
func.func @conv_dilated_dynamic(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = ml.conv2d %x, %w {strides = array<i64: 1, 2>, dilations = array<i64: 2, 1>} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  func.return %0 : tensor<?x8x?x?xf32>
}

// -----

// Groups: the weights expand to (G, O/G, I, KH, KW), the loops gain g after n, the
// input channel is g * I + c, the bias is read at g * (O/G) + f, and the (N, G, O/G,
// OH, OW) output collapses back to NCHW.

// CHECK-LABEL: func.func @conv_groups
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x4x5x5xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<6x2x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<6xf32>)
// CHECK:         %[[W5:.+]] = tensor.expand_shape %[[W]] {{\[}}[0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<2x2x3x3x3xf32>
// CHECK-NEXT:    %[[INIT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (((d1 * 3) + d2))>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME:      ins(%[[B]] : tensor<6xf32>) outs(%[[E]] : tensor<2x2x3x3x3xf32>)
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, ((d1 * 2) + d4), (d3 + d5), (d7 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[W5]] : tensor<2x4x5x5xf32>, tensor<2x3x2x3x3xf32>) outs(%[[INIT]] : tensor<2x2x3x3x3xf32>)
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[Y]] {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] : tensor<2x2x3x3x3xf32> into tensor<2x6x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @conv_groups(%x: tensor<2x4x5x5xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x3x3xf32> {
  %0 = ml.conv2d %x, %w, %b {groups = 2 : i64} : (tensor<2x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x3x3xf32>
  func.return %0 : tensor<2x6x3x3xf32>
}

// -----

// Depthwise (one input and one output channel per group): no group or channel loop;
// the weights collapse to (C, KH, KW) and the loops are (n, f, oh, kh, kw, ow), the
// output NCHW as it is, so an elementwise consumer fuses into it as into any conv.

// CHECK-LABEL: func.func @conv_depthwise
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x5x6xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<3x1x3x2xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<3xf32>)
// CHECK:         %[[W3:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0 : i64, 1 : i64], [2 : i64], [3 : i64]] : tensor<3x1x3x2xf32> into tensor<3x3x2xf32>
// CHECK:         %[[INIT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME:      ins(%[[B]] : tensor<3xf32>)
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[W3]] : tensor<2x3x5x6xf32>, tensor<3x3x2xf32>) outs(%[[INIT]] : tensor<2x3x2x5xf32>)
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         func.return %[[Y]]

// LOC-LABEL:   func.func @conv_depthwise
// LOC:           tensor.collapse_shape {{.*}} loc("model.py":12:1)
// LOC:           arith.mulf {{.*}} loc("model.py":12:1)
func.func @conv_depthwise(%x: tensor<2x3x5x6xf32>, %w: tensor<3x1x3x2xf32>, %b: tensor<3xf32>) -> tensor<2x3x2x5xf32> {
  %0 = ml.conv2d %x, %w, %b {strides = array<i64: 2, 1>, groups = 3 : i64} : (tensor<2x3x5x6xf32>, tensor<3x1x3x2xf32>, tensor<3xf32>) -> tensor<2x3x2x5xf32> loc("model.py":12:1)
  func.return %0 : tensor<2x3x2x5xf32>
}

// -----

// max_pool2d: padding and the initial value are -inf (the lowest i32 for
// integers), so padding never wins; the kh/kw loops take their bounds from an
// unread tensor.empty of the kernel size; kw is innermost, inside ow: (n, c, oh, kh,
// ow, kw).

// CHECK-LABEL: func.func @max_pool_padded
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x2x5x5xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<1x2x5x5xi32>)
// CHECK:         arith.constant 0xff800000 : f32
// CHECK:         %[[P:.+]] = tensor.insert_slice %[[X]] into %{{.+}}[0, 0, 0, 0] [1, 2, 5, 5] [1, 1, 1, 1] : tensor<1x2x5x5xf32> into tensor<1x2x6x6xf32>
// CHECK-NEXT:    %[[OE:.+]] = tensor.empty() : tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[INIT:.+]] = linalg.generic
// CHECK-NEXT:    ^bb0(%{{.+}}: f32):
// CHECK-NEXT:      arith.constant 0xff800000 : f32
// CHECK:         %[[WIN:.+]] = tensor.empty() : tensor<2x2xf32>
// CHECK-NEXT:    %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d4 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[P]], %[[WIN]] : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<1x2x3x3xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.+]]: f32, %{{.+}}: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[MAX:.+]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
// CHECK:         arith.constant -2147483648 : i32
// CHECK:         arith.maxsi %{{.+}}, %{{.+}} : i32
func.func @max_pool_padded(%x: tensor<1x2x5x5xf32>, %y: tensor<1x2x5x5xi32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>) {
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %1 = ml.max_pool2d %y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x2x5x5xi32>) -> tensor<1x2x3x3xi32>
  func.return %0, %1 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>
}

// -----

// max_pool2d of unsigned integers: padding and the initial value are 0, the lowest
// ui8, and the window max is the unsigned `arith.maxui` on the signless bits.

// CHECK-LABEL: func.func @max_pool_unsigned
// CHECK-SAME:    (%{{.+}}: tensor<1x1x4x4xi8>) -> tensor<1x1x2x2xi8>
// CHECK:         tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 1] [1, 1, 4, 4] [1, 1, 1, 1] : tensor<1x1x4x4xi8> into tensor<1x1x5x5xi8>
// CHECK:           arith.constant 0 : i8
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]
// CHECK-NEXT:    ^bb0(%[[V:.+]]: i8, %{{.+}}: i8, %[[ACC:.+]]: i8):
// CHECK-NEXT:      %[[MAX:.+]] = arith.maxui %[[ACC]], %[[V]] : i8
// CHECK-NEXT:      linalg.yield %[[MAX]] : i8
// CHECK-NOT:     arith.maxsi
func.func @max_pool_unsigned(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8> {
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>} : (tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8>
  func.return %0 : tensor<1x1x2x2xui8>
}

// -----

// avg_pool2d without pads: every window is full, so the sum is divided by the
// kernel size, in place.

// CHECK-LABEL: func.func @avg_pool_unpadded
// CHECK:         %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]}
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[SUM]] : tensor<1x2x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[S:.+]]: f32):
// CHECK-NEXT:      %[[K:.+]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:      %[[A:.+]] = arith.divf %[[S]], %[[K]] : f32
// CHECK-NEXT:      linalg.yield %[[A]] : f32
// CHECK:         func.return %[[R]]
func.func @avg_pool_unpadded(%x: tensor<1x2x4x5xf32>) -> tensor<1x2x2x2xf32> {
  %0 = ml.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x5xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

// avg_pool2d with pads (count_include_pad = 0): the zero-padded sum is divided by
// the in-bounds part of each window, min(oh*s - top + k, H) - max(oh*s - top, 0)
// rows times the same for columns; H is dynamic here.

// CHECK-LABEL: func.func @avg_pool_padded_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x2x?x5xf32>)
// CHECK:         %[[H:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<1x2x?x5xf32>
// CHECK:         %[[SUM:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), ((d4 * 2) + d5))>,
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[SUM]] : tensor<1x2x?x3xf32>)
// CHECK-NEXT:    ^bb0(%[[S:.+]]: f32):
// CHECK-NEXT:      %[[OH:.+]] = linalg.index 2 : index
// CHECK-NEXT:      %[[TOP:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[H0:.+]] = arith.subi %[[OH]], %[[TOP]] : index
// CHECK-NEXT:      %[[KH:.+]] = arith.constant 3 : index
// CHECK-NEXT:      %[[H1:.+]] = arith.addi %[[H0]], %[[KH]] : index
// CHECK-NEXT:      %[[HI:.+]] = arith.minsi %[[H1]], %[[H]] : index
// CHECK-NEXT:      %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[LO:.+]] = arith.maxsi %[[H0]], %[[Z]] : index
// CHECK-NEXT:      %[[ROWS:.+]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK-NEXT:      %[[OW:.+]] = linalg.index 3 : index
// CHECK-NEXT:      %[[SW:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[W0S:.+]] = arith.muli %[[OW]], %[[SW]] : index
// CHECK-NEXT:      %[[LEFT:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[W0:.+]] = arith.subi %[[W0S]], %[[LEFT]] : index
// CHECK:           %[[WHI:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK:           %[[WLO:.+]] = arith.maxsi %[[W0]], %{{.+}} : index
// CHECK-NEXT:      %[[COLS:.+]] = arith.subi %[[WHI]], %[[WLO]] : index
// CHECK-NEXT:      %[[N:.+]] = arith.muli %[[ROWS]], %[[COLS]] : index
// CHECK-NEXT:      %[[NI:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT:      %[[NF:.+]] = arith.sitofp %[[NI]] : i64 to f32
// CHECK-NEXT:      %[[A:.+]] = arith.divf %[[S]], %[[NF]] : f32
// CHECK-NEXT:      linalg.yield %[[A]] : f32
// CHECK:         func.return %[[R]]
func.func @avg_pool_padded_dynamic(%x: tensor<1x2x?x5xf32>) -> tensor<1x2x?x3xf32> {
  %0 = ml.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x?x5xf32>) -> tensor<1x2x?x3xf32>
  func.return %0 : tensor<1x2x?x3xf32>
}

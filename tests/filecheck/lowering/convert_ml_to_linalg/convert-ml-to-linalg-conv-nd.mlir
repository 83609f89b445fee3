// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// The window lowering for 1-D and 3-D ops: the same loops as conv2d, one output and
// one kernel loop per spatial dim, the reductions before the innermost output dim.

// conv1d: loops (n, f, c, kw, ow), the input padded along W only.

// CHECK-LABEL: func.func @conv1d
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x9xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<4x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK:         %[[P:.+]] = tensor.insert_slice %[[X]] into %{{.+}}[0, 0, 1] [2, 3, 9] [1, 1, 1] : tensor<2x3x9xf32> into tensor<2x3x11xf32>
// CHECK:         %[[INIT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, ((d4 * 2) + d3))>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[P]], %[[W]] : tensor<2x3x11xf32>, tensor<4x3x3xf32>) outs(%[[INIT]] : tensor<2x4x5xf32>)
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:      ins(%[[B]], %[[R]] : tensor<4xf32>, tensor<2x4x5xf32>)
// CHECK:         func.return %[[Y]]

// LOC-LABEL:   func.func @conv1d
// LOC:           tensor.insert_slice {{.*}} loc("model.py":3:1)
// LOC:           arith.mulf {{.*}} loc("model.py":3:1)
func.func @conv1d(%x: tensor<2x3x9xf32>, %w: tensor<4x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x5xf32> {
  %0 = ml.conv1d %x, %w, %b {strides = array<i64: 2>, pads = array<i64: 1, 1>} : (tensor<2x3x9xf32>, tensor<4x3x3xf32>, tensor<4xf32>) -> tensor<2x4x5xf32> loc("model.py":3:1)
  func.return %0 : tensor<2x4x5xf32>
}

// -----

// conv3d with groups and a dynamic W: the weights expand to (G, O/G, I, KD, KH, KW),
// loops (n, g, f, od, oh, c, kd, kh, kw, ow), the input channel is g * I + c, and the
// dynamic output dim is W - dw * (KW - 1) (here KW = 1).

// CHECK-LABEL: func.func @conv3d_groups
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x4x5x6x?xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<6x2x3x3x1xf32>)
// CHECK:         %[[W6:.+]] = tensor.expand_shape %[[W]] {{\[}}[0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64], [5 : i64]] output_shape [2, 3, 2, 3, 3, 1] : tensor<6x2x3x3x1xf32> into tensor<2x3x2x3x3x1xf32>
// CHECK:         %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, ((d1 * 2) + d5), (d3 + d6), (d4 + d7), (d9 + (d8 * 2)))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d1, d2, d5, d6, d7, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d2, d3, d4, d9)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[W6]] : tensor<1x4x5x6x?xf32>, tensor<2x3x2x3x3x1xf32>)
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[S]] {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64], [5 : i64]] : tensor<1x2x3x3x4x?xf32> into tensor<1x6x3x4x?xf32>
// CHECK:         func.return %[[R]]
func.func @conv3d_groups(%x: tensor<1x4x5x6x?xf32>, %w: tensor<6x2x3x3x1xf32>) -> tensor<1x6x3x4x?xf32> {
  %0 = ml.conv3d %x, %w {dilations = array<i64: 1, 1, 2>, groups = 2 : i64} : (tensor<1x4x5x6x?xf32>, tensor<6x2x3x3x1xf32>) -> tensor<1x6x3x4x?xf32>
  func.return %0 : tensor<1x6x3x4x?xf32>
}

// -----

// max_pool3d with dilations: the input reads o * stride + k * dilation per dim, the
// window operand (never read) bounds the three kernel loops, the last innermost.

// CHECK-LABEL: func.func @max_pool3d_dilated
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x2x6x6x6xf32>)
// CHECK:         %[[INIT:.+]] = linalg.generic
// CHECK:           arith.constant 0xff800000 : f32
// CHECK:         %[[K:.+]] = tensor.empty() : tensor<3x2x2xf32>
// CHECK-NEXT:    %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, ((d2 * 2) + (d4 * 2)), (d3 + (d5 * 2)), (d6 + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d4, d5, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d6)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]], %[[K]] : tensor<1x2x6x6x6xf32>, tensor<3x2x2xf32>) outs(%[[INIT]] : tensor<1x2x1x4x5xf32>)
// CHECK:           arith.maximumf
// CHECK:         func.return %[[R]]
func.func @max_pool3d_dilated(%x: tensor<1x2x6x6x6xf32>) -> tensor<1x2x1x4x5xf32> {
  %0 = ml.max_pool3d %x {kernel = array<i64: 3, 2, 2>, strides = array<i64: 2, 1, 1>, dilations = array<i64: 2, 2, 1>} : (tensor<1x2x6x6x6xf32>) -> tensor<1x2x1x4x5xf32>
  func.return %0 : tensor<1x2x1x4x5xf32>
}

// -----

// avg_pool1d with a dilation and pads over a dynamic W: each window counts the
// positions start + j * 3 (start = ow - 2) inside [0, W): j from max(0, -floor(start
// / 3)) to min(K - 1, floor((W - 1 - start) / 3)).

// CHECK-LABEL: func.func @avg_pool1d_dilated_pads
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x2x?xf32>)
// CHECK:         %[[W:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<1x2x?xf32>
// CHECK:         %[[SUM:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, (d2 + (d3 * 3)))>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:         linalg.generic {{.*}} outs(%[[SUM]] : tensor<1x2x?xf32>)
// CHECK:           %[[O:.+]] = linalg.index 2 : index
// CHECK-NEXT:      %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[START:.+]] = arith.subi %[[O]], %[[C2]] : index
// CHECK-NEXT:      %[[C3:.+]] = arith.constant 3 : index
// CHECK-NEXT:      %[[Q:.+]] = arith.floordivsi %[[START]], %[[C3]] : index
// CHECK:           %[[FIRST:.+]] = arith.maxsi
// CHECK:           %[[WM1:.+]] = arith.subi %[[W]], %{{.+}} : index
// CHECK-NEXT:      %[[ROOM:.+]] = arith.subi %[[WM1]], %[[START]] : index
// CHECK:           arith.floordivsi %[[ROOM]]
// CHECK:           %[[LAST:.+]] = arith.minsi
// CHECK-NEXT:      arith.subi %[[LAST]], %[[FIRST]] : index
// CHECK:           arith.divf
func.func @avg_pool1d_dilated_pads(%x: tensor<1x2x?xf32>) -> tensor<1x2x?xf32> {
  %0 = ml.avg_pool1d %x {kernel = array<i64: 2>, dilations = array<i64: 3>, pads = array<i64: 2, 1>} : (tensor<1x2x?xf32>) -> tensor<1x2x?xf32>
  func.return %0 : tensor<1x2x?xf32>
}

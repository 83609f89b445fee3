// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise,canonicalize,cse | filecheck %s

// A float convolution's bias (with a window wider than 1x1) is added after it, so it
// fuses into the epilogue with the relu: one generic from a zero start (which
// `linalg-tile` drops), the bias read per output channel (d1) at the last reduction
// step, before the relu.

// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-SAME:    (%{{.+}}: tensor<2x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<2x4x8x8xf32>
// CHECK-NEXT:    %[[Z:.+]] = linalg.generic {{.*}} outs(%[[E]] : tensor<2x4x8x8xf32>)
// CHECK-NEXT:    ^bb0(%{{.+}}: f32):
// CHECK-NEXT:      %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      linalg.yield %[[ZERO]] : f32
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [{{.*}}, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>]
// CHECK-SAME:      ins(%{{.+}}, %[[W]], %[[B]] : {{.*}}) outs(%[[Z]] : tensor<2x4x8x8xf32>)
// CHECK-NEXT:    ^bb0(%{{.+}}: f32, %{{.+}}: f32, %[[BV:.+]]: f32, %{{.+}}: f32):
// CHECK:           %[[SUM:.+]] = arith.addf %[[ACC:.+]], %[[BV]] : f32
// CHECK-NEXT:      %[[ZERO2:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %{{.+}} = arith.maximumf %[[SUM]], %[[ZERO2]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         func.return %[[Y]]
func.func @conv_bias_relu(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x8x8xf32> {
  %0 = ml.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %1 = ml.relu %0 : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  func.return %1 : tensor<2x4x8x8xf32>
}

// -----

// A grouped convolution keeps the bias as its start: its output is split as
// (N, G, O/G, ...) and collapsed after, where an add would not fuse.

// CHECK-LABEL: func.func @grouped_bias
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (((d1 * 2) + d2))>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME:      ins(%{{.+}} : tensor<4xf32>)
// CHECK:         tensor.collapse_shape
// CHECK-NOT:     arith.addf %{{.+}}, %{{.+}} : f32
// CHECK:         func.return
func.func @grouped_bias(%x: tensor<1x4x6x6xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = ml.conv2d %x, %w, %b {groups = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}

// -----

// A 1x1 convolution keeps the bias as its start too (a plain GEMM, whose fused
// activation on small images ran slower with the bias read in its epilogue).

// CHECK-LABEL: func.func @pointwise_bias
// CHECK-SAME:    (%{{.+}}: tensor<1x8x2x2xf32>, %{{.+}}: tensor<16x8x1x1xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK:         %[[INIT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME:      ins(%[[B]] : tensor<16xf32>)
// CHECK:         linalg.generic {{.*}} outs(%[[INIT]] : tensor<1x16x2x2xf32>)
// CHECK-NOT:     ins(%[[B]]
// CHECK:         func.return
func.func @pointwise_bias(%x: tensor<1x8x2x2xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16xf32>) -> tensor<1x16x2x2xf32> {
  %0 = ml.conv2d %x, %w, %b : (tensor<1x8x2x2xf32>, tensor<16x8x1x1xf32>, tensor<16xf32>) -> tensor<1x16x2x2xf32>
  func.return %0 : tensor<1x16x2x2xf32>
}

// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s

// One output pixel per image, constant weights: the image collapsed to (N, C*H*W), the
// weights of the taps that read it gathered into a (C*H*W, O) constant, one matmul
// generic over the batch into the bias, and the result expanded to (N, O, 1, 1). A 2x2
// image through a 3x3 stride-2 kernel padded by 1 is read by taps (1..2, 1..2): the
// weights 1..9 give W' = 5, 6, 8, 9.

// CHECK-LABEL: func.func @pixel_taps
// CHECK-SAME:    (%[[X:.+]]: tensor<?x1x2x2xf32>)
// CHECK:         %[[N:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x1x2x2xf32>
// CHECK:         %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
// CHECK-NEXT:    %[[INIT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] : tensor<?x1x2x2xf32> into tensor<?x4xf32>
// CHECK-NEXT:    %[[WP:.+]] = arith.constant dense<{{\[}}[5.000000e+00, -5.000000e+00], [6.000000e+00, -6.000000e+00], [8.000000e+00, -8.000000e+00], [9.000000e+00, -9.000000e+00]]> : tensor<4x2xf32>
// CHECK-NEXT:    %[[MM:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[FLAT]], %[[WP]] : tensor<?x4xf32>, tensor<4x2xf32>) outs(%[[INIT]] : tensor<?x2xf32>)
// CHECK:         %[[Y:.+]] = tensor.expand_shape %[[MM]] {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] output_shape [%[[N]], 2, 1, 1] : tensor<?x2xf32> into tensor<?x2x1x1xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @pixel_taps(%x: tensor<?x1x2x2xf32>) -> tensor<?x2x1x1xf32> {
  %w = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0], [-7.0, -8.0, -9.0]]]]> : tensor<2x1x3x3xf32>
  %b = arith.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = ml.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x1x2x2xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<?x2x1x1xf32>
  func.return %y : tensor<?x2x1x1xf32>
}

// -----

// Dilation 2, padding 2 on a 1x1 image: the one pixel sits under the centre tap. No
// bias: the matmul starts from zeros.

// CHECK-LABEL: func.func @pixel_dilated
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:         arith.constant 0.000000e+00 : f32
// CHECK:         tensor.collapse_shape {{.*}} : tensor<3x1x1x1xf32> into tensor<3x1xf32>
// CHECK-NEXT:    arith.constant dense<5.000000e+00> : tensor<1x1xf32>
// CHECK:         tensor.expand_shape {{.*}} output_shape [3, 1, 1, 1] : tensor<3x1xf32> into tensor<3x1x1x1xf32>
func.func @pixel_dilated(%x: tensor<3x1x1x1xf32>) -> tensor<3x1x1x1xf32> {
  %w = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %y = ml.conv2d %x, %w {dilations = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>} : (tensor<3x1x1x1xf32>, tensor<1x1x3x3xf32>) -> tensor<3x1x1x1xf32>
  func.return %y : tensor<3x1x1x1xf32>
}

// -----

// Not taken: weights given at run time, a window that reads 4 of 9 pixels, a 4x4
// output whose windows read 39% of the 4x4 image, groups. Each stays a window generic:
// no image collapsed to 2-D, no matmul generic.

// CHECK-LABEL: func.func @not_pixel
// CHECK-NOT:     into tensor<2x{{[0-9]+}}xf32>
// CHECK-NOT:     affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK:         func.return
func.func @not_pixel(%x: tensor<2x4x1x1xf32>, %w: tensor<3x4x1x1xf32>, %z: tensor<2x4x3x3xf32>, %v: tensor<2x4x2x2xf32>, %u: tensor<2x4x4x4xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>, tensor<2x3x4x4xf32>, tensor<2x4x1x1xf32>) {
  %c = arith.constant dense<1.0> : tensor<3x4x2x2xf32>
  %d = arith.constant dense<1.0> : tensor<3x4x3x3xf32>
  %g = arith.constant dense<1.0> : tensor<4x2x2x2xf32>
  %0 = ml.conv2d %x, %w : (tensor<2x4x1x1xf32>, tensor<3x4x1x1xf32>) -> tensor<2x3x1x1xf32>
  %1 = ml.conv2d %z, %c {strides = array<i64: 3, 3>} : (tensor<2x4x3x3xf32>, tensor<3x4x2x2xf32>) -> tensor<2x3x1x1xf32>
  %2 = ml.conv2d %u, %d {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x4x4x4xf32>, tensor<3x4x3x3xf32>) -> tensor<2x3x4x4xf32>
  %3 = ml.conv2d %v, %g {groups = 2 : i64} : (tensor<2x4x2x2xf32>, tensor<4x2x2x2xf32>) -> tensor<2x4x1x1xf32>
  func.return %0, %1, %2, %3 : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>, tensor<2x3x4x4xf32>, tensor<2x4x1x1xf32>
}

// -----

// A 2x2 output of a 3x3 window padded by 1 on a 2x2 image: each output pixel reads
// the whole image, so it is one matmul X[N, C*4] @ W'[C*4, O*4] over the batch from
// zeros, its (N, O*P) result y laid out as (N, O, 2, 2), then the bias added there.
// Output pixel (0, 0) reads pixels (0..1, 0..1) by taps (1..2, 1..2): of weights 1..9,
// 5, 6, 8, 9; pixel (1, 1) by taps (0..1, 0..1): 1, 2, 4, 5.

// CHECK-LABEL: func.func @pixels_2x2
// CHECK-SAME:    (%[[X:.+]]: tensor<3x1x2x2xf32>)
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT:    %[[INIT:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{.*}} : tensor<3x1x2x2xf32> into tensor<3x4xf32>
// CHECK-NEXT:    %[[WP:.+]] = arith.constant dense<{{\[}}[5.000000e+00, 4.000000e+00, 2.000000e+00, 1.000000e+00], [6.000000e+00, 5.000000e+00, 3.000000e+00, 2.000000e+00], [8.000000e+00, 7.000000e+00, 5.000000e+00, 4.000000e+00], [9.000000e+00, 8.000000e+00, 6.000000e+00, 5.000000e+00]]> : tensor<4x4xf32>
// CHECK-NEXT:    %[[MM:.+]] = linalg.generic {{.*}} ins(%[[FLAT]], %[[WP]] : tensor<3x4xf32>, tensor<4x4xf32>) outs(%[[INIT]] : tensor<3x4xf32>)
// CHECK:         %[[Y:.+]] = tensor.expand_shape %[[MM]] {{.*}} output_shape [3, 1, 2, 2] : tensor<3x4xf32> into tensor<3x1x2x2xf32>
// CHECK:         %[[B:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME:      ins(%{{.+}}, %[[Y]] : tensor<1xf32>, tensor<3x1x2x2xf32>)
// CHECK:         func.return %[[B]]
func.func @pixels_2x2(%x: tensor<3x1x2x2xf32>) -> tensor<3x1x2x2xf32> {
  %w = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %b = arith.constant dense<[0.5]> : tensor<1xf32>
  %y = ml.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<3x1x2x2xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<3x1x2x2xf32>
  func.return %y : tensor<3x1x2x2xf32>
}

// A small convolutional classifier on 32x32 RGB images:
// conv3x3 -> batch norm -> relu -> max pool -> conv3x3 (stride 2) -> relu
// -> global average pool -> linear.
func.func @convnet(%x: tensor<?x3x32x32xf32>,
                   %w1: tensor<16x3x3x3xf32>, %b1: tensor<16xf32>,
                   %s: tensor<16xf32>, %t: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>,
                   %w2: tensor<32x16x3x3xf32>, %fc: tensor<32x10xf32>) -> tensor<?x10xf32> {
  %c1 = ml.conv2d %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<?x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<?x16x32x32xf32>
  %n1 = ml.batch_norm %c1, %s, %t, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<?x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16x32x32xf32>
  %r1 = ml.relu %n1 : (tensor<?x16x32x32xf32>) -> tensor<?x16x32x32xf32>
  %p1 = ml.max_pool2d %r1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x16x32x32xf32>) -> tensor<?x16x16x16xf32>
  %c2 = ml.conv2d %p1, %w2 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x16x16x16xf32>, tensor<32x16x3x3xf32>) -> tensor<?x32x8x8xf32>
  %r2 = ml.relu %c2 : (tensor<?x32x8x8xf32>) -> tensor<?x32x8x8xf32>
  %g = ml.reduce_mean %r2 {axes = array<i64: 2, 3>, keepdims = false} : (tensor<?x32x8x8xf32>) -> tensor<?x32xf32>
  %y = ml.matmul %g, %fc : (tensor<?x32xf32>, tensor<32x10xf32>) -> tensor<?x10xf32>
  func.return %y : tensor<?x10xf32>
}

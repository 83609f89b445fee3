// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-ml-to-linalg
// RUN: not mlc-opt %s --split-input-file -p convert-ml-to-linalg 2>&1 | filecheck %s --check-prefix=LOC

// What the movement, conv and pooling lowerings cannot express stops the pass with a
// located error, never a crash.

// A grouped convolution reads input channel g * I + c: an affine map needs I, and
// the (G, O/G) split of the weights needs O, at compile time.

// LOC-NOT: Traceback
// LOC: convert-ml-to-linalg-invalid-movement.mlir:[[# @LINE + 3]]:3: error: 'ml.conv2d' op convert-ml-to-linalg: a grouped convolution needs static channel counts in its weights, got tensor<?x2x3x3xf32>
func.func @grouped_conv_dynamic_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<?x2x3x3xf32>) -> tensor<1x?x3x3xf32> {
  // expected-error @+1 {{convert-ml-to-linalg: a grouped convolution needs static channel counts in its weights, got tensor<?x2x3x3xf32>}}
  %0 = ml.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<?x2x3x3xf32>) -> tensor<1x?x3x3xf32>
  func.return %0 : tensor<1x?x3x3xf32>
}

// -----

// A constant index out of range is an error when compiling, naming the index.

func.func @gather_constant_out_of_range(%d: tensor<10x16xf32>) -> tensor<2x16xf32> {
  %i = arith.constant dense<[3, 10]> : tensor<2xi64>
  // expected-error @+1 {{'ml.gather' op index 10 is out of range [-10, 10) of data dim 0}}
  %0 = ml.gather %d, %i {axis = 0 : i64} : (tensor<10x16xf32>, tensor<2xi64>) -> tensor<2x16xf32>
  func.return %0 : tensor<2x16xf32>
}

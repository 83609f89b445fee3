// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-ml-to-linalg

// Constant indices out of range are errors at the op when compiling.

func.func @scatter_elements_constant_out_of_range(%x: tensor<3x5xf32>, %u: tensor<3x1xf32>) -> tensor<3x5xf32> {
  %i = arith.constant dense<[[0], [5], [1]]> : tensor<3x1xi64>
  // expected-error @+1 {{'ml.scatter_elements' op index 5 is out of range [-5, 5) of data dim 1}}
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x1xi64>, tensor<3x1xf32>) -> tensor<3x5xf32>
  func.return %s : tensor<3x5xf32>
}

// -----

func.func @scatter_nd_constant_out_of_range(%x: tensor<4x5xf32>, %u: tensor<2xf32>) -> tensor<4x5xf32> {
  %i = arith.constant dense<[[0, 4], [1, -6]]> : tensor<2x2xi64>
  // expected-error @+1 {{'ml.scatter_nd' op index -6 is out of range [-5, 5) of data dim 1}}
  %s = ml.scatter_nd %x, %i, %u : (tensor<4x5xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<4x5xf32>
  func.return %s : tensor<4x5xf32>
}

// RUN: mlc-opt %s --split-input-file --verify-diagnostics

func.func @elements_rank(%x: tensor<3x5xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{expects indices of the rank of data (2), got 3}}
  %g = ml.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// -----

func.func @elements_too_wide(%x: tensor<3x5xf32>, %i: tensor<4x2xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{expects indices dim 0 (4) not to exceed the data's (3)}}
  %g = ml.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  func.return %g : tensor<4x2xf32>
}

// -----

func.func @elements_float_indices(%x: tensor<3x5xf32>, %i: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{expects indices to be a tensor of i32 or i64, got tensor<3x2xf32>}}
  %g = ml.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %g : tensor<3x2xf32>
}

// -----

func.func @nd_dynamic_tuple(%x: tensor<4x5xf32>, %i: tensor<3x?xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{expects the last dim of indices to be static}}
  %g = ml.gather_nd %x, %i : (tensor<4x5xf32>, tensor<3x?xi64>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// -----

func.func @nd_tuple_too_long(%x: tensor<4x5xf32>, %i: tensor<3x3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{expects the last dim of indices in [1, 2], got 3}}
  %g = ml.gather_nd %x, %i : (tensor<4x5xf32>, tensor<3x3xi64>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// -----

func.func @nd_batch(%x: tensor<4x5xf32>, %i: tensor<3x1xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{expects batch dim 0 of data and indices to agree}}
  %g = ml.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<4x5xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

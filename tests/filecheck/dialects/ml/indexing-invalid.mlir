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

// -----

func.func @scatter_updates_shape(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>, %u: tensor<3x3xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{expects updates of shape 3x2 (the indices'), got 3x3}}
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x3xf32>) -> tensor<3x5xf32>
  func.return %s : tensor<3x5xf32>
}

// -----

func.func @scatter_reduction(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{expects reduction to be one of none, add, mul, max, min, got 'sum'}}
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "sum"} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>
  func.return %s : tensor<3x5xf32>
}

// -----

func.func @scatter_bool_add(%x: tensor<5xi1>, %i: tensor<2xi64>, %u: tensor<2xi1>) -> tensor<5xi1> {
  // expected-error @+1 {{expects a numeric element type for reduction 'add'}}
  %s = ml.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "add"} : (tensor<5xi1>, tensor<2xi64>, tensor<2xi1>) -> tensor<5xi1>
  func.return %s : tensor<5xi1>
}

// -----

func.func @scatter_nd_updates(%x: tensor<4x5x6xf32>, %i: tensor<3x2xi64>, %u: tensor<3x5xf32>) -> tensor<4x5x6xf32> {
  // expected-error @+1 {{expects updates of shape 3x6, got 3x5}}
  %s = ml.scatter_nd %x, %i, %u : (tensor<4x5x6xf32>, tensor<3x2xi64>, tensor<3x5xf32>) -> tensor<4x5x6xf32>
  func.return %s : tensor<4x5x6xf32>
}

// -----

func.func @scatter_nd_tuple(%x: tensor<4x5xf32>, %i: tensor<3x3xi64>, %u: tensor<3xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{expects the last dim of indices in [1, 2], got 3}}
  %s = ml.scatter_nd %x, %i, %u : (tensor<4x5xf32>, tensor<3x3xi64>, tensor<3xf32>) -> tensor<4x5xf32>
  func.return %s : tensor<4x5xf32>
}

// -----

func.func @top_k_too_many(%x: tensor<5x3xf32>) -> (tensor<5x4xf32>, tensor<5x4xi64>) {
  // expected-error @+1 {{expects k (4) not to exceed dim 1 (3)}}
  %v, %i = ml.top_k %x {k = 4 : i64, axis = 1 : i64} : (tensor<5x3xf32>) -> (tensor<5x4xf32>, tensor<5x4xi64>)
  func.return %v, %i : tensor<5x4xf32>, tensor<5x4xi64>
}

// -----

func.func @top_k_indices_type(%x: tensor<5x3xf32>) -> (tensor<5x2xf32>, tensor<5x2xi32>) {
  // expected-error @+1 {{expects indices of element type i64, got tensor<5x2xi32>}}
  %v, %i = ml.top_k %x {k = 2 : i64, axis = 1 : i64} : (tensor<5x3xf32>) -> (tensor<5x2xf32>, tensor<5x2xi32>)
  func.return %v, %i : tensor<5x2xf32>, tensor<5x2xi32>
}

// -----

func.func @top_k_bool(%x: tensor<5x3xi1>) -> (tensor<5x2xi1>, tensor<5x2xi64>) {
  // expected-error @+1 {{operand #0 has element type i1, expected a numeric element type (not i1)}}
  %v, %i = ml.top_k %x {k = 2 : i64, axis = 1 : i64} : (tensor<5x3xi1>) -> (tensor<5x2xi1>, tensor<5x2xi64>)
  func.return %v, %i : tensor<5x2xi1>, tensor<5x2xi64>
}

// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p 'autodiff{wrt=1}'

// An integer argument cannot be differentiated.

// expected-error @+1 {{cannot differentiate argument #1 (tensor<4xi32>): only floating-point arguments can be}}
func.func @integer_argument(%x: tensor<4xf32>, %n: tensor<4xi32>) -> tensor<f32> {
  %s = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// expected-error @+1 {{has no argument #1 (it has 1)}}
func.func @no_such_argument(%x: tensor<4xf32>) -> tensor<f32> {
  %s = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// expected-error @+1 {{result #0 (tensor<i32>) is not a floating-point tensor}}
func.func @integer_result(%x: tensor<4xf32>, %n: tensor<4xf32>) -> tensor<i32> {
  %i = ml.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  %s = ml.reduce_sum %i {axes = array<i64: 0>, keepdims = false} : (tensor<4xi32>) -> tensor<i32>
  func.return %s : tensor<i32>
}

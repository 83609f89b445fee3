// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p bufferize

// Only level-2 ops are bufferized: an ml op means convert-ml-to-linalg did not run.
func.func @ml_left(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bufferize: no rule for 'ml.exp' on tensors}}
  %b = ml.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// -----

func.func @rank_reducing(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bufferize: rank-reducing slices are not supported}}
  %s = tensor.extract_slice %a[0, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
  func.return %s : tensor<4xf32>
}

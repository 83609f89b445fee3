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

// -----

// A donated argument holds a result of its own type only.
// expected-error @+1 {{bufferize: argument 0 (tensor<4xf32>) cannot hold result 0 (tensor<4xf64>): the types differ}}
func.func @alias_type(%a: tensor<4xf32> {ml.result_alias = 0 : i64}, %b: tensor<4xf64>) -> tensor<4xf64> {
  func.return %b : tensor<4xf64>
}

// -----

// expected-error @+1 {{bufferize: argument 0: no result 1 to alias}}
func.func @alias_range(%a: tensor<4xf32> {ml.result_alias = 1 : i64}) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{bufferize: argument 1: result 0 is aliased twice}}
func.func @alias_twice(%a: tensor<4xf32> {ml.result_alias = 0 : i64}, %b: tensor<4xf32> {ml.result_alias = 0 : i64}) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{bufferize: argument 0: ml.result_alias must be an integer}}
func.func @alias_kind(%a: tensor<4xf32> {ml.result_alias = "0"}) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

// -----

// A function with donated arguments gives its results back through them, which a call
// inside the program does not see.
func.func @donating(%a: tensor<4xf32> {ml.result_alias = 0 : i64}) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}

func.func @caller(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{bufferize: @donating has donated arguments; it can only be called from outside the program}}
  %r = func.call @donating(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

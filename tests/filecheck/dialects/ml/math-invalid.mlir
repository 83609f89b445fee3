// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// The element types the trigonometric, remainder and bitwise ops refuse.

func.func @sin_of_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 has element type i32, expected a floating-point element type}}
  %0 = ml.sin %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @bitwise_of_floats(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 has element type f32, expected an integer element type (i1 included)}}
  %0 = ml.bitwise_xor %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @not_of_floats(%x: tensor<4xf16>) {
  // expected-error @+1 {{operand #0 has element type f16, expected an integer element type (i1 included)}}
  %0 = ml.bitwise_not %x : (tensor<4xf16>) -> tensor<4xf16>
  func.return
}

// -----

func.func @shift_of_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 has element type i1, expected an integer element type (not i1)}}
  %0 = ml.shift_left %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @rem_of_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 has element type i1, expected a numeric element type (not i1)}}
  %0 = ml.rem %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @mixed_types(%x: tensor<4xi32>, %y: tensor<4xi64>) {
  // expected-error @+1 {{expects operands of one element type, got (i32, i64)}}
  %0 = ml.bitwise_and %x, %y : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  func.return
}

// -----

func.func @shapes_disagree(%x: tensor<4xi32>, %y: tensor<3xi32>) {
  // expected-error @+1 {{shapes (4, 3) are not broadcast-compatible in dimension -1}}
  %0 = ml.shift_right %x, %y : (tensor<4xi32>, tensor<3xi32>) -> tensor<4xi32>
  func.return
}

// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p autodiff

// A result that is not a scalar needs a cotangent.

// expected-error @+1 {{result #0 (tensor<4xf32>) is not a scalar: use vjp=true, which takes its cotangent as an extra argument}}
func.func @not_scalar(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ml.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// The loss depends on %x only through a comparison: there is no gradient to give.

func.func @through_a_comparison(%x: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  // expected-error @+1 {{'ml.cmp' op has no gradient (its result is tensor<4xi1>), and the value differentiated depends on the argument only through it}}
  %c = ml.cmp "gt", %x, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %f = ml.cast %c : (tensor<4xi1>) -> tensor<4xf32>
  %s = ml.reduce_sum %f {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// So does a cast to an integer type.

func.func @through_an_integer_cast(%x: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'ml.cast' op has no gradient (its result is tensor<4xi32>)}}
  %i = ml.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  %f = ml.cast %i : (tensor<4xi32>) -> tensor<4xf32>
  %s = ml.reduce_sum %f {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// An op without a rule on the gradient's path (every floating-point `ml` op has one).

func.func @no_rule(%x: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'arith.negf' op has no differentiation rule}}
  %c = arith.negf %x : tensor<4xf32>
  %s = ml.reduce_sum %c {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A while loop whose condition region passes on something other than its state (here
// the state doubled) is no for loop of its body: its gradient is refused.

func.func @while_loop_passing_on_another_value(%x: tensor<4xf32>) -> tensor<f32> {
  %limit = arith.constant dense<1.0e+01> : tensor<f32>
  // expected-error @+1 {{'scf.while' op cannot be differentiated: its condition region passes on values other than the loop's state, unchanged and in order (as ops.while_loop does); write it with ops.fori_loop or ops.scan (scf.for)}}
  %y = scf.while (%a = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %s = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %c = ml.cmp "lt", %s, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %flag = tensor.extract %c[] : tensor<i1>
    %twice = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.condition(%flag) %twice : tensor<4xf32>
  } do {
  ^bb0(%b: tensor<4xf32>):
    %d = ml.add %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  }
  %s = ml.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A static shape the rule must build is dynamic here.

func.func @dynamic_slice(%x: tensor<?xf32>) -> tensor<f32> {
  // expected-error @+1 {{'ml.slice' op cannot be differentiated: the gradient of a slice needs static dims, got (?)}}
  %y = ml.slice %x {starts = array<i64: 1>, ends = array<i64: 3>, steps = array<i64: 1>} : (tensor<?xf32>) -> tensor<2xf32>
  %s = ml.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A loop's state is stacked, one row per trip: its dims must be static.

func.func @while_loop_dynamic_state(%x: tensor<?xf32>, %w: tensor<?xf32>, %v: tensor<4xf32>) -> tensor<f32> {
  %limit = arith.constant dense<1.0e+01> : tensor<f32>
  // expected-error @+1 {{'scf.while' op cannot be differentiated: saving a loop's state of shape (?) needs static dims}}
  %y = scf.while (%a = %x) : (tensor<?xf32>) -> tensor<?xf32> {
    %c = ml.cmp "lt", %limit, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %flag = tensor.extract %c[] : tensor<i1>
    scf.condition(%flag) %a : tensor<?xf32>
  } do {
  ^bb0(%b: tensor<?xf32>):
    %d = ml.mul %b, %w : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %d : tensor<?xf32>
  }
  %r = ml.mul %y, %v : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = ml.reduce_sum %r {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A gather whose data and indices both have a dynamic dim would need a reshape with two
// inferred dims: refused at the gather.

func.func @gather_two_dynamic_dims(%d: tensor<?x5xf32>, %i: tensor<?xi64>) -> tensor<f32> {
  // expected-error @+1 {{'ml.gather' op cannot be differentiated: cannot reshape to (?x?x1): more than one dynamic dim}}
  %g = ml.gather %d, %i {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %s = ml.reduce_sum %g {axes = array<i64: 0, 1>, keepdims = false} : (tensor<?x?xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// The window rules build zero blocks of static channel and spatial dims.

func.func @conv_dynamic_width(%x: tensor<1x2x4x?xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'ml.conv2d' op cannot be differentiated: the gradient of a convolution needs static dims but the batch dim, got (1x2x4x?)}}
  %y = ml.conv2d %x, %w : (tensor<1x2x4x?xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x3x?xf32>
  %s = ml.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x3x3x?xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A while loop's state is stacked as tensors: a scalar carried along is refused.

func.func @while_loop_carrying_a_scalar(%x: tensor<4xf32>, %n: i64) -> tensor<f32> {
  // expected-error @+1 {{'scf.while' op cannot be differentiated: it carries a i64, not a tensor}}
  %y, %k = scf.while (%a = %x, %i = %n) : (tensor<4xf32>, i64) -> (tensor<4xf32>, i64) {
    %zero = arith.constant 0 : i64
    %flag = arith.cmpi sgt, %i, %zero : i64
    scf.condition(%flag) %a, %i : tensor<4xf32>, i64
  } do {
  ^bb0(%b: tensor<4xf32>, %j: i64):
    %d = ml.add %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %one = arith.constant 1 : i64
    %next = arith.subi %j, %one : i64
    scf.yield %d, %next : tensor<4xf32>, i64
  }
  %s = ml.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

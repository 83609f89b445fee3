// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p canonicalize
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p simplify-graph

// Folding explains only what it declines on constant operands; an op with a
// non-constant operand is not a candidate and gets no remark. Under simplify-graph,
// which canonicalizes many times, each op is explained once.

func.func @declined(%x: tensor<4xf32>) -> (tensor<64x64xf32>, tensor<2xi32>, tensor<2xi32>, tensor<f32>, tensor<2xui8>, tensor<4xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  // expected-remark @+1 {{not folded: constant too large to fold (4096 elements > 1024)}}
  %b = ml.broadcast_to %one : (tensor<f32>) -> tensor<64x64xf32>
  %c = arith.constant dense<[4, -8]> : tensor<2xi32>
  %z = arith.constant dense<[2, 0]> : tensor<2xi32>
  // expected-remark @+1 {{not folded: integer division by zero}}
  %q = ml.div %c, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %idx = arith.constant dense<[0, 2]> : tensor<2xi64>
  // expected-remark @+1 {{not folded: a gather index is out of range}}
  %g = ml.gather %c, %idx {axis = 0 : i64} : (tensor<2xi32>, tensor<2xi64>) -> tensor<2xi32>
  %fz = arith.constant dense<0.0> : tensor<f32>
  // expected-remark @+1 {{not folded: the result is not finite}}
  %inf = ml.div %one, %fz : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %h = arith.constant dense<[1, 2]> : tensor<2xui8>
  // expected-remark @+1 {{not folded: element type ui8 is not folded}}
  %hh = ml.add %h, %h : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %s = ml.add %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %b, %q, %g, %inf, %hh, %s : tensor<64x64xf32>, tensor<2xi32>, tensor<2xi32>, tensor<f32>, tensor<2xui8>, tensor<4xf32>
}

// -----

func.func @cast_out_of_range() -> (tensor<2xi8>, tensor<2xi32>) {
  %x = arith.constant dense<[1.5, 300.0]> : tensor<2xf32>
  // expected-remark @+1 {{not folded: a value is out of range of i8}}
  %i = ml.cast %x : (tensor<2xf32>) -> tensor<2xi8>
  %b = arith.constant dense<[2, 3]> : tensor<2xi32>
  %e = arith.constant dense<[1, -1]> : tensor<2xi32>
  // expected-remark @+1 {{not folded: negative integer exponent}}
  %p = ml.pow %b, %e : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %i, %p : tensor<2xi8>, tensor<2xi32>
}

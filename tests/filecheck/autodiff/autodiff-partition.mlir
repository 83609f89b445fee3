// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true with-value=true},autodiff-partition' \
// RUN:   | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true with-value=true},autodiff-partition' \
// RUN:   --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file --verify-diagnostics \
// RUN:   -p 'autodiff{vjp=true with-value=true},autodiff-partition'

// autodiff{vjp=true} builds the joint function (marked ml.joint), which the split
// replaces by a forward returning (value, residuals...) and a backward taking
// (residuals..., cotangent). An MLP differentiated by every argument saves the
// arguments, the hidden activation and the output of the last matmul (never recomputed).

// CHECK-LABEL: func.func @mlp(
// CHECK-LABEL: func.func @mlp_vjp_forward
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<8x16xf32>, %[[W1:[a-zA-Z0-9_]+]]: tensor<16x32xf32>, %[[W2:[a-zA-Z0-9_]+]]: tensor<32x4xf32>)
// CHECK-SAME:    -> (tensor<f32>, tensor<8x16xf32>, tensor<16x32xf32>, tensor<32x4xf32>, tensor<8x32xf32>, tensor<8x4xf32>)
// CHECK:         %[[A:.+]] = ml.tanh
// CHECK:         %[[O:.+]] = ml.matmul %[[A]], %[[W2]]
// CHECK:         %[[L:.+]] = ml.reduce_mean
// CHECK-NEXT:    func.return %[[L]], %[[X]], %[[W1]], %[[W2]], %[[A]], %[[O]]
// CHECK-LABEL: func.func @mlp_vjp_backward
// CHECK-SAME:    (%{{.+}}: tensor<8x16xf32>, %{{.+}}: tensor<16x32xf32>, %{{.+}}: tensor<32x4xf32>, %{{.+}}: tensor<8x32xf32>, %{{.+}}: tensor<8x4xf32>, %{{.+}}: tensor<f32>)
// CHECK-SAME:    -> (tensor<8x16xf32>, tensor<16x32xf32>, tensor<32x4xf32>)
// CHECK-NOT:     ml.tanh
// CHECK:         func.return
// CHECK-NOT:     func.func @mlp_vjp(

// The backward's ops keep the locations of the forward ops whose rules built them.

// LOC-LABEL:   func.func @mlp_vjp_backward
// LOC:           ml.mul {{.*}} loc("mlp.py":5:1)
// LOC:           ml.add {{.*}} loc("mlp.py":5:1)
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x4xf32>) -> tensor<f32> {
  // expected-remark @-1 {{saves argument #0 for the backward: tensor<8x16xf32> (512 bytes)}}
  // expected-remark @-2 {{saves argument #1 for the backward: tensor<16x32xf32> (2048 bytes)}}
  // expected-remark @-3 {{saves argument #2 for the backward: tensor<32x4xf32> (512 bytes)}}
  // expected-remark @-4 {{split into @mlp_vjp_forward and @mlp_vjp_backward: saves 5 values (4224 bytes), recomputes 0 ops; saving the 7 forward values the backward reads would keep 5252 bytes}}
  %h = ml.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32> loc("mlp.py":2:1)
  // expected-remark @+1 {{saved for the backward as residual #3: tensor<8x32xf32> (1024 bytes): cheaper than recomputing it from saved values}}
  %a = ml.tanh %h : (tensor<8x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{saved for the backward as residual #4: tensor<8x4xf32> (128 bytes): 'ml.matmul' is too costly to recompute}}
  %o = ml.matmul %a, %w2 : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %s = ml.mul %o, %o : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> loc("mlp.py":5:1)
  %l = ml.reduce_mean %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<8x4xf32>) -> tensor<f32> loc("mlp.py":6:1)
  func.return %l : tensor<f32>
}

// -----

// A chain of elementwise ops on a big tensor: each rule reads its op's result, so saving
// what the backward reads keeps three 64 KiB tensors; saving the input alone and
// recomputing the chain in the backward keeps one.

// CHECK-LABEL: func.func @chain_vjp_forward
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<128x128xf32>) -> (tensor<f32>, tensor<128x128xf32>)
// CHECK:         func.return %{{.+}}, %[[X]]
// CHECK-LABEL: func.func @chain_vjp_backward
// CHECK-SAME:    (%[[XB:[a-zA-Z0-9_]+]]: tensor<128x128xf32>, %{{.+}}: tensor<f32>) -> tensor<128x128xf32>
// CHECK:         %[[E:.+]] = ml.exp %[[XB]]
// CHECK:         %[[T:.+]] = ml.tanh %[[E]]
// CHECK:         ml.sigmoid %[[T]]
// CHECK:         func.return
func.func @chain(%x: tensor<128x128xf32>) -> tensor<f32> {
  // expected-remark @-1 {{saves argument #0 for the backward: tensor<128x128xf32> (65536 bytes)}}
  // expected-remark @-2 {{saves 1 values (65536 bytes), recomputes 3 ops; saving the 3 forward values the backward reads would keep 196608 bytes}}
  // expected-remark @+1 {{recomputed in the backward instead of saving tensor<128x128xf32> (65536 bytes)}}
  %e = ml.exp %x : (tensor<128x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{recomputed in the backward}}
  %t = ml.tanh %e : (tensor<128x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{recomputed in the backward}}
  %s = ml.sigmoid %t : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = ml.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<128x128xf32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// A product after a matmul reads the matmul's result: recomputing that from the
// matmul's operands would keep fewer bytes (two 4 KiB operands for a 64 KiB product),
// but a matmul is never recomputed, so its result is saved and the elementwise ops
// after it are recomputed from it.

// CHECK-LABEL: func.func @after_matmul_vjp_forward
// CHECK-SAME:    -> (tensor<f32>, tensor<128x8xf32>, tensor<8x128xf32>, tensor<128x128xf32>)
// CHECK:         %[[H:.+]] = ml.matmul
// CHECK:         func.return %{{.+}}, %{{.+}}, %{{.+}}, %[[H]]
// CHECK-LABEL: func.func @after_matmul_vjp_backward
// CHECK-SAME:    (%{{.+}}: tensor<128x8xf32>, %{{.+}}: tensor<8x128xf32>, %[[HB:[a-zA-Z0-9_]+]]: tensor<128x128xf32>, %{{.+}}: tensor<f32>)
// CHECK:         %[[S:.+]] = ml.mul %[[HB]], %[[HB]]
// CHECK-NEXT:    ml.tanh %[[S]]
// CHECK-NOT:     ml.matmul %{{.+}} : (tensor<128x8xf32>, tensor<8x128xf32>)
// CHECK:         func.return
func.func @after_matmul(%a: tensor<128x8xf32>, %b: tensor<8x128xf32>) -> tensor<f32> {
  // expected-remark @-1 {{saves argument #0}}
  // expected-remark @-2 {{saves argument #1}}
  // expected-remark @-3 {{saves 3 values (73728 bytes), recomputes 2 ops}}
  // expected-remark @+1 {{saved for the backward as residual #2: tensor<128x128xf32> (65536 bytes): 'ml.matmul' is too costly to recompute}}
  %h = ml.matmul %a, %b : (tensor<128x8xf32>, tensor<8x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{recomputed in the backward}}
  %s = ml.mul %h, %h : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{recomputed in the backward}}
  %t = ml.tanh %s : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = ml.reduce_sum %t {axes = array<i64: 0, 1>, keepdims = false} : (tensor<128x128xf32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// A loss the backward needs nothing of (a sum): nothing is saved.

// CHECK-LABEL: func.func @linear_vjp_forward
// CHECK-SAME:    (%{{.+}}: tensor<3x5xf32>) -> tensor<f32>
// CHECK-LABEL: func.func @linear_vjp_backward
// CHECK-SAME:    (%{{.+}}: tensor<f32>) -> tensor<3x5xf32>
// CHECK:         ml.broadcast_to
func.func @linear(%x: tensor<3x5xf32>) -> tensor<f32> {
  // expected-remark @-1 {{saves 0 values (0 bytes), recomputes 0 ops; saving the 0 forward values the backward reads would keep 0 bytes}}
  %r = ml.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// A loop's taping copy (its states stacked for the reverse loop) is the backward's own:
// it runs there, from the loop's inputs, when they are smaller than the stack (two
// tensor<2xf32> against a tensor<3x2xf32>). The forward runs the value's loop only.

// CHECK-LABEL: func.func @loop_vjp_forward
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<2xf32>)
// CHECK-SAME:    -> (tensor<f32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:         scf.for
// CHECK-NOT:     scf.for
// CHECK:         func.return %{{.+}}, %[[X]], %[[W]]
// CHECK-LABEL: func.func @loop_vjp_backward
// CHECK:         scf.for {{.*}} -> (tensor<2xf32>, tensor<3x2xf32>)
// CHECK:         scf.for
// CHECK:         func.return
func.func @loop(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<f32> {
  // expected-remark @-1 {{saves argument #0}}
  // expected-remark @-2 {{saves argument #1}}
  // expected-remark @-3 {{saves 2 values (16 bytes), recomputes 3 ops; saving the 6 forward values the backward reads would keep 40 bytes}}
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %one = arith.constant 1 : index
  %h = scf.for %i = %lb to %ub step %one iter_args(%a = %x) -> (tensor<2xf32>) {
    %m = ml.mul %a, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t = ml.tanh %m : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %t : tensor<2xf32>
  }
  %s = ml.reduce_sum %h {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

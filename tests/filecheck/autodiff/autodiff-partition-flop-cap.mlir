// RUN: mlc-opt %s --split-input-file -p autodiff-partition | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autodiff-partition{max-recompute=0.4}' \
// RUN:   | filecheck %s --check-prefix=CAP
// RUN: mlc-opt %s --split-input-file --verify-diagnostics \
// RUN:   -p 'autodiff-partition{max-recompute=0.4}'
// RUN: not mlc-opt %s -p 'autodiff-partition{max-recompute=-1}' 2>&1 \
// RUN:   | filecheck %s --check-prefix=BAD

// The FLOP cap on recomputation. Saving x (20 bytes) and recomputing the whole forward
// (mul, exp, tanh: 15 FLOPs) is the minimum cut, and the default cap (1: the forward
// once more) allows it. With max-recompute=0.4 the backward may recompute 6 FLOPs: the
// mul is refused, the exp's result is saved instead (20 bytes too), the tanh recomputed.

// CHECK-LABEL: func.func @joint_forward
// CHECK:         func.return %{{.+}}, %[[X:[a-zA-Z0-9_]+]] :
// CHECK-LABEL: func.func @joint_backward
// CHECK-SAME:    (%[[XB:[a-zA-Z0-9_]+]]: tensor<5xf32>, %{{.+}}: tensor<5xf32>)
// CHECK-NEXT:    ml.mul %[[XB]], %[[XB]]
// CHECK-NEXT:    ml.exp
// CHECK-NEXT:    ml.tanh

// CAP-LABEL: func.func @joint_forward
// CAP:         %[[B:.+]] = ml.exp
// CAP:         func.return %{{.+}}, %[[B]] :
// CAP-LABEL: func.func @joint_backward
// CAP-SAME:    (%[[BB:[a-zA-Z0-9_]+]]: tensor<5xf32>, %{{.+}}: tensor<5xf32>)
// CAP-NOT:     ml.exp
// CAP-NEXT:    ml.tanh %[[BB]]

// BAD: error: 'builtin.module' op max-recompute must be >= 0, got -1.0

// expected-remark @+1 {{split into @joint_forward and @joint_backward: saves 1 values (20 bytes), recomputes 1 ops; saving the 2 forward values the backward reads would keep 40 bytes}}
func.func @joint(%x: tensor<5xf32>, %ct: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>)
    attributes {ml.joint = {cotangents = 1 : i64, values = 1 : i64}} {
  // expected-remark @+1 {{not recomputed in the backward: recomputing it would bring the backward's recomputation to 15 FLOPs, over the cap of 6 (0.4 of the forward's 15)}}
  %a = ml.mul %x, %x : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  // expected-remark @+1 {{saved for the backward as residual #0: tensor<5xf32> (20 bytes)}}
  %b = ml.exp %a : (tensor<5xf32>) -> tensor<5xf32>
  // expected-remark @+1 {{recomputed in the backward instead of saving tensor<5xf32> (20 bytes)}}
  %c = ml.tanh %b : (tensor<5xf32>) -> tensor<5xf32>
  %s = ml.mul %ct, %c : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %dx = ml.mul %s, %b : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  func.return %c, %dx : tensor<5xf32>, tensor<5xf32>
}

// -----

// One exp: recomputing it is all of the forward's FLOPs, over a cap of 0.4; its result
// is saved instead of the argument, and the remark on it says why.

// CAP-LABEL: func.func @single_backward
// CAP-NOT:     ml.exp

// expected-remark @+1 {{split into @single_forward and @single_backward: saves 1 values (20 bytes), recomputes 0 ops; saving the 1 forward values the backward reads would keep 20 bytes}}
func.func @single(%x: tensor<5xf32>, %ct: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>)
    attributes {ml.joint = {cotangents = 1 : i64, values = 1 : i64}} {
  // expected-remark @+1 {{saved for the backward as residual #0: tensor<5xf32> (20 bytes): recomputing it would bring the backward's recomputation to 5 FLOPs, over the cap of 2 (0.4 of the forward's 5)}}
  %y = ml.exp %x : (tensor<5xf32>) -> tensor<5xf32>
  %dx = ml.mul %ct, %y : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  func.return %y, %dx : tensor<5xf32>, tensor<5xf32>
}

// RUN: mlc-opt %s --split-input-file -p autodiff-partition | filecheck %s
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p autodiff-partition
// RUN: not mlc-opt %s --split-input-file -p 'autodiff-partition{function=plain}' 2>&1 \
// RUN:   | filecheck %s --check-prefix=UNMARKED

// The pass alone, on a joint function written by hand: y = exp(x), dx = ct * y. Saving
// x or y keeps the same bytes; the split prefers the argument (its caller holds it) and
// recomputes the exp. Unmarked functions are left alone.

// CHECK-LABEL: func.func @plain
// CHECK-LABEL: func.func @joint_forward
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>)
// CHECK-NEXT:    %[[Y:.+]] = ml.exp %[[X]]
// CHECK-NEXT:    func.return %[[Y]], %[[X]]
// CHECK-LABEL: func.func @joint_backward
// CHECK-SAME:    (%[[XB:[a-zA-Z0-9_]+]]: tensor<5xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<5xf32>) -> tensor<5xf32>
// CHECK-NEXT:    %[[YB:.+]] = ml.exp %[[XB]]
// CHECK-NEXT:    %[[DX:.+]] = ml.mul %[[CT]], %[[YB]]
// CHECK-NEXT:    func.return %[[DX]]

// UNMARKED: error: 'func.func' op is not a joint forward/backward function (no ml.joint attribute): build one with autodiff{vjp=true}
func.func @plain(%x: tensor<5xf32>) -> tensor<5xf32> {
  func.return %x : tensor<5xf32>
}

// expected-remark @+2 {{saves argument #0 for the backward: tensor<5xf32> (20 bytes)}}
// expected-remark @+1 {{split into @joint_forward and @joint_backward: saves 1 values (20 bytes), recomputes 1 ops; saving the 1 forward values the backward reads would keep 20 bytes}}
func.func @joint(%x: tensor<5xf32>, %ct: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>)
    attributes {ml.joint = {cotangents = 1 : i64, values = 1 : i64}} {
  // expected-remark @+1 {{recomputed in the backward instead of saving tensor<5xf32> (20 bytes)}}
  %y = ml.exp %x : (tensor<5xf32>) -> tensor<5xf32>
  %dx = ml.mul %ct, %y : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  func.return %y, %dx : tensor<5xf32>, tensor<5xf32>
}

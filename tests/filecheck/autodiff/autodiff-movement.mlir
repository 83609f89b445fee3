// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A transpose's cotangent goes back through the inverse permutation, a reshape's to
// the operand's shape, a broadcast's is summed over the broadcast dims.

// CHECK-LABEL: func.func @transpose_reshape_broadcast_vjp
// CHECK-SAME:    (%[[X:.+]]: tensor<3x1xf32>, %[[CT:.+]]: tensor<2x1x3xf32>)
// CHECK:         %[[T:.+]] = ml.transpose %[[CT]] {perm = array<i64: 1, 2, 0>} : (tensor<2x1x3xf32>) -> tensor<1x3x2xf32>
// CHECK-NEXT:    %[[R:.+]] = ml.reshape %[[T]] : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %[[S:.+]] = ml.reduce_sum %[[R]] {axes = array<i64: 1>, keepdims = true} : (tensor<3x2xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    func.return %[[S]]

// LOC-LABEL:   func.func @transpose_reshape_broadcast_vjp
// LOC:           ml.transpose %cotangent {{.*}} loc("model.py":3:1)
// LOC-NEXT:      ml.reshape {{.*}} loc("model.py":2:1)
// LOC-NEXT:      ml.reduce_sum {{.*}} loc("model.py":1:1)
func.func @transpose_reshape_broadcast(%x: tensor<3x1xf32>) -> tensor<2x1x3xf32> {
  %b = ml.broadcast_to %x : (tensor<3x1xf32>) -> tensor<3x2xf32> loc("model.py":1:1)
  %r = ml.reshape %b : (tensor<3x2xf32>) -> tensor<1x3x2xf32> loc("model.py":2:1)
  %t = ml.transpose %r {perm = array<i64: 2, 0, 1>} : (tensor<1x3x2xf32>) -> tensor<2x1x3xf32> loc("model.py":3:1)
  func.return %t : tensor<2x1x3xf32>
}

// -----

// Each concatenated operand gets its slice of the cotangent.

// CHECK-LABEL: func.func @concat_vjp
// CHECK-SAME:    (%{{.+}}: tensor<2x3xf32>, %{{.+}}: tensor<2x1xf32>, %[[CT:.+]]: tensor<2x4xf32>)
// CHECK:         %[[A:.+]] = ml.slice %[[CT]] {starts = array<i64: 0, 0>, ends = array<i64: 9223372036854775807, 3>, steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[B:.+]] = ml.slice %[[CT]] {starts = array<i64: 0, 3>, ends = array<i64: 9223372036854775807, 4>, steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %c = ml.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}

// -----

// A unit-step slice's cotangent is padded back with zero blocks; a strided dim's is
// spread by a one-hot matmul.

// CHECK-LABEL: func.func @slice_vjp
// CHECK-SAME:    (%{{.+}}: tensor<5x4xf32>, %[[CT:.+]]: tensor<2x2xf32>)
// CHECK:         %[[BEFORE:.+]] = arith.constant dense<0.000000e+00> : tensor<1x2xf32>
// CHECK-NEXT:    %[[AFTER:.+]] = arith.constant dense<0.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    %[[ROWS:.+]] = ml.concat %[[BEFORE]], %[[CT]], %[[AFTER]] {axis = 0 : i64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<5x2xf32>
// CHECK-NEXT:    %[[ONEHOT:.+]] = arith.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<2x4xf32>
// CHECK-NEXT:    %[[SPREAD:.+]] = ml.matmul %[[ROWS]], %[[ONEHOT]] : (tensor<5x2xf32>, tensor<2x4xf32>) -> tensor<5x4xf32>
// CHECK-NEXT:    func.return %[[SPREAD]]
func.func @slice(%x: tensor<5x4xf32>) -> tensor<2x2xf32> {
  %s = ml.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 3, 4>, steps = array<i64: 1, 2>} : (tensor<5x4xf32>) -> tensor<2x2xf32>
  func.return %s : tensor<2x2xf32>
}

// -----

// A gather's cotangent is a scatter-add: the cotangent rows added into zeros at the
// indices; along axis 0 (an embedding) one ml.scatter_nd of whole rows.

// CHECK-LABEL: func.func @gather_vjp
// CHECK-SAME:    (%{{.+}}: tensor<10x4xf32>, %[[IDS:.+]]: tensor<3xi64>, %[[CT:.+]]: tensor<3x4xf32>) -> tensor<10x4xf32>
// CHECK:         %[[ROW:.+]] = ml.reshape %[[IDS]] : (tensor<3xi64>) -> tensor<3x1xi64>
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<10x4xf32>
// CHECK-NEXT:    %[[SUM:.+]] = ml.scatter_nd %[[ZERO]], %[[ROW]], %[[CT]] {reduction = "add"}
// CHECK-NEXT:    func.return %[[SUM]]
func.func @gather(%table: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %g = ml.gather %table, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return %g : tensor<3x4xf32>
}

// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A broadcast operand's cotangent is summed over the dims broadcasting added (dropped)
// and stretched (kept as 1); each backward op is at its forward op's location.

// CHECK-LABEL: func.func @add_broadcast_vjp
// CHECK-SAME:    (%[[A:.+]]: tensor<2x3x4xf32>, %[[B:.+]]: tensor<3x1xf32>, %[[CT:.+]]: tensor<2x3x4xf32>)
// CHECK-SAME:    -> (tensor<2x3x4xf32>, tensor<3x1xf32>)
// CHECK:         %[[LEAD:.+]] = ml.reduce_sum %[[CT]] {axes = array<i64: 0>, keepdims = false}
// CHECK-NEXT:    %[[GB:.+]] = ml.reduce_sum %[[LEAD]] {axes = array<i64: 1>, keepdims = true}
// CHECK-SAME:      (tensor<3x4xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    func.return %[[CT]], %[[GB]]

// LOC-LABEL:   func.func @add_broadcast_vjp
// LOC:           ml.reduce_sum {{.*}} loc("model.py":3:5)
// LOC-NEXT:      ml.reduce_sum {{.*}} loc("model.py":3:5)
func.func @add_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = ml.add %a, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32> loc("model.py":3:5)
  func.return %y : tensor<2x3x4xf32>
}

// -----

// A product sends each side the cotangent times the other side; a value used twice
// (%x in the tanh and the product) sums its two cotangents.

// CHECK-LABEL: func.func @mul_tanh_vjp
// CHECK-SAME:    (%[[X:.+]]: tensor<4xf32>, %[[CT:.+]]: tensor<4xf32>)
// CHECK:         %[[GT:.+]] = ml.mul %[[CT]], %[[X]]
// CHECK-NEXT:    %[[GX1:.+]] = ml.mul %[[CT]], %[[T:.+]] :
// CHECK:         %[[SQ:.+]] = ml.mul %[[T]], %[[T]]
// CHECK-NEXT:    %[[D:.+]] = ml.sub %{{.+}}, %[[SQ]]
// CHECK-NEXT:    %[[GX2:.+]] = ml.mul %[[GT]], %[[D]]
// CHECK-NEXT:    %[[GX:.+]] = ml.add %[[GX1]], %[[GX2]]
// CHECK-NEXT:    func.return %[[GX]]

// LOC-LABEL:   func.func @mul_tanh_vjp
// LOC:           ml.mul {{.*}} loc("model.py":2:1)
// LOC-NEXT:      ml.mul {{.*}} loc("model.py":2:1)
// LOC:           ml.sub {{.*}} loc("model.py":1:1)
// LOC-NEXT:      ml.mul {{.*}} loc("model.py":1:1)
// LOC-NEXT:      ml.add {{.*}} loc("model.py":1:1)
func.func @mul_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = ml.tanh %x : (tensor<4xf32>) -> tensor<4xf32> loc("model.py":1:1)
  %y = ml.mul %t, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("model.py":2:1)
  func.return %y : tensor<4xf32>
}

// -----

// relu passes the cotangent where its input is positive; select sends it to the side
// it chose and nothing to its condition; exp reuses its result.

// CHECK-LABEL: func.func @relu_select_exp_vjp
// CHECK-SAME:    (%[[X:.+]]: tensor<4xf32>, %[[C:.+]]: tensor<4xi1>, %[[CT:.+]]: tensor<4xf32>)
// CHECK:         %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[GA:.+]] = ml.select %[[C]], %[[CT]], %[[ZERO]]
// CHECK-NEXT:    %[[GR:.+]] = ml.select %[[C]], %[[ZERO]], %[[CT]]
// CHECK-NEXT:    %[[GE:.+]] = ml.mul %[[GR]], %[[E:.+]] :
// CHECK-NEXT:    %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[POS:.+]] = ml.cmp "gt", %[[X]], %[[Z]]
// CHECK-NEXT:    %[[GX:.+]] = ml.select %[[POS]], %[[GE]], %[[Z]]
// CHECK-NEXT:    %[[SUM:.+]] = ml.add %[[GA]], %[[GX]]
// CHECK-NEXT:    func.return %[[SUM]]
func.func @relu_select_exp(%x: tensor<4xf32>, %c: tensor<4xi1>) -> tensor<4xf32> {
  %r = ml.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %e = ml.exp %r : (tensor<4xf32>) -> tensor<4xf32>
  %y = ml.select %c, %x, %e : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

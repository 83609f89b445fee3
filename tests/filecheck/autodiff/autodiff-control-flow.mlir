// RUN: mlc-opt %s --split-input-file -p autodiff | filecheck %s
// RUN: mlc-opt %s --split-input-file -p autodiff --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A branch's gradient is an scf.if on the same condition: each branch recomputes its
// forward ops and runs their VJP (the else branch passes the cotangent through).

// CHECK-LABEL: func.func @branch_grad
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>, %[[P:[a-zA-Z0-9_]+]]: i1)
// CHECK:         %[[CT:.+]] = ml.broadcast_to
// CHECK-NEXT:    %[[G:.+]] = scf.if %[[P]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[E:.+]] = ml.exp %[[X]]
// CHECK-NEXT:      %[[D:.+]] = ml.mul %[[CT]], %[[E]]
// CHECK-NEXT:      scf.yield %[[D]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[CT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[G]]

// LOC-LABEL:   func.func @branch_grad
// LOC:           ml.mul {{.*}} loc("m.py":3:5)
// LOC:           } loc("m.py":2:3)
func.func @branch(%x: tensor<4xf32>, %p: i1) -> tensor<f32> {
  %y = scf.if %p -> (tensor<4xf32>) {
    %e = ml.exp %x : (tensor<4xf32>) -> tensor<4xf32> loc("m.py":3:5)
    scf.yield %e : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  } loc("m.py":2:3)
  %s = ml.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A loop's gradient: a taping copy of the loop stacks each iteration's carried value
// (3 trips: a 3x2 stack), then a reverse loop reads row 2 - j, recomputes the body
// and runs its VJP, carrying the state's cotangent and summing the weight's.

// CHECK-LABEL: func.func @loop_grad
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<2xf32>)
// CHECK:         %[[EMPTY:.+]] = ml.broadcast_to %{{.+}} : (tensor<f32>) -> tensor<3x2xf32>
// CHECK:         %{{.+}}, %[[STACK:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[X]], %[[ST:.+]] = %[[EMPTY]])
// CHECK:           tensor.insert_slice %{{.+}} into %[[ST]][%[[I]], 0] [1, 2] [1, 1]
// CHECK:         %[[GX:.+]], %[[GW:.+]] = scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[CA:.+]] = %{{.+}}, %[[ACC:.+]] = %{{.+}})
// CHECK:           %[[ROW:.+]] = arith.subi %{{.+}}, %[[J]] : index
// CHECK:           tensor.extract_slice %[[STACK]][%[[ROW]], 0] [1, 2] [1, 1]
// CHECK:           ml.tanh
// CHECK:           %[[SUM:.+]] = ml.add %[[ACC]], %{{.+}}
// CHECK:           scf.yield %{{.+}}, %[[SUM]]
// CHECK:         func.return %[[GX]], %[[GW]]

// LOC-LABEL:   func.func @loop_grad
// LOC:           tensor.insert_slice {{.*}} loc("m.py":7:3)
// LOC:           ml.tanh {{.*}} loc("m.py":8:5)
func.func @loop(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<f32> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %one = arith.constant 1 : index
  %h = scf.for %i = %lb to %ub step %one iter_args(%a = %x) -> (tensor<2xf32>) {
    %m = ml.mul %a, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t = ml.tanh %m : (tensor<2xf32>) -> tensor<2xf32> loc("m.py":8:5)
    scf.yield %t : tensor<2xf32>
  } loc("m.py":7:3)
  %s = ml.reduce_sum %h {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// A while loop's gradient: a copy of the loop that also counts its trips (an index
// carried along) records the trip count T; the loop is then a for loop of its body
// over 0..T, taped into a stack of T rows (a run-time size) and walked backwards.

// CHECK-LABEL: func.func @while_loop_grad
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK:         %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %{{.+}}, %[[T:.+]] = scf.while (%[[A:.+]] = %[[X]], %[[K:.+]] = %[[ZERO]]) : (tensor<4xf32>, index) -> (tensor<4xf32>, index) {
// CHECK:           scf.condition(%{{.+}}) %[[A]], %[[K]] : tensor<4xf32>, index
// CHECK:         ^bb0(%[[B:.+]]: tensor<4xf32>, %[[K2:.+]]: index):
// CHECK-NEXT:      %[[D:.+]] = ml.mul %[[B]], %[[W]]
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[NEXT:.+]] = arith.addi %[[K2]], %[[ONE]] : index
// CHECK-NEXT:      scf.yield %[[D]], %[[NEXT]] : tensor<4xf32>, index
// CHECK:         %[[ROWS:.+]] = arith.maxsi
// CHECK:         %[[EMPTY:.+]] = ml.broadcast_to %{{.+}}, %{{.+}} : (tensor<f32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK-NEXT:    %{{.+}}, %[[STACK:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[T]] step %{{.+}} iter_args(%{{.+}} = %[[X]], %[[ST:.+]] = %[[EMPTY]])
// CHECK:           tensor.insert_slice %{{.+}} into %[[ST]][%[[I]], 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
// CHECK:         %[[GX:.+]], %[[GW:.+]] = scf.for %[[J:.+]] = %{{.+}} to %[[ROWS]] step
// CHECK:           tensor.extract_slice %[[STACK]]
// CHECK:         func.return %[[GX]], %[[GW]]

// LOC-LABEL:   func.func @while_loop_grad
// LOC:           arith.addi {{.*}} loc("grow.py":5:9)
// LOC:           tensor.insert_slice {{.*}} loc("grow.py":5:9)
// LOC:           ml.mul {{.*}} loc("grow.py":7:11)
func.func @while_loop(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %limit = arith.constant dense<1.0e+01> : tensor<f32>
  %y = scf.while (%a = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %s = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    %c = ml.cmp "lt", %s, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %flag = tensor.extract %c[] : tensor<i1>
    scf.condition(%flag) %a : tensor<4xf32>
  } do {
  ^bb0(%b: tensor<4xf32>):
    %d = ml.mul %b, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("grow.py":7:11)
    scf.yield %d : tensor<4xf32>
  } loc("grow.py":5:9)
  %s = ml.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}

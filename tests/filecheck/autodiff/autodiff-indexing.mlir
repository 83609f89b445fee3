// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// top_k's values scatter-add back to the positions its indices name.

// CHECK-LABEL: func.func @top_k_vjp
// CHECK-SAME:    (%{{.+}}: tensor<3x5xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<3x2xf32>)
// CHECK:         %[[V:.+]], %[[I:.+]] = ml.top_k
// CHECK:         %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<3x5xf32>
// CHECK-NEXT:    %[[G:.+]] = ml.scatter_elements %[[Z]], %[[I]], %[[CT]] {axis = 1 : i64, reduction = "add"}
// CHECK-NEXT:    func.return %[[G]]

// LOC-LABEL:   func.func @top_k_vjp
// LOC:           ml.scatter_elements {{.*}} loc("moe.py":12:5)
func.func @top_k(%x: tensor<3x5xf32>) -> tensor<3x2xf32> {
  %v, %i = ml.top_k %x {k = 2 : i64, axis = 1 : i64} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) loc("moe.py":12:5)
  func.return %v : tensor<3x2xf32>
}

// -----

// A cumulative sum's cotangent is the cumulative sum the other way (exclusive stays).

// CHECK-LABEL: func.func @cumsum_vjp
// CHECK-SAME:    (%{{.+}}: tensor<4x?xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<4x?xf32>)
// CHECK:         %[[G:.+]] = ml.cumsum %[[CT]] {axis = 1 : i64, exclusive = true} : (tensor<4x?xf32>) -> tensor<4x?xf32>
// CHECK-NEXT:    func.return %[[G]]
func.func @cumsum(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %y = ml.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  func.return %y : tensor<4x?xf32>
}

// -----

// gather_elements scatters the cotangent into zeros at its indices (dynamic dims: the
// zeros take the data's run-time shape).

// CHECK-LABEL: func.func @gather_elements_vjp
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<?x5xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<?x2xi64>, %[[CT:[a-zA-Z0-9_]+]]: tensor<?x2xf32>)
// CHECK:         %[[Z:.+]] = ml.broadcast_to
// CHECK-NEXT:    %[[G:.+]] = ml.scatter_elements %[[Z]], %[[I]], %[[CT]] {axis = 1 : i64, reduction = "add"}
// CHECK-NEXT:    func.return %[[G]]
func.func @gather_elements(%d: tensor<?x5xf32>, %i: tensor<?x2xi64>) -> tensor<?x2xf32> {
  %g = ml.gather_elements %d, %i {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  func.return %g : tensor<?x2xf32>
}

// -----

// A math op's derivative at its operand: sin's is cos.

// CHECK-LABEL: func.func @sin_vjp
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<3xf32>)
// CHECK:         %[[C:.+]] = ml.cos %[[X]]
// CHECK-NEXT:    %[[G:.+]] = ml.mul %[[CT]], %[[C]]
// CHECK-NEXT:    func.return %[[G]]
func.func @sin(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = ml.sin %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}

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

// -----

// A scatter-max splits each result's cotangent between the elements that tie for it,
// data's and the updates' (torch's scatter_reduce "amax"); dynamic rows.

// CHECK-LABEL: func.func @scatter_max_vjp
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<?x5xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<?x2xi64>, %[[U:[a-zA-Z0-9_]+]]: tensor<?x2xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<?x5xf32>)
// CHECK:         %[[S:.+]] = ml.scatter_elements %[[D]], %[[I]], %[[U]] {axis = 1 : i64, reduction = "max"}
// CHECK-NEXT:    %[[DW:.+]] = ml.cmp "eq", %[[D]], %[[S]]
// CHECK-NEXT:    %[[DF:.+]] = ml.cast %[[DW]]
// CHECK-NEXT:    %[[SU:.+]] = ml.gather_elements %[[S]], %[[I]] {axis = 1 : i64}
// CHECK-NEXT:    %[[UW:.+]] = ml.cmp "eq", %[[U]], %[[SU]]
// CHECK-NEXT:    %[[UF:.+]] = ml.cast %[[UW]]
// CHECK-NEXT:    %[[N:.+]] = ml.scatter_elements %[[DF]], %[[I]], %[[UF]] {axis = 1 : i64, reduction = "add"}
// CHECK-NEXT:    %[[SHARE:.+]] = ml.div %[[CT]], %[[N]]
// CHECK-NEXT:    %[[GD:.+]] = ml.mul %[[DF]], %[[SHARE]]
// CHECK-NEXT:    %[[GS:.+]] = ml.gather_elements %[[SHARE]], %[[I]] {axis = 1 : i64}
// CHECK-NEXT:    %[[GU:.+]] = ml.mul %[[UF]], %[[GS]]
// CHECK-NEXT:    func.return %[[GD]], %[[GU]]

// LOC-LABEL:   func.func @scatter_max_vjp
// LOC-COUNT-11:  loc("emb.py":4:9)
// LOC:           func.return
func.func @scatter_max(%d: tensor<?x5xf32>, %i: tensor<?x2xi64>, %u: tensor<?x2xf32>) -> tensor<?x5xf32> {
  %s = ml.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "max"} : (tensor<?x5xf32>, tensor<?x2xi64>, tensor<?x2xf32>) -> tensor<?x5xf32> loc("emb.py":4:9)
  func.return %s : tensor<?x5xf32>
}

// -----

// A scatter-mul: data gets the product of the updates written there (scattered into
// ones, no division); an update the result over itself, or, the only zero at its
// place, the scatter again with it replaced by one.

// CHECK-LABEL: func.func @scatter_mul_vjp
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<3x4xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<2x1xi64>, %[[U:[a-zA-Z0-9_]+]]: tensor<2x4xf32>, %[[CT:[a-zA-Z0-9_]+]]: tensor<3x4xf32>)
// CHECK:         %[[S:.+]] = ml.scatter_nd %[[D]], %[[I]], %[[U]] {reduction = "mul"}
// CHECK:         %[[P:.+]] = ml.scatter_nd %{{.+}}, %[[I]], %[[U]] {reduction = "mul"}
// CHECK-NEXT:    %[[GD:.+]] = ml.mul %[[CT]], %[[P]]
// CHECK:         %[[Z:.+]] = ml.cmp "eq", %[[U]], %{{.+}}
// CHECK:         %[[LONE:.+]] = ml.cmp "eq", %{{.+}}, %[[ONE:.+]] :
// CHECK-NEXT:    %[[MASKED:.+]] = ml.select %[[LONE]], %[[ONE]], %[[U]]
// CHECK-NEXT:    %[[WITHOUT:.+]] = ml.scatter_nd %[[D]], %[[I]], %[[MASKED]] {reduction = "mul"}
// CHECK:         ml.div
// CHECK:         %[[GU:.+]] = ml.select %[[LONE]],
// CHECK-NEXT:    func.return %[[GD]], %[[GU]]
func.func @scatter_mul(%d: tensor<3x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %s = ml.scatter_nd %d, %i, %u {reduction = "mul"} : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  func.return %s : tensor<3x4xf32>
}

// -----

// A gather from a dynamic batch of ids: the cotangent's rows and the ids reshaped with
// the id count inferred (-1), then a scatter_nd add of whole rows into zeros of the
// table's static shape.

// CHECK-LABEL: func.func @embed_vjp
// CHECK-SAME:    (%[[T:[a-zA-Z0-9_]+]]: tensor<6x3xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<?x4xi64>, %[[CT:[a-zA-Z0-9_]+]]: tensor<?x4x3xf32>)
// CHECK:         %[[U:.+]] = ml.reshape %[[CT]], %{{.+}} : (tensor<?x4x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
// CHECK:         %[[IR:.+]] = ml.reshape %[[I]], %{{.+}} : (tensor<?x4xi64>, tensor<2xi64>) -> tensor<?x1xi64>
// CHECK-NEXT:    %[[Z:.+]] = arith.constant dense<0.000000e+00> : tensor<6x3xf32>
// CHECK-NEXT:    %[[S:.+]] = ml.scatter_nd %[[Z]], %[[IR]], %[[U]] {reduction = "add"}
// CHECK-NEXT:    func.return %[[S]]
func.func @embed(%t: tensor<6x3xf32>, %i: tensor<?x4xi64>) -> tensor<?x4x3xf32> {
  %g = ml.gather %t, %i {axis = 0 : i64} : (tensor<6x3xf32>, tensor<?x4xi64>) -> tensor<?x4x3xf32>
  func.return %g : tensor<?x4x3xf32>
}

// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' | filecheck %s

// A log-softmax written out: the max is subtracted for stability only, so no cotangent
// flows into it (no comparison with the max, no count of ties): dx = ct - e * sum(ct) / z.

// CHECK-LABEL: func.func @log_softmax_vjp
// CHECK-SAME:    (%[[X:.+]]: tensor<4x10xf32>, %[[CT:.+]]: tensor<4x10xf32>)
// CHECK:         %[[E:.+]] = ml.exp
// CHECK:         %[[Z:.+]] = ml.reduce_sum %[[E]]
// CHECK:         %[[N:.+]] = ml.neg %[[CT]]
// CHECK-NEXT:    %[[S:.+]] = ml.reduce_sum %[[N]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:    %[[Q:.+]] = ml.div %[[S]], %[[Z]]
// CHECK-NEXT:    %[[B:.+]] = ml.broadcast_to %[[Q]]
// CHECK-NEXT:    %[[P:.+]] = ml.mul %[[B]], %[[E]]
// CHECK-NEXT:    %[[DX:.+]] = ml.add %[[CT]], %[[P]]
// CHECK-NEXT:    func.return %[[DX]]
// CHECK-NOT:     ml.cmp
func.func @log_softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = ml.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %s = ml.sub %x, %m : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  %e = ml.exp %s : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %z = ml.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %l = ml.log %z : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = ml.sub %s, %l : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  func.return %y : tensor<4x10xf32>
}

// -----

// A softmax written out (a negative axis, a min instead of a max): the same.

// CHECK-LABEL: func.func @softmax_vjp
// CHECK-NOT:     ml.cmp
// CHECK:         func.return
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = ml.reduce_min %x {axes = array<i64: -1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %s = ml.sub %x, %m : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  %e = ml.exp %s : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %z = ml.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %y = ml.div %e, %z : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  func.return %y : tensor<4x10xf32>
}

// -----

// The difference itself is returned: it depends on the max, whose rule runs.

// CHECK-LABEL: func.func @shifted_returned_vjp
// CHECK:         ml.cmp "eq", %{{.+}}, %{{.+}} : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xi1>
func.func @shifted_returned(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = ml.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %s = ml.sub %x, %m : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  func.return %s : tensor<4x10xf32>
}

// -----

// The exponentials are summed across rows (axis 0), each with its own shift: the
// result depends on the max.

// CHECK-LABEL: func.func @sum_across_rows_vjp
// CHECK:         ml.cmp "eq"
func.func @sum_across_rows(%x: tensor<4x10xf32>) -> tensor<1x10xf32> {
  %m = ml.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %s = ml.sub %x, %m : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  %e = ml.exp %s : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %z = ml.reduce_sum %e {axes = array<i64: 0>, keepdims = true} : (tensor<4x10xf32>) -> tensor<1x10xf32>
  %l = ml.log %z : (tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return %l : tensor<1x10xf32>
}

// -----

// The max is used besides the difference (added back): its rule runs.

// CHECK-LABEL: func.func @max_used_again_vjp
// CHECK:         ml.cmp "eq"
func.func @max_used_again(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = ml.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %s = ml.sub %x, %m : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  %e = ml.exp %s : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %z = ml.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %l = ml.log %z : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %t = ml.add %l, %m : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = ml.sub %x, %t : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  func.return %y : tensor<4x10xf32>
}

// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autodiff{vjp=true}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A sum's cotangent is reshaped to the kept dims and broadcast back; a matmul sends
// da = dc @ b^T and db = a^T @ dc.

// CHECK-LABEL: func.func @matmul_sum_vjp
// CHECK-SAME:    (%[[A:.+]]: tensor<3x4xf32>, %[[B:.+]]: tensor<4x5xf32>, %[[CT:.+]]: tensor<f32>) -> (tensor<3x4xf32>, tensor<4x5xf32>)
// CHECK:         %[[KEPT:.+]] = ml.reshape %[[CT]] : (tensor<f32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %[[DC:.+]] = ml.broadcast_to %[[KEPT]] : (tensor<1x1xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[BT:.+]] = ml.transpose %[[B]] {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[DA:.+]] = ml.matmul %[[DC]], %[[BT]] : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[AT:.+]] = ml.transpose %[[A]] {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[DB:.+]] = ml.matmul %[[AT]], %[[DC]] : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    func.return %[[DA]], %[[DB]]

// LOC-LABEL:   func.func @matmul_sum_vjp
// LOC:           ml.reshape {{.*}} loc("model.py":2:3)
// LOC-NEXT:      ml.broadcast_to {{.*}} loc("model.py":2:3)
// LOC-NEXT:      ml.transpose {{.*}} loc("model.py":1:3)
// LOC-NEXT:      ml.matmul {{.*}} loc("model.py":1:3)
func.func @matmul_sum(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<f32> {
  %c = ml.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32> loc("model.py":1:3)
  %s = ml.reduce_sum %c {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf32>) -> tensor<f32> loc("model.py":2:3)
  func.return %s : tensor<f32>
}

// -----

// A batched matmul whose rhs was broadcast over the batch: its cotangent is summed
// over the batch dim.

// CHECK-LABEL: func.func @batched_vjp
// CHECK-SAME:    (%[[A:.+]]: tensor<2x3x4xf32>, %[[B:.+]]: tensor<4x5xf32>, %[[CT:.+]]: tensor<2x3x5xf32>)
// CHECK:         ml.matmul %[[CT]], %{{.+}} : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
// CHECK:         %[[AT:.+]] = ml.transpose %[[A]] {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:    %[[P:.+]] = ml.matmul %[[AT]], %[[CT]] : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
// CHECK-NEXT:    %[[DB:.+]] = ml.reduce_sum %[[P]] {axes = array<i64: 0>, keepdims = false} : (tensor<2x4x5xf32>) -> tensor<4x5xf32>
func.func @batched(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %c = ml.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  func.return %c : tensor<2x3x5xf32>
}

// -----

// softmax: dx = y * (ct - sum(ct * y)) over its axis.

// CHECK-LABEL: func.func @softmax_vjp
// CHECK-SAME:    (%[[X:.+]]: tensor<2x5xf32>, %[[CT:.+]]: tensor<2x5xf32>)
// CHECK:         %[[Y:.+]] = ml.softmax %[[X]]
// CHECK-NEXT:    %[[P:.+]] = ml.mul %[[CT]], %[[Y]]
// CHECK-NEXT:    %[[S:.+]] = ml.reduce_sum %[[P]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:    %[[D:.+]] = ml.sub %[[CT]], %[[S]]
// CHECK-NEXT:    %[[DX:.+]] = ml.mul %[[Y]], %[[D]]
// CHECK-NEXT:    func.return %[[DX]]
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = ml.softmax %x {axis = -1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// -----

// layer_norm recomputes its statistics; scale and bias get cotangents summed over the
// leading dims.

// CHECK-LABEL: func.func @layer_norm_vjp
// CHECK:         ml.reduce_mean %{{.+}} {axes = array<i64: 1>, keepdims = true}
// CHECK:         ml.rsqrt
// CHECK:         %[[DSCALE:.+]] = ml.reduce_sum %{{.+}} {axes = array<i64: 0>, keepdims = false} : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[DBIAS:.+]] = ml.reduce_sum %{{.+}} {axes = array<i64: 0>, keepdims = false} : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    func.return %{{.+}}, %[[DSCALE]], %[[DBIAS]] : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
func.func @layer_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

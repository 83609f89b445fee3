// RUN: mlc-opt %s -p 'autodiff{function=loss}' | filecheck %s
// RUN: mlc-opt %s -p 'autodiff{function=loss wrt=1 with-value=true grad-function=step}' \
// RUN:   | filecheck %s --check-prefix=VALUE
// RUN: mlc-opt %s -p 'autodiff{function=loss},dce' | filecheck %s --check-prefix=DCE

// A scalar result is seeded with 1; by default every floating-point argument is
// differentiated (not the integer one), an unused one getting zeros; the new function
// follows the one it differentiates, which stays.

// CHECK:       func.func @other
// CHECK:       func.func @loss(
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xf32>, %[[W:.+]]: tensor<3xf32>, %[[N:.+]]: tensor<2xi64>, %[[U:.+]]: tensor<5xf32>)
// CHECK-SAME:    -> (tensor<2x3xf32>, tensor<3xf32>, tensor<5xf32>)
// CHECK:         %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[MEAN:.+]] = ml.reshape %[[ONE]] : (tensor<f32>) -> tensor<1x1xf32>
// CHECK:         %[[GX:.+]] = ml.mul %{{.+}}, %[[W]]
// CHECK:         %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK-NEXT:    func.return %[[GX]], %{{.+}}, %[[ZEROS]] : tensor<2x3xf32>, tensor<3xf32>, tensor<5xf32>

// VALUE-LABEL: func.func @step
// VALUE-SAME:    -> (tensor<f32>, tensor<3xf32>)
// VALUE:         %[[L:.+]] = ml.reduce_mean
// VALUE:         func.return %[[L]], %{{.+}} : tensor<f32>, tensor<3xf32>

// The forward ops only the loss needed go with dce.

// DCE-LABEL:   func.func @loss_grad
// DCE-NOT:       ml.reduce_mean
// DCE:           func.return
func.func @other(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

func.func @loss(%x: tensor<2x3xf32>, %w: tensor<3xf32>, %n: tensor<2xi64>, %unused: tensor<5xf32>) -> tensor<f32> {
  %y = ml.mul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %m = ml.reduce_mean %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  func.return %m : tensor<f32>
}

// RUN: mlc-opt %s --split-input-file -p fold-batch-norm,dce | filecheck %s
// RUN: mlc-opt %s --split-input-file -p fold-batch-norm --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p fold-batch-norm
// (`dce` only removes the old constants the fold leaves dead.)

// A batch norm after a convolution with a bias folds into new weights and a bias
// added after the convolution (where it fuses into the epilogue):
// s = g / sqrt(v + eps) = [1, 0.5]; W * s per output channel; (b - m) * s + beta.
// The new ops take the locations of the convolution and the batch norm, fused.

// CHECK-LABEL: func.func @with_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x2x4x4xf32>)
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}-1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[C:.+]] = ml.conv2d %[[X]], %[[W]] {pads = array<i64: 1, 1, 1, 1>}
// CHECK-SAME:      -> tensor<?x2x6x6xf32>
// CHECK-NEXT:    %[[Y:.+]] = ml.add %[[C]], %[[B]]
// CHECK-SAME:      -> tensor<?x2x6x6xf32>
// CHECK-NEXT:    func.return %[[Y]]

// LOC-LABEL:   func.func @with_bias
// LOC:           ml.conv2d {{.*}} loc(fused["model.onnx":1:1, "model.onnx":2:1])
// LOC-NEXT:      ml.add {{.*}} loc(fused["model.onnx":1:1, "model.onnx":2:1])
func.func @with_bias(%x: tensor<?x2x4x4xf32>) -> tensor<?x2x6x6xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %b = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %g = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %beta = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %m = arith.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = arith.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %c = ml.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<?x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<?x2x6x6xf32> loc("model.onnx":1:1)
  %y = ml.batch_norm %c, %g, %beta, %m, %v {epsilon = 1.0 : f32} : (tensor<?x2x6x6xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x6x6xf32> loc("model.onnx":2:1)
  func.return %y : tensor<?x2x6x6xf32>
}

// -----

// A convolution without a bias gets one: -m * s + beta. s = [0.5, 1].

// CHECK-LABEL: func.func @without_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<1x1x3x3xf32>)
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<{{\[\[\[}}0.000000e+00]], {{\[\[}}-2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[C:.+]] = ml.conv2d %[[X]], %[[W]] :
// CHECK-NEXT:    ml.add %[[C]], %[[B]]
// CHECK-NOT:     ml.batch_norm
func.func @without_bias(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense<[[[[2.0]]], [[[4.0]]]]> : tensor<2x1x1x1xf32>
  %g = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %beta = arith.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %m = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = arith.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %c = ml.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %y = ml.batch_norm %c, %g, %beta, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// -----

// A depthwise (grouped) convolution scales its weights per output channel too, and
// keeps its groups and strides. s = [1, 0.5].

// CHECK-LABEL: func.func @depthwise
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00, 1.000000e+00], [1.000000e+00, 1.000000e+00]]], {{\[\[\[}}5.000000e-01, 5.000000e-01], [5.000000e-01, 5.000000e-01]]]]> : tensor<2x1x2x2xf32>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<{{\[\[\[}}0.000000e+00]], {{\[\[}}-5.000000e-01]]]> : tensor<2x1x1xf32>
// CHECK:         %[[C:.+]] = ml.conv2d %{{.*}}, %[[W]] {strides = array<i64: 2, 2>, groups = 2 : i64}
// CHECK-NEXT:    ml.add %[[C]], %[[B]]
// CHECK-NOT:     ml.batch_norm
func.func @depthwise(%x: tensor<?x2x5x5xf32>) -> tensor<?x2x2x2xf32> {
  %w = arith.constant dense<1.0> : tensor<2x1x2x2xf32>
  %g = arith.constant dense<2.0> : tensor<2xf32>
  %beta = arith.constant dense<0.0> : tensor<2xf32>
  %m = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %v = arith.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %c = ml.conv2d %x, %w {strides = array<i64: 2, 2>, groups = 2 : i64} : (tensor<?x2x5x5xf32>, tensor<2x1x2x2xf32>) -> tensor<?x2x2x2xf32>
  %y = ml.batch_norm %c, %g, %beta, %m, %v {epsilon = 1.0 : f32} : (tensor<?x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x2x2xf32>
  func.return %y : tensor<?x2x2x2xf32>
}

// -----

// 1-D and 3-D convolutions fold alike. s = 2 (1-D), 1 (3-D).

// CHECK-LABEL: func.func @conv1d
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<{{\[\[\[}}2.000000e+00, 4.000000e+00, 6.000000e+00]]]> : tensor<1x1x3xf32>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<2.000000e+00> : tensor<1x1xf32>
// CHECK:         %[[C:.+]] = ml.conv1d %{{.*}}, %[[W]] {strides = array<i64: 2>}
// CHECK-NEXT:    ml.add %[[C]], %[[B]] : (tensor<?x1x3xf32>, tensor<1x1xf32>)
// CHECK-NOT:     ml.batch_norm
func.func @conv1d(%x: tensor<?x1x7xf32>) -> tensor<?x1x3xf32> {
  %w = arith.constant dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
  %b = arith.constant dense<1.0> : tensor<1xf32>
  %g = arith.constant dense<4.0> : tensor<1xf32>
  %beta = arith.constant dense<0.0> : tensor<1xf32>
  %m = arith.constant dense<0.0> : tensor<1xf32>
  %v = arith.constant dense<3.0> : tensor<1xf32>
  %c = ml.conv1d %x, %w, %b {strides = array<i64: 2>} : (tensor<?x1x7xf32>, tensor<1x1x3xf32>, tensor<1xf32>) -> tensor<?x1x3xf32>
  %y = ml.batch_norm %c, %g, %beta, %m, %v {epsilon = 1.0 : f32} : (tensor<?x1x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x1x3xf32>
  func.return %y : tensor<?x1x3xf32>
}

// CHECK-LABEL: func.func @conv3d
// CHECK:         %[[C:.+]] = ml.conv3d %{{.*}}, %{{.*}} :
// CHECK-NEXT:    ml.add %[[C]], %{{.*}} : (tensor<1x2x2x2x2xf32>, tensor<2x1x1x1xf32>)
// CHECK-NOT:     ml.batch_norm
func.func @conv3d(%x: tensor<1x1x3x3x3xf32>) -> tensor<1x2x2x2x2xf32> {
  %w = arith.constant dense<1.0> : tensor<2x1x2x2x2xf32>
  %p = arith.constant dense<1.0> : tensor<2xf32>
  %z = arith.constant dense<0.0> : tensor<2xf32>
  %c = ml.conv3d %x, %w : (tensor<1x1x3x3x3xf32>, tensor<2x1x2x2x2xf32>) -> tensor<1x2x2x2x2xf32>
  %y = ml.batch_norm %c, %p, %z, %z, %p {epsilon = 0.0 : f32} : (tensor<1x2x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2x2xf32>
  func.return %y : tensor<1x2x2x2x2xf32>
}

// -----

// f16 weights are folded in float64, then rounded to f16: s = 0.25.

// CHECK-LABEL: func.func @half
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<7.500000e-01> : tensor<1x1x1x1xf16>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<5.000000e-01> : tensor<1x1x1xf16>
// CHECK:         %[[C:.+]] = ml.conv2d %{{.*}}, %[[W]] :
// CHECK-NEXT:    ml.add %[[C]], %[[B]]
func.func @half(%x: tensor<1x1x2x2xf16>) -> tensor<1x1x2x2xf16> {
  %w = arith.constant dense<3.0> : tensor<1x1x1x1xf16>
  %g = arith.constant dense<0.5> : tensor<1xf16>
  %beta = arith.constant dense<1.0> : tensor<1xf16>
  %m = arith.constant dense<2.0> : tensor<1xf16>
  %v = arith.constant dense<3.0> : tensor<1xf16>
  %c = ml.conv2d %x, %w : (tensor<1x1x2x2xf16>, tensor<1x1x1x1xf16>) -> tensor<1x1x2x2xf16>
  %y = ml.batch_norm %c, %g, %beta, %m, %v {epsilon = 1.0 : f32} : (tensor<1x1x2x2xf16>, tensor<1xf16>, tensor<1xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x1x2x2xf16>
  func.return %y : tensor<1x1x2x2xf16>
}

// -----

// Weights that are not constants (a function argument) leave the batch norm alone.

// CHECK-LABEL: func.func @weights_not_constant
// CHECK:         ml.conv2d
// CHECK-NEXT:    ml.batch_norm
func.func @weights_not_constant(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32> {
  %p = arith.constant dense<1.0> : tensor<1xf32>
  %c = ml.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  // expected-remark @+1 {{not folded into the convolution: not a constant: weights}}
  %y = ml.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}

// -----

// Run-time statistics (here the mean and variance) leave it alone too.

// CHECK-LABEL: func.func @statistics_not_constant
// CHECK:         ml.conv2d
// CHECK-NEXT:    ml.batch_norm
func.func @statistics_not_constant(%x: tensor<1x1x2x2xf32>, %m: tensor<1xf32>, %v: tensor<1xf32>) -> tensor<1x1x2x2xf32> {
  %w = arith.constant dense<1.0> : tensor<1x1x1x1xf32>
  %p = arith.constant dense<1.0> : tensor<1xf32>
  %c = ml.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  // expected-remark @+1 {{not folded into the convolution: not a constant: mean, variance}}
  %y = ml.batch_norm %c, %p, %p, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}

// -----

// A convolution whose result is also read elsewhere stays, and so does the batch norm:
// folding would compute the convolution twice.

// CHECK-LABEL: func.func @conv_has_other_user
// CHECK:         %[[C:.+]] = ml.conv2d
// CHECK-NEXT:    %[[Y:.+]] = ml.batch_norm %[[C]]
// CHECK-NEXT:    func.return %[[Y]], %[[C]]
func.func @conv_has_other_user(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  %w = arith.constant dense<1.0> : tensor<1x1x1x1xf32>
  %p = arith.constant dense<1.0> : tensor<1xf32>
  %c = ml.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  // expected-remark @+1 {{not folded into the convolution: the convolution's result has other users}}
  %y = ml.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %y, %c : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// A dynamic channel count (before `shape-inference` has refined it) is left alone.

// CHECK-LABEL: func.func @dynamic_channels
// CHECK:         ml.batch_norm
func.func @dynamic_channels(%x: tensor<1x1x2x2xf32>) -> tensor<1x?x2x2xf32> {
  %w = arith.constant dense<1.0> : tensor<1x1x1x1xf32>
  %p = arith.constant dense<1.0> : tensor<1xf32>
  %c = ml.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x?x2x2xf32>
  // expected-remark @+1 {{not folded into the convolution: the channel count is dynamic}}
  %y = ml.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x?x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x2x2xf32>
  func.return %y : tensor<1x?x2x2xf32>
}

// -----

// bf16 has no numpy dtype to fold in.

// CHECK-LABEL: func.func @bfloat16
// CHECK:         ml.batch_norm
func.func @bfloat16(%x: tensor<1x1x2x2xbf16>) -> tensor<1x1x2x2xbf16> {
  %w = arith.constant dense<1.0> : tensor<1x1x1x1xbf16>
  %p = arith.constant dense<1.0> : tensor<1xbf16>
  %c = ml.conv2d %x, %w : (tensor<1x1x2x2xbf16>, tensor<1x1x1x1xbf16>) -> tensor<1x1x2x2xbf16>
  // expected-remark @+1 {{not folded into the convolution: element type bf16 is not folded}}
  %y = ml.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x1x2x2xbf16>, tensor<1xbf16>, tensor<1xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x1x2x2xbf16>
  func.return %y : tensor<1x1x2x2xbf16>
}

// -----

// A batch norm of anything but a convolution is not this pass's business: no remark.

// CHECK-LABEL: func.func @not_after_conv
// CHECK:         ml.batch_norm
func.func @not_after_conv(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %p = arith.constant dense<1.0> : tensor<1xf32>
  %y = ml.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}

// RUN: mlc-opt %s -p fold-batch-norm,dce | filecheck %s

// Weights that are `dense_resource` blobs (as the ONNX frontend makes large ones) fold
// from their bytes; the small folded result is inlined. s = [1, 0.5]. The old blob is
// no longer read, so it is not printed.

// CHECK-LABEL: func.func @resource_weights
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}-1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK:         %[[C:.+]] = ml.conv2d %{{.*}}, %[[W]] :
// CHECK-NEXT:    ml.add %[[C]], %[[B]]
// CHECK-NOT:     dense_resource
func.func @resource_weights(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense_resource<conv.weight> : tensor<2x2x1x1xf32>
  %b = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %g = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %beta = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %m = arith.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = arith.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %c = ml.conv2d %x, %w, %b : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %y = ml.batch_norm %c, %g, %beta, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      conv.weight: "0x040000000000803f000000400000404000008040"
    }
  }
#-}

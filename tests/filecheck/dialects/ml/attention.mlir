// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// ml.attention: plain, causal with grouped K/V heads and dynamic dims, with an i1 mask
// and with an additive mask of lower rank; `causal = false` is the default, not printed.

// CHECK-LABEL: func.func @attention
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x8x16x64xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x2x?x64xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x2x?x32xf32>, %[[M:[a-zA-Z0-9_]+]]: tensor<2x1x1x?xi1>, %[[A:[a-zA-Z0-9_]+]]: tensor<16x?xf32>, %[[H:[a-zA-Z0-9_]+]]: tensor<4x3x8xf16>)
// CHECK-NEXT:    ml.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>) -> tensor<2x8x16x32xf32>
// CHECK-NEXT:    ml.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64, causal = true} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>) -> tensor<2x8x16x32xf32>
// CHECK-NEXT:    ml.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.000000e+00 : f64} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>, tensor<2x1x1x?xi1>) -> tensor<2x8x16x32xf32>
// CHECK-NEXT:    ml.attention %[[Q]], %[[K]], %[[V]], %[[A]] {scale = 1.250000e-01 : f64} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>, tensor<16x?xf32>) -> tensor<2x8x16x32xf32>
// CHECK-NEXT:    ml.attention %[[H]], %[[H]], %[[H]] {scale = 5.000000e-01 : f64, causal = true} : (tensor<4x3x8xf16>, tensor<4x3x8xf16>, tensor<4x3x8xf16>) -> tensor<4x3x8xf16>

// GENERIC-LABEL: sym_name = "attention"
// GENERIC:       "ml.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{scale = 1.250000e-01 : f64, causal = false}>
// GENERIC-NEXT:  "ml.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{scale = 1.250000e-01 : f64, causal = true}>
// GENERIC-NEXT:  "ml.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{scale = 1.000000e+00 : f64}>
func.func @attention(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x?x64xf32>, %v: tensor<2x2x?x32xf32>, %m: tensor<2x1x1x?xi1>, %a: tensor<16x?xf32>, %h: tensor<4x3x8xf16>) {
  %0 = ml.attention %q, %k, %v {scale = 0.125 : f64, causal = false} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>) -> tensor<2x8x16x32xf32>
  %1 = ml.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>) -> tensor<2x8x16x32xf32>
  %2 = ml.attention %q, %k, %v, %m {scale = 1.0 : f64} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>, tensor<2x1x1x?xi1>) -> tensor<2x8x16x32xf32>
  %3 = ml.attention %q, %k, %v, %a {scale = 0.125 : f64} : (tensor<2x8x16x64xf32>, tensor<2x2x?x64xf32>, tensor<2x2x?x32xf32>, tensor<16x?xf32>) -> tensor<2x8x16x32xf32>
  %4 = ml.attention %h, %h, %h {scale = 0.5 : f64, causal = true} : (tensor<4x3x8xf16>, tensor<4x3x8xf16>, tensor<4x3x8xf16>) -> tensor<4x3x8xf16>
  func.return
}

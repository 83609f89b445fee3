// RUN: mlc-opt %s --verify-roundtrip | filecheck %s
// RUN: mlc-opt %s --verify-roundtrip --print-op-generic | mlc-opt --verify-roundtrip | filecheck %s
// RUN: mlc-opt %s --verify-roundtrip -p cse,canonicalize | filecheck %s --check-prefix=PASS

// `--verify-roundtrip` checks that the output re-parses to the same text, in the
// custom and in the generic form, and prints it as usual when it does. Here: ops of
// every ml family, with properties, dynamic dims and several element types.

func.func @roundtrip(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
                     %m: tensor<2x?x5xf16>, %i: tensor<7xi64>, %t: tensor<10x6xbf16>) -> tensor<?x4x4x4xf32> {
  %0 = ml.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  %1 = ml.gelu %0 {approximate = "tanh"} : (tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  %2 = ml.reduce_sum %m {axes = array<i64: -1>, keepdims = true} : (tensor<2x?x5xf16>) -> tensor<2x?x1xf16>
  %3 = ml.cmp "le", %m, %2 : (tensor<2x?x5xf16>, tensor<2x?x1xf16>) -> tensor<2x?x5xi1>
  %4 = ml.select %3, %m, %2 : (tensor<2x?x5xi1>, tensor<2x?x5xf16>, tensor<2x?x1xf16>) -> tensor<2x?x5xf16>
  %5 = ml.gather %t, %i {axis = 0 : i64} : (tensor<10x6xbf16>, tensor<7xi64>) -> tensor<7x6xbf16>
  %6 = ml.slice %5 {starts = array<i64: -1, 0>, ends = array<i64: -9223372036854775808, 6>, steps = array<i64: -2, 3>} : (tensor<7x6xbf16>) -> tensor<4x2xbf16>
  %7 = ml.layer_norm %1, %b, %b {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<?x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  func.return %7 : tensor<?x4x4x4xf32>
}

// CHECK-LABEL: func.func @roundtrip
// CHECK:         ml.conv2d {{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
// CHECK:         ml.gelu {{.*}} {approximate = "tanh"}
// CHECK:         ml.slice {{.*}} -> tensor<4x2xbf16>
// CHECK:         ml.layer_norm

// PASS-LABEL: func.func @roundtrip
// PASS:         ml.layer_norm

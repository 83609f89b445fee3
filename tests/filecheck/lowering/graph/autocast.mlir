// RUN: mlc-opt %s --split-input-file -p 'autocast{precision=bf16}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'autocast{precision=f16}' | filecheck %s --check-prefix=F16
// RUN: mlc-opt %s --split-input-file -p autocast --print-debuginfo | filecheck %s --check-prefix=LOC

// A matmul runs in bf16: the input is cast down, a constant weight is converted now
// (folded: the program holds bf16 weights), elementwise ops between 16-bit values and
// constants stay 16-bit, and softmax, a mixed add and the result read f32 casts.

// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    (%[[X:.*]]: tensor<8x64xf32>, %[[B:.*]]: tensor<32xf32>) -> tensor<8x32xf32>
// CHECK:         %[[X16:.*]] = ml.cast %[[X]] : (tensor<8x64xf32>) -> tensor<8x64xbf16>
// CHECK-NEXT:    %[[W16:.*]] = arith.constant dense<5.000000e-01> : tensor<64x32xbf16>
// CHECK-NEXT:    %[[Y:.*]] = ml.matmul %[[X16]], %[[W16]] : (tensor<8x64xbf16>, tensor<64x32xbf16>) -> tensor<8x32xbf16>
// CHECK:         %[[C16:.*]] = arith.constant dense<1.000000e+00> : tensor<32xbf16>
// CHECK-NEXT:    %[[YB:.*]] = ml.add %[[Y]], %[[C16]] : (tensor<8x32xbf16>, tensor<32xbf16>) -> tensor<8x32xbf16>
// CHECK-NEXT:    %[[R:.*]] = ml.relu %[[YB]] : (tensor<8x32xbf16>) -> tensor<8x32xbf16>
// CHECK-NEXT:    %[[R32:.*]] = ml.cast %[[R]] : (tensor<8x32xbf16>) -> tensor<8x32xf32>
// CHECK-NEXT:    %[[M:.*]] = ml.add %[[R32]], %[[B]] : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:    %[[S:.*]] = ml.softmax %[[R32]] {axis = 1 : i64} : (tensor<8x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:    ml.add %[[S]], %[[M]]
// CHECK-NOT:     ml.cast

// F16-LABEL: func.func @mlp
// F16:         ml.matmul {{.*}} -> tensor<8x32xf16>
// F16:         ml.relu {{.*}} -> tensor<8x32xf16>
// F16:         ml.cast {{.*}} : (tensor<8x32xf16>) -> tensor<8x32xf32>

// LOC-LABEL: func.func @mlp
// LOC:         ml.cast {{.*}} -> tensor<8x64xbf16> loc("{{.*}}autocast.mlir":[[# @LINE + 5]]:3)
// LOC:         ml.matmul {{.*}} loc("{{.*}}autocast.mlir":[[# @LINE + 4]]:3)
// LOC:         ml.cast {{.*}} -> tensor<8x32xf32> loc("{{.*}}autocast.mlir":[[# @LINE + 6]]:3)
func.func @mlp(%x: tensor<8x64xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %w = arith.constant dense<0.5> : tensor<64x32xf32>
  %y = ml.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %c = arith.constant dense<1.0> : tensor<32xf32>
  %yb = ml.add %y, %c : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = ml.relu %yb : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %m = ml.add %r, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %s = ml.softmax %r {axis = 1 : i64} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %o = ml.add %s, %m : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  func.return %o : tensor<8x32xf32>
}

// -----

// Attention-like chain: movement ops between matmuls stay 16-bit; the matmul result
// returned from the function is cast back (the interface stays f32); reductions,
// exp and layer norm read f32. Dynamic dims are kept.

// CHECK-LABEL: func.func @chain
// CHECK:         %[[QK:.*]] = ml.matmul {{.*}} -> tensor<?x16x16xbf16>
// CHECK-NEXT:    %[[T:.*]] = ml.transpose %[[QK]] {{.*}} -> tensor<?x16x16xbf16>
// CHECK-NEXT:    %[[V16:.*]] = ml.cast %{{.*}} -> tensor<?x16x8xbf16>
// CHECK-NEXT:    %[[O:.*]] = ml.matmul %[[T]], %[[V16]] : {{.*}} -> tensor<?x16x8xbf16>
// CHECK-NEXT:    %[[O32:.*]] = ml.cast %[[O]] : (tensor<?x16x8xbf16>) -> tensor<?x16x8xf32>
// CHECK-NEXT:    ml.exp %[[O32]]
// CHECK-NEXT:    ml.reduce_sum %[[O32]]
// CHECK-NEXT:    ml.layer_norm %[[O32]]
// CHECK-NEXT:    func.return %[[O32]],
func.func @chain(%q: tensor<?x16x8xf32>, %k: tensor<?x8x16xf32>, %v: tensor<?x16x8xf32>, %g: tensor<8xf32>, %bb: tensor<8xf32>)
    -> (tensor<?x16x8xf32>, tensor<?x16x8xf32>, tensor<?x16xf32>, tensor<?x16x8xf32>) {
  %qk = ml.matmul %q, %k : (tensor<?x16x8xf32>, tensor<?x8x16xf32>) -> tensor<?x16x16xf32>
  %t = ml.transpose %qk {perm = array<i64: 0, 2, 1>} : (tensor<?x16x16xf32>) -> tensor<?x16x16xf32>
  %o = ml.matmul %t, %v : (tensor<?x16x16xf32>, tensor<?x16x8xf32>) -> tensor<?x16x8xf32>
  %e = ml.exp %o : (tensor<?x16x8xf32>) -> tensor<?x16x8xf32>
  %s = ml.reduce_sum %o {axes = array<i64: 2>, keepdims = false} : (tensor<?x16x8xf32>) -> tensor<?x16xf32>
  %n = ml.layer_norm %o, %g, %bb {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<?x16x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x16x8xf32>
  func.return %o, %e, %s, %n : tensor<?x16x8xf32>, tensor<?x16x8xf32>, tensor<?x16xf32>, tensor<?x16x8xf32>
}

// -----

// A convolution runs in 16 bits, its bias too; max pooling stays 16-bit.

// CHECK-LABEL: func.func @conv
// CHECK:         ml.conv2d {{.*}} : (tensor<1x3x9x9xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>) -> tensor<1x4x7x7xbf16>
// CHECK-NEXT:    ml.max_pool2d {{.*}} -> tensor<1x4x3x3xbf16>
// CHECK-NEXT:    ml.cast {{.*}} : (tensor<1x4x3x3xbf16>) -> tensor<1x4x3x3xf32>
func.func @conv(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x3xf32> {
  %c = ml.conv2d %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, groups = 1 : i64} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x7x7xf32>
  %p = ml.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// Integer, f64 and already 16-bit programs are left as they are; so is an f32 program
// without matmuls or convolutions.

// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     bf16
// CHECK:         func.return
func.func @untouched(%a: tensor<4x4xi32>, %d: tensor<4x4xf64>, %h: tensor<4x4xf16>, %x: tensor<4xf32>)
    -> (tensor<4x4xi32>, tensor<4x4xf64>, tensor<4x4xf16>, tensor<4xf32>) {
  %0 = ml.matmul %a, %a : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32>
  %1 = ml.matmul %d, %d : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %2 = ml.matmul %h, %h : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
  %3 = ml.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3 : tensor<4x4xi32>, tensor<4x4xf64>, tensor<4x4xf16>, tensor<4xf32>
}

// -----

// A fused attention is taken as a matmul is: q, k, v and the additive mask in bf16,
// the result read back in f32 by the function's return.

// CHECK-LABEL: func.func @attention
// CHECK:         %[[Q:.+]] = ml.cast %q : (tensor<2x8x16xf32>) -> tensor<2x8x16xbf16>
// CHECK:         %[[K:.+]] = ml.cast %k : (tensor<2x8x16xf32>) -> tensor<2x8x16xbf16>
// CHECK:         %[[V:.+]] = ml.cast %v : (tensor<2x8x16xf32>) -> tensor<2x8x16xbf16>
// CHECK:         %[[M:.+]] = ml.cast %m : (tensor<8x8xf32>) -> tensor<8x8xbf16>
// CHECK:         %[[O:.+]] = ml.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f64} : {{.*}} -> tensor<2x8x16xbf16>
// CHECK:         %[[W:.+]] = ml.cast %[[O]] : (tensor<2x8x16xbf16>) -> tensor<2x8x16xf32>
// CHECK:         func.return %[[W]]
func.func @attention(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>, %m: tensor<8x8xf32>) -> tensor<2x8x16xf32> {
  %o = ml.attention %q, %k, %v, %m {scale = 0.25 : f64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<8x8xf32>) -> tensor<2x8x16xf32>
  func.return %o : tensor<2x8x16xf32>
}

// RUN: mlc-opt %s --split-input-file -p fuse-attention | filecheck %s
// RUN: mlc-opt %s --split-input-file -p fuse-attention --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p fuse-attention

// The plain form: a matmul by a transposed k, divided by a constant, softmax, matmul
// by v. k is the transpose's source; the chain goes (the pass runs dce). The attention
// takes the locations of the scores' matmul, the softmax and the last matmul, fused.

// CHECK-LABEL: func.func @plain
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x4x5x8xf32>, %[[K:[a-zA-Z0-9_]+]]: tensor<2x4x7x8xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x4x7x3xf32>)
// CHECK-NEXT:    %[[O:.+]] = ml.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64} : (tensor<2x4x5x8xf32>, tensor<2x4x7x8xf32>, tensor<2x4x7x3xf32>) -> tensor<2x4x5x3xf32>
// CHECK-NEXT:    func.return %[[O]]

// LOC-LABEL:   func.func @plain
// LOC:           ml.attention {{.*}} loc(fused["a.py":1:1, "a.py":3:1, "a.py":4:1])
func.func @plain(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x3xf32>) -> tensor<2x4x5x3xf32> {
  %c = arith.constant dense<4.0> : tensor<f32>
  %kt = ml.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x7x8xf32>) -> tensor<2x4x8x7xf32>
  %s = ml.matmul %q, %kt : (tensor<2x4x5x8xf32>, tensor<2x4x8x7xf32>) -> tensor<2x4x5x7xf32> loc("a.py":1:1)
  %t = ml.div %s, %c : (tensor<2x4x5x7xf32>, tensor<f32>) -> tensor<2x4x5x7xf32> loc("a.py":2:1)
  %p = ml.softmax %t {axis = -1 : i64} : (tensor<2x4x5x7xf32>) -> tensor<2x4x5x7xf32> loc("a.py":3:1)
  %o = ml.matmul %p, %v : (tensor<2x4x5x7xf32>, tensor<2x4x7x3xf32>) -> tensor<2x4x5x3xf32> loc("a.py":4:1)
  func.return %o : tensor<2x4x5x3xf32>
}

// -----

// torch's exporters: q and kᵀ each scaled by sqrt(scale), kᵀ a transpose of the
// heads-split k, an additive mask (here of min-float, kept as it is), and the NaN
// clean-up after the softmax, which stays on the attention's result.

// CHECK-LABEL: func.func @exported
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x?x2x16xf32>, %[[Q:[a-zA-Z0-9_]+]]: tensor<?x2x?x16xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<?x2x?x16xf32>, %[[M:[a-zA-Z0-9_]+]]: tensor<?x1x?x?xf32>)
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[K:.+]] = ml.transpose %[[X]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT:    %[[O:.+]] = ml.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f64}
// CHECK-NEXT:    %[[NAN:.+]] = ml.cmp "ne", %[[O]], %[[O]]
// CHECK-NEXT:    %[[R:.+]] = ml.select %[[NAN]], %[[ZERO]], %[[O]]
// CHECK-NEXT:    func.return %[[R]]
func.func @exported(%x: tensor<?x?x2x16xf32>, %q: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %m: tensor<?x1x?x?xf32>) -> tensor<?x2x?x16xf32> {
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %kt = ml.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x16x?xf32>
  %qs = ml.mul %q, %half : (tensor<?x2x?x16xf32>, tensor<f32>) -> tensor<?x2x?x16xf32>
  %ks = ml.mul %kt, %half : (tensor<?x2x16x?xf32>, tensor<f32>) -> tensor<?x2x16x?xf32>
  %s = ml.matmul %qs, %ks : (tensor<?x2x?x16xf32>, tensor<?x2x16x?xf32>) -> tensor<?x2x?x?xf32>
  %a = ml.add %s, %m : (tensor<?x2x?x?xf32>, tensor<?x1x?x?xf32>) -> tensor<?x2x?x?xf32>
  %p = ml.softmax %a {axis = -1 : i64} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %nan = ml.cmp "ne", %p, %p : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xi1>
  %w = ml.select %nan, %zero, %p : (tensor<?x2x?x?xi1>, tensor<f32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %o = ml.matmul %w, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  func.return %o : tensor<?x2x?x16xf32>
}

// -----

// A bool mask through a select of -inf, a scale on the scores from the left, kᵀ that is
// no transpose (k becomes its transpose), rank 3 (no batch dims).

// CHECK-LABEL: func.func @bool_mask
// CHECK-SAME:    (%[[Q:[a-zA-Z0-9_]+]]: tensor<2x5x8xf32>, %[[KT:[a-zA-Z0-9_]+]]: tensor<2x8x7xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<2x7x3xf32>, %[[M:[a-zA-Z0-9_]+]]: tensor<5x7xi1>)
// CHECK-NEXT:    %[[K:.+]] = ml.transpose %[[KT]] {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:    ml.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 3.000000e+00 : f64}
func.func @bool_mask(%q: tensor<2x5x8xf32>, %kt: tensor<2x8x7xf32>, %v: tensor<2x7x3xf32>, %m: tensor<5x7xi1>) -> tensor<2x5x3xf32> {
  %c = arith.constant dense<3.0> : tensor<f32>
  // -inf, as raw little-endian bytes (xDSL reads `dense<0xFF800000>` as an integer)
  %ninf = arith.constant dense<"0x000080FF"> : tensor<f32>
  %s = ml.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x7xf32>) -> tensor<2x5x7xf32>
  %t = ml.mul %c, %s : (tensor<f32>, tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
  %u = ml.select %m, %t, %ninf : (tensor<5x7xi1>, tensor<2x5x7xf32>, tensor<f32>) -> tensor<2x5x7xf32>
  %p = ml.softmax %u {axis = 2 : i64} : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
  %o = ml.matmul %p, %v : (tensor<2x5x7xf32>, tensor<2x7x3xf32>) -> tensor<2x5x3xf32>
  func.return %o : tensor<2x5x3xf32>
}

// -----

// Left alone, each with a remark: scores used twice, a softmax over another dim, a mask
// that broadcasts the scores to a larger shape, probabilities used twice, rank 2.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     ml.attention
func.func @left_alone(%q: tensor<2x5x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x3xf32>, %big: tensor<4x2x5x5xf32>, %q2: tensor<5x8xf32>, %kt2: tensor<8x5xf32>, %v2: tensor<5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x5x5xf32>, tensor<2x5x3xf32>, tensor<4x2x5x3xf32>, tensor<2x5x3xf32>, tensor<2x5x5xf32>, tensor<5x3xf32>) {
  %s1 = ml.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x5xf32>) -> tensor<2x5x5xf32>
  // expected-remark @+1 {{not fused into ml.attention: the masked scores have another user}}
  %p1 = ml.softmax %s1 {axis = -1 : i64} : (tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %o1 = ml.matmul %p1, %v : (tensor<2x5x5xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %s2 = ml.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x5xf32>) -> tensor<2x5x5xf32>
  // expected-remark @+1 {{not fused into ml.attention: the softmax is not over the last dim}}
  %p2 = ml.softmax %s2 {axis = 1 : i64} : (tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %o2 = ml.matmul %p2, %v : (tensor<2x5x5xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %s3 = ml.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x5xf32>) -> tensor<2x5x5xf32>
  %a3 = ml.add %s3, %big : (tensor<2x5x5xf32>, tensor<4x2x5x5xf32>) -> tensor<4x2x5x5xf32>
  // expected-remark @+1 {{not fused into ml.attention: not an ml.attention: expects a mask of rank <= 3, got rank 4}}
  %p3 = ml.softmax %a3 {axis = -1 : i64} : (tensor<4x2x5x5xf32>) -> tensor<4x2x5x5xf32>
  %o3 = ml.matmul %p3, %v : (tensor<4x2x5x5xf32>, tensor<2x5x3xf32>) -> tensor<4x2x5x3xf32>
  %s4 = ml.matmul %q, %kt : (tensor<2x5x8xf32>, tensor<2x8x5xf32>) -> tensor<2x5x5xf32>
  // expected-remark @+1 {{not fused into ml.attention: the softmax has another user than one matmul by v}}
  %p4 = ml.softmax %s4 {axis = -1 : i64} : (tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
  %o4 = ml.matmul %p4, %v : (tensor<2x5x5xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %s5 = ml.matmul %q2, %kt2 : (tensor<5x8xf32>, tensor<8x5xf32>) -> tensor<5x5xf32>
  // expected-remark @+1 {{not fused into ml.attention: q, k and v are not of one rank >= 3}}
  %p5 = ml.softmax %s5 {axis = -1 : i64} : (tensor<5x5xf32>) -> tensor<5x5xf32>
  %o5 = ml.matmul %p5, %v2 : (tensor<5x5xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  func.return %o1, %s1, %o2, %o3, %o4, %p4, %o5 : tensor<2x5x3xf32>, tensor<2x5x5xf32>, tensor<2x5x3xf32>, tensor<4x2x5x3xf32>, tensor<2x5x3xf32>, tensor<2x5x5xf32>, tensor<5x3xf32>
}

// -----

// A mask of the scores' rank that broadcasts them up: the attention would be larger.

// CHECK-LABEL: func.func @mask_broadcasts_scores
// CHECK-NOT:     ml.attention
func.func @mask_broadcasts_scores(%q: tensor<2x1x5x8xf32>, %kt: tensor<2x1x8x5xf32>, %v: tensor<2x1x5x3xf32>, %m: tensor<1x4x5x5xf32>) -> tensor<2x4x5x3xf32> {
  %s = ml.matmul %q, %kt : (tensor<2x1x5x8xf32>, tensor<2x1x8x5xf32>) -> tensor<2x1x5x5xf32>
  %a = ml.add %s, %m : (tensor<2x1x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  // expected-remark @+1 {{not fused into ml.attention: not an ml.attention: mask (1x4x5x5) does not broadcast to the scores (2x1x5x5)}}
  %p = ml.softmax %a {axis = -1 : i64} : (tensor<2x4x5x5xf32>) -> tensor<2x4x5x5xf32>
  %o = ml.matmul %p, %v : (tensor<2x4x5x5xf32>, tensor<2x1x5x3xf32>) -> tensor<2x4x5x3xf32>
  func.return %o : tensor<2x4x5x3xf32>
}

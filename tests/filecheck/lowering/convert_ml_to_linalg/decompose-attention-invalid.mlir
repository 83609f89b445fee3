// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p decompose-attention
// RUN: not mlc-opt %s -p decompose-attention 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: decompose-attention-invalid.mlir:{{[0-9]+}}:3: error: 'ml.attention' op decompose-attention: grouped key/value heads need static head counts

// Grouped heads of dynamic counts cannot be gathered: a located error.

func.func @dynamic_grouped_heads(%q: tensor<?x4x8xf32>, %k: tensor<2x4x8xf32>) -> tensor<?x4x8xf32> {
  // expected-error @+1 {{decompose-attention: grouped key/value heads need static head counts, got ? query heads and 2 key/value heads}}
  %o = ml.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<?x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<?x4x8xf32>
  func.return %o : tensor<?x4x8xf32>
}

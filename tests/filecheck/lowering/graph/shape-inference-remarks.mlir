// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p shape-inference
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p simplify-graph

// shape-inference says how many dims it refined in each function it changed, once
// (also under simplify-graph, which runs it until nothing changes); a function it
// cannot refine gets no remark.

// expected-remark @+1 {{refined 3 dims}}
func.func @refined(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<?x?xf32> {
  %r = ml.relu %x : (tensor<2x3xf32>) -> tensor<?x3xf32>
  %m = ml.matmul %r, %w : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}

// -----

func.func @nothing_to_refine(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %r = ml.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}

// PageRank by power iteration, the running example of the DAPHNE paper:
//   p <- alpha * (G @ p) + (1 - alpha) * (e @ u @ p)
// Written naively, e @ u is a 1000x1000 outer product recomputed every iteration,
// and (1 - alpha) too: graph passes reorder the chain to e @ (u @ p) and hoist
// what does not change out of the loop.
func.func @pagerank(%G: tensor<1000x1000xf32>, %p0: tensor<1000x1xf32>,
                    %e: tensor<1000x1xf32>, %u: tensor<1x1000xf32>) -> tensor<1000x1xf32> {
  %alpha = arith.constant dense<0.85> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %lo = arith.constant 0 : index
  %hi = arith.constant 20 : index
  %step = arith.constant 1 : index
  %p = scf.for %i = %lo to %hi step %step iter_args(%pi = %p0) -> (tensor<1000x1xf32>) {
    %gp = ml.matmul %G, %pi : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    %agp = ml.mul %alpha, %gp : (tensor<f32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
    %eup = ml.matmul %eu, %pi : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    %beta = ml.sub %one, %alpha : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %beup = ml.mul %beta, %eup : (tensor<f32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    %next = ml.add %agp, %beup : (tensor<1000x1xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
    scf.yield %next : tensor<1000x1xf32>
  }
  func.return %p : tensor<1000x1xf32>
}

// RUN: mlc-opt %s -p shape-inference,matmul-chain-reorder,licm,canonicalize,cse | filecheck %s

// The acceptance example: PageRank by power iteration (a copy of
// examples/pagerank.mlir), p <- alpha * (G @ p) + (1 - alpha) * (e @ u @ p).
// matmul-chain-reorder turns (1 - alpha) * ((e @ u) @ p) into
// e @ ((1 - alpha) * (u @ p)), so no 1000x1000 outer product is left anywhere and the
// scalar scales a 1x1 value; licm hoists (1 - alpha) out of the loop and canonicalize
// folds it to a constant. The loop keeps G @ p, u @ p, e @ (u @ p) and elementwise
// work only.

// CHECK-LABEL: func.func @pagerank
// CHECK-NOT:     -> tensor<1000x1000xf32>
// CHECK-NOT:     ml.sub
// CHECK:         %[[BETA:.+]] = arith.constant dense<0.149999976> : tensor<f32>
// CHECK-NEXT:    scf.for {{.*}} iter_args(%[[P:[a-zA-Z0-9_]+]] =
// CHECK-NOT:       -> tensor<1000x1000xf32>
// CHECK-NOT:       ml.sub
// CHECK-DAG:       ml.matmul %{{.+}}, %[[P]] : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
// CHECK-DAG:       %[[UP:.+]] = ml.matmul %{{.+}}, %[[P]] : (tensor<1x1000xf32>, tensor<1000x1xf32>) -> tensor<1x1xf32>
// CHECK-DAG:       %[[BUP:.+]] = ml.mul %[[BETA]], %[[UP]] : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
// CHECK-DAG:       ml.matmul %{{.+}}, %[[BUP]] : (tensor<1000x1xf32>, tensor<1x1xf32>) -> tensor<1000x1xf32>
// CHECK-NOT:       ml.matmul
// CHECK-NOT:       ml.sub
// CHECK-NOT:       -> tensor<1000x1000xf32>
// CHECK:           scf.yield
// CHECK-NOT:     -> tensor<1000x1000xf32>
// CHECK:         func.return
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

// RUN: mlc-opt %s --split-input-file -p simplify-graph | filecheck %s
// RUN: mlc-opt %s --split-input-file -p simplify-graph,simplify-graph | filecheck %s
// RUN: mlc-opt %s --split-input-file -p simplify-graph --remarks 2>&1 >/dev/null \
// RUN:   | filecheck %s --check-prefix=REMARK
// shape-inference and canonicalize alternate until neither changes the IR; the
// second RUN checks that the result is a fixpoint. Each function gets one remark
// with all the dims refined over the rounds.

// REMARK: simplify-graph.mlir:[[# @LINE + 14]]:1: remark: 'func.func' op refined 4 dims

// Folding enables refinement, which enables more folding: the constant shape makes
// the reshape static (round 1, behind a cast to ?x?); shape inference refines the
// cast and the add (round 2); the identity cast goes, the add's operands are then
// constants, and it folds, as does tensor.dim of the now static result (round 3).

// CHECK-LABEL: func.func @fold_refine_fold
// CHECK-SAME:    -> (tensor<2x3xi32>, index)
// CHECK-DAG:     %[[C:.+]] = arith.constant dense<{{\[}}[2, 4, 6], [8, 10, 12]]> : tensor<2x3xi32>
// CHECK-DAG:     %[[D:.+]] = arith.constant 3 : index
// CHECK-NOT:     ml.
// CHECK-NOT:     tensor.
// CHECK:         func.return %[[C]], %[[D]]
func.func @fold_refine_fold() -> (tensor<?x?xi32>, index) {
  %x = arith.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %s = arith.constant dense<[2, -1]> : tensor<2xi64>
  %r = ml.reshape %x, %s : (tensor<6xi32>, tensor<2xi64>) -> tensor<?x?xi32>
  %a = ml.add %r, %r : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  %one = arith.constant 1 : index
  %d = tensor.dim %a, %one : tensor<?x?xi32>
  func.return %a, %d : tensor<?x?xi32>, index
}

// -----

// A cast that an scf.for init needs at its written type is not refined away.

// CHECK-LABEL: func.func @cast_kept_for_loop
// CHECK:         %[[C:.+]] = tensor.cast %{{.*}} : tensor<2x3xf32> to tensor<?x3xf32>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[C]]) -> (tensor<?x3xf32>)
func.func @cast_kept_for_loop(%x: tensor<6xf32>, %n: index) -> tensor<?x3xf32> {
  %s = arith.constant dense<[2, 3]> : tensor<2xi64>
  %r = ml.reshape %x, %s : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  %lo = arith.constant 0 : index
  %step = arith.constant 1 : index
  %l = scf.for %i = %lo to %n step %step iter_args(%a = %r) -> (tensor<?x3xf32>) {
    %c = ml.concat %a, %a {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    scf.yield %c : tensor<?x3xf32>
  }
  func.return %l : tensor<?x3xf32>
}

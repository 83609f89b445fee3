// RUN: mlc-opt %s --split-input-file -p linalg-fuse-elementwise | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-fuse-elementwise{multi-results=false}' \
// RUN:   | filecheck %s --check-prefix=OFF

// A recurrent step: the new state `c` is carried to the next iteration and read by the
// new output `h`. One generic writes both (`c` as its last result), so a step makes one
// pass over the state instead of two.

// CHECK-LABEL: func.func @carried_state
// CHECK:         scf.for
// CHECK:           %[[H:.+]], %[[C:.+]] = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK:             %[[E:.+]] = math.exp
// CHECK:             %[[S:.+]] = arith.addf %[[E]]
// CHECK:             %[[T:.+]] = math.tanh %[[S]]
// CHECK:             linalg.yield %[[T]], %[[S]]
// CHECK-NOT:       linalg.generic
// CHECK:           scf.yield %[[H]], %[[C]]
// OFF-LABEL:   func.func @carried_state
// OFF:           %[[C:.+]] = linalg.generic
// OFF:           %[[H:.+]] = linalg.generic {{.*}} ins(%[[C]] :
// OFF:           scf.yield %[[H]], %[[C]]

func.func @carried_state(%x: tensor<4x8xf32>, %n: index) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %lo = arith.constant 0 : index
  %one = arith.constant 1 : index
  %r:2 = scf.for %i = %lo to %n step %one iter_args(%h = %x, %c = %x) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %0 = tensor.empty() : tensor<4x8xf32>
    %c2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h, %c : tensor<4x8xf32>, tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %e = math.exp %a : f32
      %s = arith.addf %e, %b : f32
      linalg.yield %s : f32
    } -> tensor<4x8xf32>
    %1 = tensor.empty() : tensor<4x8xf32>
    %h2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c2 : tensor<4x8xf32>) outs(%1 : tensor<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<4x8xf32>
    scf.yield %h2, %c2 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Read elsewhere before its consumer: the fused generic, in the consumer's place,
// would come too late for that use. Both stay.

// CHECK-LABEL: func.func @used_before_consumer
// CHECK:         %[[T:.+]] = linalg.generic
// CHECK:         "test.op"(%[[T]])
// CHECK:         linalg.generic {{.*}} ins(%[[T]] :

func.func @used_before_consumer(%a: tensor<8xf32>) -> (tensor<8xf32>, index) {
  %0 = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%1: f32, %2: f32):
    %3 = math.exp %1 : f32
    linalg.yield %3 : f32
  } -> tensor<8xf32>
  %d = "test.op"(%t) : (tensor<8xf32>) -> index
  %4 = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : tensor<8xf32>) outs(%4 : tensor<8xf32>) {
  ^bb0(%5: f32, %6: f32):
    %7 = arith.negf %5 : f32
    linalg.yield %7 : f32
  } -> tensor<8xf32>
  func.return %u, %d : tensor<8xf32>, index
}

// -----

// A consumer that reads each element many times (a broadcast along its rows) would
// write the producer's result as often: the producer stays its own generic.

// CHECK-LABEL: func.func @broadcast_consumer
// CHECK:         %[[T:.+]] = linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[T]], %{{.*}} :
// CHECK:         func.return

func.func @broadcast_consumer(%a: tensor<8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %0 = tensor.empty() : tensor<8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%1: f32, %2: f32):
    %3 = math.exp %1 : f32
    %4 = math.exp %3 : f32
    %5 = math.exp %4 : f32
    linalg.yield %5 : f32
  } -> tensor<8xf32>
  %6 = tensor.empty() : tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t, %x : tensor<8xf32>, tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
  ^bb0(%7: f32, %8: f32, %9: f32):
    %10 = arith.mulf %7, %8 : f32
    linalg.yield %10 : f32
  } -> tensor<4x8xf32>
  func.return %u, %t : tensor<4x8xf32>, tensor<8xf32>
}

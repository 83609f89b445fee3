// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,linalg-fuse-elementwise \
// RUN:   --print-op-generic | mlc-opt --split-input-file > /dev/null

// Bodies that read their loop indices (`linalg.index`, which verifies only directly in
// a generic's body): a producer's index renamed to the consumer loop its loop maps to
// (or a constant), a consumer's kept, and an epilogue's read in the contraction's
// block, not inside the `scf.if` that applies it. The second RUN line parses the
// result again, so each result verifies.

// The producer's loop d0 is the consumer's d1 (its output is transposed).
// CHECK-LABEL: func.func @producer_index_renamed
// CHECK:         linalg.generic {{.*}} ins(%x : tensor<3x5xf32>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      %[[I:.+]] = linalg.index 1 : index
// CHECK-NEXT:      arith.index_cast %[[I]]
// CHECK:           math.exp
// CHECK-NOT:     linalg.generic
func.func @producer_index_renamed(%x: tensor<3x5xf32>) -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x5xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    %r = arith.addf %v, %f : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<5x3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  func.return %s : tensor<5x3xf32>
}

// -----

// A consumer reading row 2 of the producer sees the producer's loop d0 as the constant 2.
// CHECK-LABEL: func.func @producer_index_fixed
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (2, d0)>, affine_map<(d0) -> (d0)>]
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      %[[ROW:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[COL:.+]] = linalg.index 0 : index
// CHECK-NEXT:      arith.addi %[[ROW]], %[[COL]] : index
// CHECK-NOT:     linalg.generic
func.func @producer_index_fixed(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %j : index
    %n = arith.index_cast %k : index to i32
    %f = arith.sitofp %n : i32 to f32
    %r = arith.mulf %v, %f : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  %e1 = tensor.empty() : tensor<6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (2, d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : tensor<4x6xf32>) outs(%e1 : tensor<6xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  func.return %s : tensor<6xf32>
}

// -----

// CHECK-LABEL: func.func @consumer_index_kept
// CHECK:         linalg.generic {{.*}} ins(%x, %y : tensor<5x3xf32>, tensor<5x3xf32>)
// CHECK:           %[[P:.+]] = arith.mulf
// CHECK-NEXT:      %[[J:.+]] = linalg.index 1 : index
// CHECK-NEXT:      arith.index_cast %[[J]]
// CHECK:           arith.addf %[[P]],
// CHECK-NOT:     linalg.generic
func.func @consumer_index_kept(%x: tensor<5x3xf32>, %y: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<5x3xf32>, tensor<5x3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<5x3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%u: f32, %o: f32):
    %j = linalg.index 1 : index
    %n = arith.index_cast %j : index to i32
    %f = arith.sitofp %n : i32 to f32
    %r = arith.addf %u, %f : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  func.return %s : tensor<5x3xf32>
}

// -----

// A reduction times an argument broadcast at run time: the epilogue reads %x at its
// loop index, which the reduction's block gives the `scf.if`.
// CHECK-LABEL: func.func @epilogue_reads_index
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%a : tensor<3x4xf32>)
// CHECK:           %[[ACC:.+]] = arith.addf
// CHECK:           %[[J:.+]] = linalg.index 1 : index
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[J]],
// CHECK-NEXT:        %[[XJ:.+]] = tensor.extract %x[%[[AT]]]
// CHECK-NEXT:        arith.mulf %[[ACC]], %[[XJ]]
// CHECK-NOT:     linalg.index
// CHECK:         func.return
func.func @epilogue_reads_index(%a: tensor<3x4xf32>, %x: tensor<?xf32>) -> tensor<4xf32> {
  %s = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<3x4xf32>) -> tensor<4xf32>
  %y = ml.mul %s, %x : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// The producer (%x broadcast over rows) and the consumer (%z broadcast over columns)
// both read an index; fused into each other and then into the reduction as one
// epilogue, they share the reduction's one read of each loop.
// CHECK-LABEL: func.func @producer_and_consumer_indices_in_epilogue
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%a, %c :
// CHECK:           %[[I:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[J:.+]] = linalg.index 2 : index
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        %[[XI:.+]] = arith.muli %[[I]],
// CHECK-NEXT:        tensor.extract %x[%[[XI]], %[[J]]]
// CHECK:             %[[ZI:.+]] = arith.muli %[[I]],
// CHECK:             tensor.extract %z[%[[ZI]],
// CHECK-NOT:     linalg.index
// CHECK:         func.return
func.func @producer_and_consumer_indices_in_epilogue(%a: tensor<5x6x7xf32>, %x: tensor<?x7xf32>, %c: tensor<6x7xf32>, %z: tensor<?x1xf32>) -> tensor<6x7xf32> {
  %s = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<5x6x7xf32>) -> tensor<6x7xf32>
  %p = ml.add %x, %c : (tensor<?x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  %m = ml.mul %s, %p : (tensor<6x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  %w = ml.sub %m, %z : (tensor<6x7xf32>, tensor<?x1xf32>) -> tensor<6x7xf32>
  func.return %w : tensor<6x7xf32>
}

// -----

// Dynamic parallel dims: the same, its loop sizes known only at run time.
// CHECK-LABEL: func.func @dynamic_dims
// CHECK:         linalg.generic {{.*}} ins(%a : tensor<5x?x7xf32>) outs({{.*}} : tensor<?x7xf32>)
// CHECK:           %[[J:.+]] = linalg.index 2 : index
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[J]],
// CHECK-NEXT:        tensor.extract %x[%[[AT]]] : tensor<?xf32>
// CHECK-NOT:     linalg.index
// CHECK:         func.return
func.func @dynamic_dims(%a: tensor<5x?x7xf32>, %x: tensor<?xf32>) -> tensor<?x7xf32> {
  %s = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<5x?x7xf32>) -> tensor<?x7xf32>
  %m = ml.mul %s, %x : (tensor<?x7xf32>, tensor<?xf32>) -> tensor<?x7xf32>
  func.return %m : tensor<?x7xf32>
}

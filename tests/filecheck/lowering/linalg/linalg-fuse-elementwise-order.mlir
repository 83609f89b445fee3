// RUN: mlc-opt %s --split-input-file -p 'linalg-fuse-elementwise{multi-results=false}' | filecheck %s
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p 'linalg-fuse-elementwise{multi-results=false}'

// The order of fusions: always the first producer of the block that should be fused,
// each examined again only when a fusion replaced one of its consumers.
// (`multi-results=false`: a producer left materialised stays its own generic here;
// linalg-fuse-elementwise-multi-results.mlir tests it as a second result.)

// A producer read by a later producer and by that producer's consumer: cheap, so it
// is recomputed in both; the later producer is then fused into the consumer, whose
// one generic computes all three.

// CHECK-LABEL: func.func @diamond
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<8x16xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<8x16xf32>)
// CHECK-COUNT-1: linalg.generic {{.*}} ins(%[[X]], %[[Y]] :
// CHECK:           arith.negf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.negf
// CHECK-NEXT:      arith.addf
// CHECK-NOT:     linalg.generic
// CHECK:         func.return

func.func @diamond(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e0 = tensor.empty() : tensor<8x16xf32>
  // expected-remark @+1 {{recomputed in 2 consumers (2 uses, 1 flops/element)}}
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%q, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %q : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  func.return %c : tensor<8x16xf32>
}

// -----

// The same shape with an exp the function also returns: the producer is stored (and
// not weighed again when its consumers are fused into one generic, which then reads
// it once).

// CHECK-LABEL: func.func @declined_stays
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<8x16xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<8x16xf32>)
// CHECK:         %[[Q:.+]] = linalg.generic {{.*}} ins(%[[X]] :
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[Q]], %[[Y]] :
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK-NOT:     linalg.generic
// CHECK:         func.return %[[Q]], %{{.+}}

func.func @declined_stays(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e0 = tensor.empty() : tensor<8x16xf32>
  // expected-remark @+1 {{materialised: 3 uses, recomputing (10 flops/element) costs more}}
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%q, %y : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %q : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e2 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  func.return %q, %c : tensor<8x16xf32>, tensor<8x16xf32>
}

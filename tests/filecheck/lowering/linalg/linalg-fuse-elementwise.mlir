// RUN: mlc-opt %s --split-input-file -p linalg-fuse-elementwise | filecheck %s
// RUN: mlc-opt %s --split-input-file -p linalg-fuse-elementwise,linalg-fuse-elementwise \
// RUN:   | filecheck %s
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p linalg-fuse-elementwise
// RUN: mlc-opt %s --split-input-file -p linalg-fuse-elementwise --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// (The second line checks idempotence: a second run finds nothing more to fuse. The
// third checks the remarks that explain each recompute-or-materialise decision.)


// A chain of elementwise generics with a broadcast bias and a scalar becomes one
// generic over the consumer's loops; each producer input keeps its map composed with
// the consumer's, dynamic sizes included. The fused op's location fuses the last
// consumer's with its producers' (consumer first); the ops of its body keep theirs.

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x7xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<?x7xf32>, %[[C:[a-zA-Z0-9_]+]]: tensor<7xf32>)
// CHECK:         %[[H:.+]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-COUNT-1: linalg.generic
// CHECK-SAME:      indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:      ins(%[[A]], %[[B]], %[[C]], %[[H]] :
// CHECK-NEXT:    ^bb0(%[[XA:.+]]: f32, %[[XB:.+]]: f32, %[[XC:.+]]: f32, %[[XH:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[XA]], %[[XB]] : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[M]], %[[XC]] : f32
// CHECK:           %[[R:.+]] = arith.maximumf %[[S]], %{{.+}} : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.mulf %[[R]], %[[XH]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         func.return

// LOC-LABEL:   func.func @chain
// LOC:           arith.mulf {{.*}} loc("{{.*}}linalg-fuse-elementwise.mlir":{{[0-9]+}}:5)
// LOC:           } -> tensor<?x7xf32> loc(fused["model.py":4:2, "model.py":3:2, "model.py":2:2, "model.py":1:2])

func.func @chain(%a: tensor<?x7xf32>, %b: tensor<?x7xf32>, %c: tensor<7xf32>) -> tensor<?x7xf32> {
  %h = arith.constant dense<5.000000e-01> : tensor<f32>
  %0 = arith.constant 0 : index
  %1 = tensor.dim %a, %0 : tensor<?x7xf32>
  %2 = tensor.empty(%1) : tensor<?x7xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<?x7xf32>, tensor<?x7xf32>) outs(%2 : tensor<?x7xf32>) {
  ^bb0(%4: f32, %5: f32, %6: f32):
    %7 = arith.mulf %4, %5 : f32
    linalg.yield %7 : f32
  } -> tensor<?x7xf32> loc("model.py":1:2)
  %8 = arith.constant 0 : index
  %9 = tensor.dim %3, %8 : tensor<?x7xf32>
  %10 = tensor.empty(%9) : tensor<?x7xf32>
  %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3, %c : tensor<?x7xf32>, tensor<7xf32>) outs(%10 : tensor<?x7xf32>) {
  ^bb0(%12: f32, %13: f32, %14: f32):
    %15 = arith.addf %12, %13 : f32
    linalg.yield %15 : f32
  } -> tensor<?x7xf32> loc("model.py":2:2)
  %16 = arith.constant 0 : index
  %17 = tensor.dim %11, %16 : tensor<?x7xf32>
  %18 = tensor.empty(%17) : tensor<?x7xf32>
  %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<?x7xf32>) outs(%18 : tensor<?x7xf32>) {
  ^bb0(%20: f32, %21: f32):
    %22 = arith.constant 0.000000e+00 : f32
    %23 = arith.maximumf %20, %22 : f32
    linalg.yield %23 : f32
  } -> tensor<?x7xf32> loc("model.py":3:2)
  %24 = arith.constant 0 : index
  %25 = tensor.dim %19, %24 : tensor<?x7xf32>
  %26 = tensor.empty(%25) : tensor<?x7xf32>
  %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%19, %h : tensor<?x7xf32>, tensor<f32>) outs(%26 : tensor<?x7xf32>) {
  ^bb0(%28: f32, %29: f32, %30: f32):
    %31 = arith.mulf %28, %29 : f32
    linalg.yield %31 : f32
  } -> tensor<?x7xf32> loc("model.py":4:2)
  func.return %27 : tensor<?x7xf32>
}

// -----

// A cheap producer with two consumers is recomputed in both (cost model), then erased.

// CHECK-LABEL: func.func @two_consumers
// CHECK:         linalg.generic {{.*}} ins(%[[A:[a-zA-Z0-9_]+]], %[[B:[a-zA-Z0-9_]+]] :
// CHECK:           arith.mulf
// CHECK-NEXT:      math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[A]], %[[B]] :
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.negf
// CHECK-NOT:     linalg.generic

func.func @two_consumers(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = tensor.empty() : tensor<8xf32>
  // expected-remark @+1 {{recomputed in 2 consumers (2 uses, 1 flops/element)}}
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%1: f32, %2: f32, %3: f32):
    %4 = arith.mulf %1, %2 : f32
    linalg.yield %4 : f32
  } -> tensor<8xf32>
  %5 = tensor.empty() : tensor<8xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : tensor<8xf32>) outs(%5 : tensor<8xf32>) {
  ^bb0(%6: f32, %7: f32):
    %8 = math.exp %6 : f32
    linalg.yield %8 : f32
  } -> tensor<8xf32>
  %9 = tensor.empty() : tensor<8xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : tensor<8xf32>) outs(%9 : tensor<8xf32>) {
  ^bb0(%10: f32, %11: f32):
    %12 = arith.negf %10 : f32
    linalg.yield %12 : f32
  } -> tensor<8xf32>
  func.return %u, %v : tensor<8xf32>, tensor<8xf32>
}

// -----

// A producer the function also returns stays materialised: recomputing exp in its
// consumer would cost more than reading the stored result. Its one elementwise
// consumer writes it, as a second result, in the same pass.

// CHECK-LABEL: func.func @returned_too
// CHECK:         %[[U:.+]], %[[T:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// CHECK:           %[[E:.+]] = math.exp
// CHECK:           %[[N:.+]] = arith.negf %[[E]]
// CHECK:           linalg.yield %[[N]], %[[E]]
// CHECK:         func.return %[[T]], %[[U]]

func.func @returned_too(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = tensor.empty() : tensor<8xf32>
  // expected-remark @+1 {{materialised: 2 uses, recomputing (10 flops/element) costs more}}
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<8xf32>) outs(%0 : tensor<8xf32>) {
  ^bb0(%1: f32, %2: f32):
    %3 = math.exp %1 : f32
    linalg.yield %3 : f32
  } -> tensor<8xf32>
  %4 = tensor.empty() : tensor<8xf32>
  // expected-remark @+1 {{also writes a producer read elsewhere, as its last result}}
  %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : tensor<8xf32>) outs(%4 : tensor<8xf32>) {
  ^bb0(%5: f32, %6: f32):
    %7 = arith.negf %5 : f32
    linalg.yield %7 : f32
  } -> tensor<8xf32>
  func.return %t, %u : tensor<8xf32>, tensor<8xf32>
}

// -----

// A consumer that broadcasts a producer over 64 rows would run its exp 64 times per
// element: the producer is materialised.

// CHECK-LABEL: func.func @broadcast_read
// CHECK:         %[[E:.+]] = linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %[[E]] :

func.func @broadcast_read(%b: tensor<16xf32>, %x: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %0 = tensor.empty() : tensor<16xf32>
  // expected-remark @+1 {{materialised: a broadcasting use, recomputing (10 flops/element) costs more}}
  %e = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : tensor<16xf32>) outs(%0 : tensor<16xf32>) {
  ^bb0(%1: f32, %2: f32):
    %3 = math.exp %1 : f32
    linalg.yield %3 : f32
  } -> tensor<16xf32>
  %4 = tensor.empty() : tensor<64x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %e : tensor<64x16xf32>, tensor<16xf32>) outs(%4 : tensor<64x16xf32>) {
  ^bb0(%5: f32, %6: f32, %7: f32):
    %8 = arith.addf %5, %6 : f32
    linalg.yield %8 : f32
  } -> tensor<64x16xf32>
  func.return %y : tensor<64x16xf32>
}

// -----

// An elementwise producer fuses into a reduction that reads it element for element.

// CHECK-LABEL: func.func @into_reduction
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x9xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x9xf32>)
// CHECK-NEXT:    ^bb0(%[[XX:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[E:.+]] = math.exp %[[XX]] : f32
// CHECK-NEXT:      arith.addf %[[E]], %[[ACC]] fastmath<reassoc,contract> : f32

func.func @into_reduction(%x: tensor<4x9xf32>) -> tensor<4xf32> {
  %0 = tensor.empty() : tensor<4x9xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x9xf32>) outs(%0 : tensor<4x9xf32>) {
  ^bb0(%1: f32, %2: f32):
    %3 = math.exp %1 : f32
    linalg.yield %3 : f32
  } -> tensor<4x9xf32>
  %4 = tensor.empty() : tensor<4xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%4 : tensor<4xf32>) {
  ^bb0(%6: f32):
    %7 = arith.constant 0.000000e+00 : f32
    linalg.yield %7 : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%e : tensor<4x9xf32>) outs(%5 : tensor<4xf32>) {
  ^bb0(%8: f32, %9: f32):
    %10 = arith.addf %8, %9 fastmath<reassoc,contract> : f32
    linalg.yield %10 : f32
  } -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// A reduction is never inlined into an elementwise consumer (it is not a map), and
// an elementwise consumer whose contraction's innermost loop is the reduction does
// not take it as an epilogue either.

// CHECK-LABEL: func.func @reduction_not_inlined
// CHECK:         %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %[[S]] :
// CHECK:           arith.divf

func.func @reduction_not_inlined(%x: tensor<4x9xf32>) -> tensor<4x9xf32> {
  %0 = tensor.empty() : tensor<4x1xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%0 : tensor<4x1xf32>) {
  ^bb0(%2: f32):
    %3 = arith.constant 0.000000e+00 : f32
    linalg.yield %3 : f32
  } -> tensor<4x1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x9xf32>) outs(%1 : tensor<4x1xf32>) {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.addf %4, %5 fastmath<reassoc,contract> : f32
    linalg.yield %6 : f32
  } -> tensor<4x1xf32>
  %7 = tensor.empty() : tensor<4x9xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x9xf32>, tensor<4x1xf32>) outs(%7 : tensor<4x9xf32>) {
  ^bb0(%8: f32, %9: f32, %10: f32):
    %11 = arith.divf %8, %9 : f32
    linalg.yield %11 : f32
  } -> tensor<4x9xf32>
  func.return %y : tensor<4x9xf32>
}

// -----

// Bias and relu fuse into one epilogue of the matmul: applied under `scf.if` on the
// last iteration of the reduction loop (k == 4), the bias read through the output map.

// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x5xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<5x3xf32>, %[[BIAS:[a-zA-Z0-9_]+]]: tensor<3xf32>)
// CHECK:         %[[ZERO:.+]] = linalg.generic
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[A]], %[[W]], %[[BIAS]] : {{.*}}) outs(%[[ZERO]] : tensor<?x3xf32>)
// CHECK-NEXT:    ^bb0(%[[XA:.+]]: f32, %[[XW:.+]]: f32, %[[XB:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[XA]], %[[XW]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[ACC]], %[[P]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[LAST:.+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[K:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[DONE:.+]] = arith.cmpi eq, %[[K]], %[[LAST]] : index
// CHECK-NEXT:      %[[OUT:.+]] = scf.if %[[DONE]] -> (f32) {
// CHECK-NEXT:        %[[BIASED:.+]] = arith.addf %[[SUM]], %[[XB]] : f32
// CHECK:             %[[RELU:.+]] = arith.maximumf %[[BIASED]], %{{.+}} : f32
// CHECK-NEXT:        scf.yield %[[RELU]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[SUM]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      linalg.yield %[[OUT]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         func.return %[[R]]

// The fused generic is at the contraction's location first (its remarks name the
// matmul), then the epilogue's ops'.
// LOC-LABEL:   func.func @matmul_epilogue
// LOC:           linalg.index 1 : index loc(fused["{{.*}}linalg-fuse-elementwise.mlir":[[MATMUL:[0-9]+]]:3, "model.py":9:3, "{{.*}}linalg-fuse-elementwise.mlir":{{[0-9]+}}:3])
// LOC:           } -> tensor<?x3xf32> loc(fused["{{.*}}linalg-fuse-elementwise.mlir":[[MATMUL]]:3, "model.py":9:3, "{{.*}}linalg-fuse-elementwise.mlir":{{[0-9]+}}:3])

func.func @matmul_epilogue(%a: tensor<?x5xf32>, %w: tensor<5x3xf32>, %bias: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = arith.constant 0 : index
  %1 = tensor.dim %a, %0 : tensor<?x5xf32>
  %2 = tensor.empty(%1) : tensor<?x3xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%2 : tensor<?x3xf32>) {
  ^bb0(%4: f32):
    %5 = arith.constant 0.000000e+00 : f32
    linalg.yield %5 : f32
  } -> tensor<?x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %w : tensor<?x5xf32>, tensor<5x3xf32>) outs(%3 : tensor<?x3xf32>) {
  ^bb0(%6: f32, %7: f32, %8: f32):
    %9 = arith.mulf %6, %7 fastmath<reassoc,contract> : f32
    %10 = arith.addf %8, %9 fastmath<reassoc,contract> : f32
    linalg.yield %10 : f32
  } -> tensor<?x3xf32>
  %11 = arith.constant 0 : index
  %12 = tensor.dim %m, %11 : tensor<?x3xf32>
  %13 = tensor.empty(%12) : tensor<?x3xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m, %bias : tensor<?x3xf32>, tensor<3xf32>) outs(%13 : tensor<?x3xf32>) {
  ^bb0(%14: f32, %15: f32, %16: f32):
    %17 = arith.addf %14, %15 : f32
    linalg.yield %17 : f32
  } -> tensor<?x3xf32>
  %18 = arith.constant 0 : index
  %19 = tensor.dim %b, %18 : tensor<?x3xf32>
  %20 = tensor.empty(%19) : tensor<?x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<?x3xf32>) outs(%20 : tensor<?x3xf32>) {
  ^bb0(%21: f32, %22: f32):
    %23 = arith.constant 0.000000e+00 : f32
    %24 = arith.maximumf %21, %23 : f32
    linalg.yield %24 : f32
  } -> tensor<?x3xf32> loc("model.py":9:3)
  func.return %r : tensor<?x3xf32>
}

// -----

// A row sum ends in its innermost loop: an epilogue there would branch in the hot
// loop, so relu stays a generic of its own.

// CHECK-LABEL: func.func @epilogue_needs_parallel_innermost
// CHECK:         %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK:         linalg.generic {{.*}} ins(%[[S]] :
// CHECK:           arith.maximumf

func.func @epilogue_needs_parallel_innermost(%x: tensor<4x9xf32>) -> tensor<4xf32> {
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%0 : tensor<4xf32>) {
  ^bb0(%2: f32):
    %3 = arith.constant 0.000000e+00 : f32
    linalg.yield %3 : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x9xf32>) outs(%1 : tensor<4xf32>) {
  ^bb0(%4: f32, %5: f32):
    %6 = arith.addf %4, %5 fastmath<reassoc,contract> : f32
    linalg.yield %6 : f32
  } -> tensor<4xf32>
  %7 = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<4xf32>) outs(%7 : tensor<4xf32>) {
  ^bb0(%8: f32, %9: f32):
    %10 = arith.constant 0.000000e+00 : f32
    %11 = arith.maximumf %8, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// A matmul whose result is also returned keeps its plain accumulation.

// CHECK-LABEL: func.func @matmul_used_twice
// CHECK:         %[[M:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-NOT:       scf.if
// CHECK:         %[[R:.+]] = linalg.generic {{.*}} ins(%[[M]] :
// CHECK:         func.return %[[M]], %[[R]]

func.func @matmul_used_twice(%a: tensor<2x5xf32>, %w: tensor<5x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%0 : tensor<2x3xf32>) {
  ^bb0(%2: f32):
    %3 = arith.constant 0.000000e+00 : f32
    linalg.yield %3 : f32
  } -> tensor<2x3xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %w : tensor<2x5xf32>, tensor<5x3xf32>) outs(%1 : tensor<2x3xf32>) {
  ^bb0(%4: f32, %5: f32, %6: f32):
    %7 = arith.mulf %4, %5 fastmath<reassoc,contract> : f32
    %8 = arith.addf %6, %7 fastmath<reassoc,contract> : f32
    linalg.yield %8 : f32
  } -> tensor<2x3xf32>
  %9 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<2x3xf32>) outs(%9 : tensor<2x3xf32>) {
  ^bb0(%10: f32, %11: f32):
    %12 = arith.constant 0.000000e+00 : f32
    %13 = arith.maximumf %10, %12 : f32
    linalg.yield %13 : f32
  } -> tensor<2x3xf32>
  func.return %m, %r : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Generics on buffers have no results to fuse and are left alone.

// CHECK-LABEL: func.func @memref_untouched
// CHECK-COUNT-2: linalg.generic
func.func @memref_untouched(%a: memref<4xf32>, %t: memref<4xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  func.return
}

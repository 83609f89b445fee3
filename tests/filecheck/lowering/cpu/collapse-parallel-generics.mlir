// RUN: mlc-opt %s --split-input-file -p collapse-parallel-generics | filecheck %s

// An SGD update of a 1024x10 parameter: identity maps and scalars over contiguous
// buffers, an inner loop of 10. It becomes one loop over the 10240 elements.

// CHECK-LABEL: func.func @sgd_update
// CHECK:         %[[P:.+]] = memref.collapse_shape %p {{\[}}[0 : i64, 1 : i64]] : memref<1024x10xf32> into memref<10240xf32>
// CHECK-NEXT:    %[[G:.+]] = memref.collapse_shape %g {{\[}}[0 : i64, 1 : i64]] : memref<1024x10xf32> into memref<10240xf32>
// CHECK-NEXT:    %[[O:.+]] = memref.collapse_shape %out {{\[}}[0 : i64, 1 : i64]] : memref<1024x10xf32> into memref<10240xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK-SAME:       ins(%[[P]], %lr, %[[G]] : memref<10240xf32>, memref<f32>, memref<10240xf32>) outs(%[[O]] : memref<10240xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.subf
func.func @sgd_update(%p: memref<1024x10xf32>, %lr: memref<f32>, %g: memref<1024x10xf32>, %out: memref<1024x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %lr, %g : memref<1024x10xf32>, memref<f32>, memref<1024x10xf32>) outs(%out : memref<1024x10xf32>) {
  ^bb0(%a: f32, %r: f32, %b: f32, %o: f32):
    %m = arith.mulf %r, %b : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Three dims collapse into one as well.

// CHECK-LABEL: func.func @rank3
// CHECK:         memref.collapse_shape %x {{\[}}[0 : i64, 1 : i64, 2 : i64]] : memref<4x6x3xf32> into memref<72xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
func.func @rank3(%x: memref<4x6x3xf32>, %y: memref<4x6x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<4x6x3xf32>) outs(%y : memref<4x6x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  func.return
}

// -----

// Left alone: an inner loop of 16 or more (it vectorises as it is), a broadcast
// operand, a strided view, a dynamic shape, a reduction, a body reading
// `linalg.index`, a fill without inputs, and a generic on tensors.

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     memref.collapse_shape
// CHECK-COUNT-8: iterator_types = [{{"parallel", "parallel"|"parallel", "reduction"}}]
// CHECK-NOT:     memref.collapse_shape
// CHECK:         func.return
func.func @kept(%wide: memref<64x16xf32>, %wo: memref<64x16xf32>, %bias: memref<10xf32>,
                %x: memref<64x10xf32>, %y: memref<64x10xf32>,
                %view: memref<64x10xf32, strided<[20, 1]>>, %dyn: memref<?x10xf32>,
                %dyno: memref<?x10xf32>, %row: memref<64xf32>, %t: tensor<64x10xf32>) -> tensor<64x10xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%wide : memref<64x16xf32>) outs(%wo : memref<64x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : memref<10xf32>) outs(%y : memref<64x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%view : memref<64x10xf32, strided<[20, 1]>>) outs(%y : memref<64x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dyn : memref<?x10xf32>) outs(%dyno : memref<?x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x10xf32>) outs(%row : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x10xf32>) outs(%y : memref<64x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %s = arith.addf %a, %f : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%y : memref<64x10xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  }
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<64x10xf32>) outs(%t : tensor<64x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<64x10xf32>
  func.return %r : tensor<64x10xf32>
}

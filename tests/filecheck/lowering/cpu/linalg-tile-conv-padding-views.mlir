// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' | filecheck %s

// The image a padded convolution packs from is a view (a reshape of another buffer,
// as the weight gradient's transposed image is): the free of the buffer it views,
// after the padded copy and before the convolution, waits for the kernel, which now
// reads that memory itself.

// CHECK-LABEL: func.func @viewed_image
// CHECK:         %[[T:.+]] = memref.alloc() {{.*}} : memref<2x1x5x6xf32>
// CHECK:         %[[C:.+]] = memref.collapse_shape %[[T]]
// CHECK:         %[[X:.+]] = memref.expand_shape %[[C]]
// CHECK-NOT:     memref.subview
// CHECK-NOT:     memref.dealloc
// CHECK:         "scf.parallel"
// CHECK:           vector.maskedload %[[X]]
// CHECK:           vector.fma
// CHECK:           memref.dealloc
// CHECK:         memref.dealloc %[[T]]
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
func.func @viewed_image(%in: memref<2x1x5x6xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x5x6xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<2x1x5x6xf32>
  "memref.copy"(%in, %t) : (memref<2x1x5x6xf32>, memref<2x1x5x6xf32>) -> ()
  %c = memref.collapse_shape %t [[0, 1, 2, 3]] : memref<2x1x5x6xf32> into memref<60xf32>
  %x = memref.expand_shape %c [[0, 1, 2, 3]] output_shape [1, 2, 5, 6] : memref<60xf32> into memref<1x2x5x6xf32>
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x7x8xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 5, 6] [1, 1, 1, 1] : memref<1x2x7x8xf32> to memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x5x6xf32>) outs(%v : memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  memref.dealloc %t : memref<2x1x5x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x7x8xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x5x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<1x2x7x8xf32>
  func.return
}

// -----

// Not absorbed: between the padded copy and the convolution, the image's memory is
// written through another view of its buffer (the copy holds the old values).

// CHECK-LABEL: func.func @written_through_a_view
// CHECK:         %[[P:.+]] = memref.alloc() {{.*}} : memref<1x2x7x8xf32>
// CHECK:         memref.subview %[[P]]
// CHECK:         memref.store
// CHECK:         vector.maskedload %[[P]]
// CHECK:         memref.dealloc %[[P]]
func.func @written_through_a_view(%t: memref<2x1x5x6xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x5x6xf32>) {
  %c = memref.collapse_shape %t [[0, 1, 2, 3]] : memref<2x1x5x6xf32> into memref<60xf32>
  %x = memref.expand_shape %c [[0, 1, 2, 3]] output_shape [1, 2, 5, 6] : memref<60xf32> into memref<1x2x5x6xf32>
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x7x8xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 5, 6] [1, 1, 1, 1] : memref<1x2x7x8xf32> to memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x5x6xf32>) outs(%v : memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  %one = arith.constant 1.000000e+00 : f32
  %i0 = arith.constant 0 : index
  memref.store %one, %t[%i0, %i0, %i0, %i0] : memref<2x1x5x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x7x8xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x5x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<1x2x7x8xf32>
  func.return
}

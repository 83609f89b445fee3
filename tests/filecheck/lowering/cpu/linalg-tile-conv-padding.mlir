// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' | filecheck %s

// A convolution reading a zero-padded copy of its image (an alloc, a zero fill, a
// copy into a subview at the pads, as convert-ml-to-linalg builds it) packs its B
// panels from the image itself. For each piece of an output row, each column tap
// (kw: three here, unrolled) finds once the run of the piece's columns inside the
// image (two divisions) and its lanes (a pair of masks); then for each channel and
// row tap, an image row inside the image is one masked read per column tap and one
// store (plain for a whole vector, masked for a shorter piece), and one outside it
// zeros. The padded copy is gone, and the free of the image (its last use was the
// copy) waits for the kernel.

// CHECK-LABEL: func.func @padded
// CHECK:         %[[X:.+]] = memref.alloc() {{.*}} : memref<1x2x5x6xf32>
// CHECK-NOT:     memref.subview
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// CHECK:         "scf.parallel"
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         scf.for
// CHECK:           arith.ceildivsi
// CHECK:           %[[L0:.+]] = arith.xori {{.*}} : vector<4xi1>
// CHECK:           %[[L1:.+]] = arith.xori {{.*}} : vector<4xi1>
// CHECK:           %[[L2:.+]] = arith.xori {{.*}} : vector<4xi1>
// CHECK:           scf.if
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 scf.if
// CHECK:                   vector.maskedload %[[X]][{{.*}}], %[[L0]]
// CHECK-NEXT:              vector.store {{.*}}, %[[P]]
// CHECK:                   vector.maskedload %[[X]][{{.*}}], %[[L1]]
// CHECK-NEXT:              vector.store {{.*}}, %[[P]]
// CHECK:                   vector.maskedload %[[X]][{{.*}}], %[[L2]]
// CHECK-NEXT:              vector.store {{.*}}, %[[P]]
// CHECK:                 } else {
// CHECK:                   vector.maskedstore %[[P]]
// CHECK:           } else {
// CHECK:                   vector.maskedload %[[X]][{{.*}}], %[[L0]]
// CHECK-NEXT:              vector.maskedstore %[[P]]
// CHECK:           vector.fma
// CHECK:           memref.dealloc %[[P]]
// CHECK:         memref.dealloc %[[X]]
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @padded(%in: memref<1x2x5x6xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x5x6xf32>) {
  %x = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x6xf32>
  "memref.copy"(%in, %x) : (memref<1x2x5x6xf32>, memref<1x2x5x6xf32>) -> ()
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
  memref.dealloc %x : memref<1x2x5x6xf32>
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

// Stride 2, asymmetric pads: the run is read as two masked vectors of the image row,
// their even lanes kept.

// CHECK-LABEL: func.func @padded_stride2
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<2x3x9x9xf32>
// CHECK-NOT:     memref.subview
// CHECK:         scf.for
// CHECK:           %[[E:.+]] = vector.maskedload %[[X]]
// CHECK:           %[[O:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:      %[[V:.+]] = vector.shuffle %[[E]], %[[O]] [0, 2, 4, 6]
// CHECK-NEXT:      vector.store %[[V]]
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @padded_stride2(%x: memref<2x3x9x9xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x5x5xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<2x3x11x11xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<2x3x11x11xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 0, 1] [2, 3, 9, 9] [1, 1, 1, 1] : memref<2x3x11x11xf32> to memref<2x3x9x9xf32, strided<[363, 121, 11, 1], offset: 1>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x9x9xf32>) outs(%v : memref<2x3x9x9xf32, strided<[363, 121, 11, 1], offset: 1>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 * 2 + d4, d6 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<2x3x11x11xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<2x3x11x11xf32>
  func.return
}

// -----

// Not absorbed: a padding of ones (the packing writes zeros only).

// CHECK-LABEL: func.func @padded_ones
// CHECK:         %[[P:.+]] = memref.alloc() {{.*}} : memref<1x2x7x8xf32>
// CHECK:         linalg.generic
// CHECK:         memref.subview %[[P]]
// CHECK:         linalg.generic
// CHECK:         vector.maskedload %[[P]]
func.func @padded_ones(%x: memref<1x2x5x6xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x5x6xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x7x8xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 1.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 5, 6] [1, 1, 1, 1] : memref<1x2x7x8xf32> to memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x5x6xf32>) outs(%v : memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
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

// Not absorbed: stride 3 (the packing goes an element at a time through the copy).

// CHECK-LABEL: func.func @padded_stride3
// CHECK:         %[[P:.+]] = memref.alloc() {{.*}} : memref<1x2x11x11xf32>
// CHECK:         memref.subview %[[P]]
// CHECK:         memref.load %[[P]]
func.func @padded_stride3(%x: memref<1x2x9x9xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x3x3xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x11x11xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x11x11xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 9, 9] [1, 1, 1, 1] : memref<1x2x11x11xf32> to memref<1x2x9x9xf32, strided<[242, 121, 11, 1], offset: 12>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x9x9xf32>) outs(%v : memref<1x2x9x9xf32, strided<[242, 121, 11, 1], offset: 12>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 * 3 + d4, d6 * 3 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x11x11xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<1x2x11x11xf32>
  func.return
}

// -----

// Not absorbed: output rows of 2 divide the vector; whole rows of the padded copy are
// gathered side by side instead.

// CHECK-LABEL: func.func @padded_rows_of_2
// CHECK:         %[[P:.+]] = memref.alloc() {{.*}} : memref<1x2x6x4xf32>
// CHECK:         memref.subview %[[P]]
// CHECK:         vector.load %[[P]]
// CHECK:         vector.shuffle
func.func @padded_rows_of_2(%x: memref<1x2x4x2xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x4x2xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x6x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x6x4xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 4, 2] [1, 1, 1, 1] : memref<1x2x6x4xf32> to memref<1x2x4x2xf32, strided<[48, 24, 4, 1], offset: 5>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x4x2xf32>) outs(%v : memref<1x2x4x2xf32, strided<[48, 24, 4, 1], offset: 5>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x6x4xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<1x2x6x4xf32>
  func.return
}

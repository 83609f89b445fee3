// RUN: mlc-opt %s --split-input-file -p convert-contractions-to-gpu | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-contractions-to-gpu --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-contractions-to-gpu --remarks > /dev/null

// Convolutions as implicit GEMMs through the tiled contraction kernel: rows are the
// filters, columns the output pixels (n, oh, ow), K is (c, kh, kw). The weight is read
// through a collapsed [f, c*kh*kw] view made in the kernel; the image slice is gathered
// from the unpadded image, zero outside it (unsigned compares, selects): the padded
// copy the linalg stage made (alloc, zero fill, copy into a subview) goes. The tile's
// rows follow the filter count (16: 16x128 tiles of 128 threads, A's shared tile
// 2x8x20; 32: 32x128; 64: 64x128; more: the matmul's 128x128 and 64x64; for grids of
// fewer than 264 blocks 16x32 and 32x32 tiles, 16 deep), and the
// fused epilogue (here a bias along the last dim and a relu) runs before each store.

// CHECK-LABEL: func.func @conv3x3
// CHECK-NOT:     linalg.generic
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<2x8x20xf32, 3 : i64>
// CHECK-NEXT:      memref.collapse_shape %w {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] : memref<16x8x3x3xf32> into memref<16x72xf32>
// CHECK-NEXT:      memref.alloca() : memref<2x8x136xf32, 3 : i64>
// CHECK:           memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<16x72xf32>
// CHECK:           %[[IN:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-NEXT:      %[[ROW:.+]] = arith.select %[[IN]], %{{.+}}, %{{.+}} : index
// CHECK-NEXT:      %[[COL:.+]] = arith.select %[[IN]], %{{.+}}, %{{.+}} : index
// CHECK-NEXT:      %[[PX:.+]] = memref.load %x[%{{.+}}, %{{.+}}, %[[ROW]], %[[COL]]] : memref<?x8x16x16xf32>
// CHECK-NEXT:      arith.select %[[IN]], %[[PX]], %{{.+}} : f32
// CHECK:           scf.for
// CHECK:             gpu.barrier
// CHECK-COUNT-16:    math.fma
// CHECK:           memref.load %b[%{{.+}}] : memref<16xf32>
// CHECK-NEXT:      arith.addf
// CHECK:           arith.maximumf
// CHECK-NEXT:      memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<?x16x16x16xf32>
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<2x16x20xf32, 3 : i64>
// CHECK:           memref.alloca() : memref<2x16x40xf32, 3 : i64>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return

// LOC:           "gpu.launch"{{.*}}
// LOC:           memref.collapse_shape {{.*}} loc("cnn.py":3:4)
// LOC:           memref.load %x{{.*}} loc("cnn.py":3:4)
// LOC:           math.fma {{.*}} loc("cnn.py":3:4)

func.func @conv3x3(%x: memref<?x8x16x16xf32>, %w: memref<16x8x3x3xf32>, %b: memref<16xf32>) -> memref<?x16x16x16xf32> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x8x16x16xf32>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x8x18x18xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : memref<?x8x18x18xf32>) {
  ^bb0(%3: f32):
    %4 = arith.constant 0.000000e+00 : f32
    linalg.yield %4 : f32
  }
  %5 = memref.subview %2[0, 0, 1, 1] [%1, 8, 16, 16] [1, 1, 1, 1] : memref<?x8x18x18xf32> to memref<?x8x16x16xf32, strided<[2592, 324, 18, 1], offset: 19>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<?x8x16x16xf32>) outs(%5 : memref<?x8x16x16xf32, strided<[2592, 324, 18, 1], offset: 19>>) {
  ^bb0(%6: f32, %7: f32):
    linalg.yield %6 : f32
  }
  %8 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x16x16x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%8 : memref<?x16x16x16xf32>) {
  ^bb0(%9: f32):
    %10 = arith.constant 0.000000e+00 : f32
    linalg.yield %10 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, (d2 + d4), (d6 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%2, %w, %b : memref<?x8x18x18xf32>, memref<16x8x3x3xf32>, memref<16xf32>) outs(%8 : memref<?x16x16x16xf32>) {
  ^bb0(%11: f32, %12: f32, %13: f32, %14: f32):
    %15 = arith.mulf %11, %12 fastmath<reassoc,contract> : f32
    %16 = arith.addf %14, %15 fastmath<reassoc,contract> : f32
    %17 = arith.constant 7 : index
    %18 = linalg.index 3 : index
    %19 = arith.cmpi eq, %18, %17 : index
    %20 = arith.constant 2 : index
    %21 = linalg.index 4 : index
    %22 = arith.cmpi eq, %21, %20 : index
    %23 = arith.andi %19, %22 : i1
    %24 = linalg.index 5 : index
    %25 = arith.cmpi eq, %24, %20 : index
    %26 = arith.andi %23, %25 : i1
    %27 = scf.if %26 -> (f32) {
      %28 = arith.addf %16, %13 : f32
      %29 = arith.constant 0.000000e+00 : f32
      %30 = arith.maximumf %28, %29 : f32
      scf.yield %30 : f32
    } else {
      scf.yield %16 : f32
    }
    linalg.yield %27 : f32
  } loc("cnn.py":3:4)
  memref.dealloc %2 : memref<?x8x18x18xf32>
  func.return %8 : memref<?x16x16x16xf32>
}

// -----

// Stride 2 and 32 filters: 32x128 tiles, or 32x32 ones 16 deep when those would be
// too few blocks. The sizes are static: 1024 output pixels make 8 blocks of 32x128,
// so only the 32x32 variant is built (A's tile 2x16x36, B's 2x16x40), in the else
// branch of the host's choice; the other branch, folded away later, stays empty.

// CHECK-LABEL: func.func @stride2
// CHECK-NOT:     linalg.generic
// CHECK:         scf.if %{{.+}} {
// CHECK-NEXT:    } else {
// CHECK:           "gpu.launch"
// CHECK:           memref.alloca() : memref<2x16x36xf32, 3 : i64>
// CHECK-NEXT:      memref.collapse_shape %w {{.*}} : memref<32x16x3x3xf32> into memref<32x144xf32>
// CHECK-NEXT:      memref.alloca() : memref<2x16x40xf32, 3 : i64>
// CHECK:           arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK:           memref.load %x[{{.*}}] : memref<4x16x32x32xf32>
// CHECK-NOT:       "gpu.launch"
// CHECK:         func.return

func.func @stride2(%x: memref<4x16x32x32xf32>, %w: memref<32x16x3x3xf32>) -> memref<4x32x16x16xf32> {
  %0 = memref.alloc() {alignment = 64 : i64} : memref<4x16x34x34xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%0 : memref<4x16x34x34xf32>) {
  ^bb0(%1: f32):
    %2 = arith.constant 0.000000e+00 : f32
    linalg.yield %2 : f32
  }
  %3 = memref.subview %0[0, 0, 1, 1] [4, 16, 32, 32] [1, 1, 1, 1] : memref<4x16x34x34xf32> to memref<4x16x32x32xf32, strided<[18496, 1156, 34, 1], offset: 35>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<4x16x32x32xf32>) outs(%3 : memref<4x16x32x32xf32, strided<[18496, 1156, 34, 1], offset: 35>>) {
  ^bb0(%4: f32, %5: f32):
    linalg.yield %4 : f32
  }
  %6 = memref.alloc() {alignment = 64 : i64} : memref<4x32x16x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%6 : memref<4x32x16x16xf32>) {
  ^bb0(%7: f32):
    %8 = arith.constant 0.000000e+00 : f32
    linalg.yield %8 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%0, %w : memref<4x16x34x34xf32>, memref<32x16x3x3xf32>) outs(%6 : memref<4x32x16x16xf32>) {
  ^bb0(%9: f32, %10: f32, %11: f32):
    %12 = arith.mulf %9, %10 fastmath<reassoc,contract> : f32
    %13 = arith.addf %11, %12 fastmath<reassoc,contract> : f32
    linalg.yield %13 : f32
  }
  memref.dealloc %0 : memref<4x16x34x34xf32>
  func.return %6 : memref<4x32x16x16xf32>
}

// -----

// The image is written after the padded copy is made: the kernel reads the copy (no
// predicate), which stays.

// CHECK-LABEL: func.func @written_between
// CHECK:         memref.alloc() {{.*}} : memref<4x16x34x34xf32>
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK:         memref.store
// CHECK:         "gpu.launch"
// CHECK-NOT:       arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK:           memref.load %{{.+}}[{{.*}}] : memref<4x16x34x34xf32>
// CHECK:         memref.dealloc %{{.+}} : memref<4x16x34x34xf32>

func.func @written_between(%x: memref<4x16x32x32xf32>, %w: memref<32x16x3x3xf32>) -> memref<4x32x16x16xf32> {
  %0 = memref.alloc() {alignment = 64 : i64} : memref<4x16x34x34xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%0 : memref<4x16x34x34xf32>) {
  ^bb0(%1: f32):
    %2 = arith.constant 0.000000e+00 : f32
    linalg.yield %2 : f32
  }
  %3 = memref.subview %0[0, 0, 1, 1] [4, 16, 32, 32] [1, 1, 1, 1] : memref<4x16x34x34xf32> to memref<4x16x32x32xf32, strided<[18496, 1156, 34, 1], offset: 35>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<4x16x32x32xf32>) outs(%3 : memref<4x16x32x32xf32, strided<[18496, 1156, 34, 1], offset: 35>>) {
  ^bb0(%4: f32, %5: f32):
    linalg.yield %4 : f32
  }
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %x[%c0, %c0, %c0, %c0] : memref<4x16x32x32xf32>
  %6 = memref.alloc() {alignment = 64 : i64} : memref<4x32x16x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%6 : memref<4x32x16x16xf32>) {
  ^bb0(%7: f32):
    %8 = arith.constant 0.000000e+00 : f32
    linalg.yield %8 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%0, %w : memref<4x16x34x34xf32>, memref<32x16x3x3xf32>) outs(%6 : memref<4x32x16x16xf32>) {
  ^bb0(%9: f32, %10: f32, %11: f32):
    %12 = arith.mulf %9, %10 fastmath<reassoc,contract> : f32
    %13 = arith.addf %11, %12 fastmath<reassoc,contract> : f32
    linalg.yield %13 : f32
  }
  memref.dealloc %0 : memref<4x16x34x34xf32>
  func.return %6 : memref<4x32x16x16xf32>
}

// -----

// The bias of `ml.conv2d` is broadcast into the output before the convolution: the
// accumulators start at it (one load of b[f] per row) and the broadcast goes.

// CHECK-LABEL: func.func @bias
// CHECK-NOT:     linalg.generic
// CHECK:         "gpu.launch"
// CHECK:           memref.load %b[%{{.+}}] : memref<8xf32>
// CHECK:           scf.for
// CHECK-NOT:     linalg.generic
// CHECK:         func.return

func.func @bias(%x: memref<?x5x7x9xf32>, %w: memref<8x5x3x3xf32>, %b: memref<8xf32>) -> memref<?x8x4x5xf32> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x5x7x9xf32>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x5x9x11xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : memref<?x5x9x11xf32>) {
  ^bb0(%3: f32):
    %4 = arith.constant 0.000000e+00 : f32
    linalg.yield %4 : f32
  }
  %5 = memref.subview %2[0, 0, 1, 1] [%1, 5, 7, 9] [1, 1, 1, 1] : memref<?x5x9x11xf32> to memref<?x5x7x9xf32, strided<[495, 99, 11, 1], offset: 12>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<?x5x7x9xf32>) outs(%5 : memref<?x5x7x9xf32, strided<[495, 99, 11, 1], offset: 12>>) {
  ^bb0(%6: f32, %7: f32):
    linalg.yield %6 : f32
  }
  %8 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x8x4x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<8xf32>) outs(%8 : memref<?x8x4x5xf32>) {
  ^bb0(%9: f32, %10: f32):
    linalg.yield %9 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%2, %w : memref<?x5x9x11xf32>, memref<8x5x3x3xf32>) outs(%8 : memref<?x8x4x5xf32>) {
  ^bb0(%11: f32, %12: f32, %13: f32):
    %14 = arith.mulf %11, %12 fastmath<reassoc,contract> : f32
    %15 = arith.addf %13, %14 fastmath<reassoc,contract> : f32
    %16 = arith.constant 4 : index
    %17 = linalg.index 3 : index
    %18 = arith.cmpi eq, %17, %16 : index
    %19 = arith.constant 2 : index
    %20 = linalg.index 4 : index
    %21 = arith.cmpi eq, %20, %19 : index
    %22 = arith.andi %18, %21 : i1
    %23 = linalg.index 5 : index
    %24 = arith.cmpi eq, %23, %19 : index
    %25 = arith.andi %22, %24 : i1
    %26 = scf.if %25 -> (f32) {
      %27 = arith.constant 0.000000e+00 : f32
      %28 = arith.maximumf %15, %27 : f32
      scf.yield %28 : f32
    } else {
      scf.yield %15 : f32
    }
    linalg.yield %26 : f32
  }
  memref.dealloc %2 : memref<?x5x9x11xf32>
  func.return %8 : memref<?x8x4x5xf32>
}

// -----

// A 1x1 convolution has no padding, so no predicate: the image is read as it is. 128
// filters take the matmul's tiles; the weight's runs of 4 along K are 16-byte loads
// when its view is aligned.

// CHECK-LABEL: func.func @conv1x1
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<2x8x132xf32, 3 : i64>
// CHECK-NEXT:      memref.collapse_shape %w {{.*}} : memref<128x64x1x1xf32> into memref<128x64xf32>
// CHECK:           vector.load %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<128x64xf32>, vector<4xf32>
// CHECK-NOT:       arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK:         func.return

func.func @conv1x1(%x: memref<?x64x8x8xf32>, %w: memref<128x64x1x1xf32>) -> memref<?x128x8x8xf32> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x64x8x8xf32>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x128x8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : memref<?x128x8x8xf32>) {
  ^bb0(%3: f32):
    %4 = arith.constant 0.000000e+00 : f32
    linalg.yield %4 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, (d2 + d4), (d6 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<?x64x8x8xf32>, memref<128x64x1x1xf32>) outs(%2 : memref<?x128x8x8xf32>) {
  ^bb0(%5: f32, %6: f32, %7: f32):
    %8 = arith.mulf %5, %6 fastmath<reassoc,contract> : f32
    %9 = arith.addf %7, %8 fastmath<reassoc,contract> : f32
    linalg.yield %9 : f32
  }
  func.return %2 : memref<?x128x8x8xf32>
}

// -----

// A 7x7 stride-2 first convolution on 3 channels (K = 147) with padding 3.

// CHECK-LABEL: func.func @stem7x7
// CHECK-NOT:     linalg.generic
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<2x8x20xf32, 3 : i64>
// CHECK-NEXT:      memref.collapse_shape %w {{.*}} : memref<16x3x7x7xf32> into memref<16x147xf32>
// CHECK:           arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK:           memref.load %x[{{.*}}] : memref<?x3x32x32xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         func.return

func.func @stem7x7(%x: memref<?x3x32x32xf32>, %w: memref<16x3x7x7xf32>) -> memref<?x16x16x16xf32> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x3x32x32xf32>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x3x38x38xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : memref<?x3x38x38xf32>) {
  ^bb0(%3: f32):
    %4 = arith.constant 0.000000e+00 : f32
    linalg.yield %4 : f32
  }
  %5 = memref.subview %2[0, 0, 3, 3] [%1, 3, 32, 32] [1, 1, 1, 1] : memref<?x3x38x38xf32> to memref<?x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<?x3x32x32xf32>) outs(%5 : memref<?x3x32x32xf32, strided<[4332, 1444, 38, 1], offset: 117>>) {
  ^bb0(%6: f32, %7: f32):
    linalg.yield %6 : f32
  }
  %8 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x16x16x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%8 : memref<?x16x16x16xf32>) {
  ^bb0(%9: f32):
    %10 = arith.constant 0.000000e+00 : f32
    linalg.yield %10 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%2, %w : memref<?x3x38x38xf32>, memref<16x3x7x7xf32>) outs(%8 : memref<?x16x16x16xf32>) {
  ^bb0(%11: f32, %12: f32, %13: f32):
    %14 = arith.mulf %11, %12 fastmath<reassoc,contract> : f32
    %15 = arith.addf %13, %14 fastmath<reassoc,contract> : f32
    linalg.yield %15 : f32
  }
  memref.dealloc %2 : memref<?x3x38x38xf32>
  func.return %8 : memref<?x16x16x16xf32>
}

// -----

// Declined, with a remark: a grouped convolution (a loop more), and a small static
// one, which the loop mapping gives a warp an output.

// CHECK-LABEL: func.func @grouped
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic

func.func @grouped(%x: memref<?x8x16x16xf32>, %w: memref<16x4x3x3xf32>) -> memref<?x16x14x14xf32> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x8x16x16xf32>
  %2 = memref.expand_shape %w [[0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64]] output_shape [2, 8, 4, 3, 3] : memref<16x4x3x3xf32> into memref<2x8x4x3x3xf32>
  %3 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x2x8x14x14xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%3 : memref<?x2x8x14x14xf32>) {
  ^bb0(%4: f32):
    %5 = arith.constant 0.000000e+00 : f32
    linalg.yield %5 : f32
  }
  // expected-remark @+1 {{convolution left to the loop mapping: not a 2-D convolution without groups (4 parallel and 3 reduction loops, got 5 and 3)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, ((d1 * 4) + d4), (d3 + d5), (d7 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %2 : memref<?x8x16x16xf32>, memref<2x8x4x3x3xf32>) outs(%3 : memref<?x2x8x14x14xf32>) {
  ^bb0(%6: f32, %7: f32, %8: f32):
    %9 = arith.mulf %6, %7 fastmath<reassoc,contract> : f32
    %10 = arith.addf %8, %9 fastmath<reassoc,contract> : f32
    linalg.yield %10 : f32
  }
  %11 = memref.collapse_shape %3 [[0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] : memref<?x2x8x14x14xf32> into memref<?x16x14x14xf32>
  %12 = memref.dim %11, %0 : memref<?x16x14x14xf32>
  %13 = memref.alloc(%12) {alignment = 64 : i64} : memref<?x16x14x14xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : memref<?x16x14x14xf32>) outs(%13 : memref<?x16x14x14xf32>) {
  ^bb0(%14: f32, %15: f32):
    linalg.yield %14 : f32
  }
  memref.dealloc %3 : memref<?x2x8x14x14xf32>
  func.return %13 : memref<?x16x14x14xf32>
}

// -----

// CHECK-LABEL: func.func @small
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic

func.func @small(%x: memref<1x8x8x8xf32>, %w: memref<8x8x3x3xf32>) -> memref<1x8x6x6xf32> {
  %0 = memref.alloc() {alignment = 64 : i64} : memref<1x8x6x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%0 : memref<1x8x6x6xf32>) {
  ^bb0(%1: f32):
    %2 = arith.constant 0.000000e+00 : f32
    linalg.yield %2 : f32
  }
  // expected-remark @+1 {{convolution left to the loop mapping: 288 outputs (fewer than 32768: a warp each)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, (d2 + d4), (d6 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x8x8x8xf32>, memref<8x8x3x3xf32>) outs(%0 : memref<1x8x6x6xf32>) {
  ^bb0(%3: f32, %4: f32, %5: f32):
    %6 = arith.mulf %3, %4 fastmath<reassoc,contract> : f32
    %7 = arith.addf %5, %6 fastmath<reassoc,contract> : f32
    linalg.yield %7 : f32
  }
  func.return %0 : memref<1x8x6x6xf32>
}

// -----

// A computed bias freed once broadcast (the broadcast was its last use): the kernel
// reads it, so its free moves after the kernel, as the CPU's depthwise kernel does.

// CHECK-LABEL: func.func @bias_freed_before
// CHECK-NOT:     memref.dealloc
// CHECK:         "gpu.launch"
// CHECK:           memref.load %bias
// CHECK:         memref.dealloc %bias : memref<8xf32>
// CHECK-NEXT:    func.return

func.func @bias_freed_before(%x: memref<?x5x9x11xf32>, %w: memref<8x5x3x3xf32>) -> memref<?x8x4x5xf32> {
  %0 = arith.constant 0 : index
  %n = memref.dim %x, %0 : memref<?x5x9x11xf32>
  %bias = memref.alloc() : memref<8xf32>
  "test.op"(%bias) : (memref<8xf32>) -> ()
  %y = memref.alloc(%n) : memref<?x8x4x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : memref<8xf32>) outs(%y : memref<?x8x4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  memref.dealloc %bias : memref<8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<?x5x9x11xf32>, memref<8x5x3x3xf32>) outs(%y : memref<?x8x4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return %y : memref<?x8x4x5xf32>
}

// -----

// A bias written between its broadcast and the convolution is not the bias the
// output starts at: the broadcast stays, and the kernel adds to the output.

// CHECK-LABEL: func.func @bias_written_between
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%bias : memref<8xf32>)
// CHECK:         "test.op"(%bias)
// CHECK:         "gpu.launch"
// CHECK:         func.return

func.func @bias_written_between(%x: memref<?x5x9x11xf32>, %w: memref<8x5x3x3xf32>) -> memref<?x8x4x5xf32> {
  %0 = arith.constant 0 : index
  %n = memref.dim %x, %0 : memref<?x5x9x11xf32>
  %bias = memref.alloc() : memref<8xf32>
  "test.op"(%bias) : (memref<8xf32>) -> ()
  %y = memref.alloc(%n) : memref<?x8x4x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : memref<8xf32>) outs(%y : memref<?x8x4x5xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  "test.op"(%bias) : (memref<8xf32>) -> ()
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<?x5x9x11xf32>, memref<8x5x3x3xf32>) outs(%y : memref<?x8x4x5xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %p = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %bias : memref<8xf32>
  func.return %y : memref<?x8x4x5xf32>
}

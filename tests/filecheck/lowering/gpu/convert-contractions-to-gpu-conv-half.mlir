// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=80}' --print-debuginfo | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=75}' | filecheck %s --check-prefix=SM75
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=75}' --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// f16 and bf16 convolutions are implicit GEMMs on the tensor cores from sm_80 on: the
// 16-bit tiles of the matmul's path (64 rows for at most 64 filters: A's tile 4x64x24,
// B's 4x16x136; 128x128 tiles beyond; for small grids 64x64, 16 deep when the image
// is gathered, 32 deep when it is copied), the weight staged through its
// [f, c*kh*kw] view, the image gathered from the unpadded
// image into B's tile (zero outside it, in the element type) with no im2col buffer,
// `ldmatrix` fragments (`.trans` for the [k, pixels] tile), `mma.sync.m16n8k16` into
// f32 accumulators that start at the bias (widened), the fused epilogue (a relu) in
// f32 on each accumulator (its constant an f32 one), rounded to the element type once,
// at the store.
// A padded 3x3 stride-2 convolution gathers its image through registers: no cp.async.

// CHECK-LABEL: func.func @conv3x3_bf16
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     cp.async
// CHECK-NOT:     math.fma
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<4x64x24xbf16, 3 : i64>
// CHECK-NEXT:      memref.collapse_shape %w {{.*}} : memref<8x5x3x3xbf16> into memref<8x45xbf16> loc("cnn.py":5:6)
// CHECK-NEXT:      memref.alloca() : memref<4x16x136xbf16, 3 : i64>
// CHECK:           memref.load %b[%{{.+}}] : memref<8xbf16>
// CHECK-NEXT:      arith.extf %{{.+}} : bf16 to f32
// CHECK:           %[[ZERO:.+]] = arith.constant 0.000000e+00 : bf16
// CHECK:           %[[IN:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-NEXT:      %[[ROW:.+]] = arith.select %[[IN]], %{{.+}}, %{{.+}} : index
// CHECK-NEXT:      %[[COL:.+]] = arith.select %[[IN]], %{{.+}}, %{{.+}} : index
// CHECK-NEXT:      %[[PX:.+]] = memref.load %x[%{{.+}}, %{{.+}}, %[[ROW]], %[[COL]]] : memref<?x5x7x9xbf16>
// CHECK-NEXT:      arith.select %[[IN]], %[[PX]], %[[ZERO]] : bf16
// CHECK:           scf.for
// CHECK:             memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<4x16x136xbf16, 3 : i64>
// CHECK:             gpu.barrier
// CHECK:             ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK:             ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK:             mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32{{.*}} loc("cnn.py":5:6)
// CHECK:           arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:      arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT:      memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<?x8x4x5xbf16>
// CHECK-NOT:     cp.async
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<4x64x24xbf16, 3 : i64>
// CHECK:           memref.alloca() : memref<4x16x72xbf16, 3 : i64>
// CHECK-NOT:     cp.async
// CHECK-NOT:     math.fma
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return


// SM75-LABEL: func.func @conv3x3_bf16
// SM75-NOT:     gpu.launch
// SM75:         linalg.generic

func.func @conv3x3_bf16(%x: memref<?x5x7x9xbf16>, %w: memref<8x5x3x3xbf16>, %b: memref<8xbf16>) -> memref<?x8x4x5xbf16> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x5x7x9xbf16>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x5x9x11xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : memref<?x5x9x11xbf16>) {
  ^bb0(%3: bf16):
    %4 = arith.constant 0.000000e+00 : bf16
    linalg.yield %4 : bf16
  }
  %5 = memref.subview %2[0, 0, 1, 1] [%1, 5, 7, 9] [1, 1, 1, 1] : memref<?x5x9x11xbf16> to memref<?x5x7x9xbf16, strided<[495, 99, 11, 1], offset: 12>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<?x5x7x9xbf16>) outs(%5 : memref<?x5x7x9xbf16, strided<[495, 99, 11, 1], offset: 12>>) {
  ^bb0(%6: bf16, %7: bf16):
    linalg.yield %6 : bf16
  }
  %8 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x8x4x5xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<8xbf16>) outs(%8 : memref<?x8x4x5xbf16>) {
  ^bb0(%9: bf16, %10: bf16):
    linalg.yield %9 : bf16
  }
  // REMARK: cnn.py:5:6: remark: 'linalg.generic' op 16-bit contraction left to the loop mapping: sm_75 has no m16n8k16 mma.sync (sm_80 on)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%2, %w : memref<?x5x9x11xbf16>, memref<8x5x3x3xbf16>) outs(%8 : memref<?x8x4x5xbf16>) {
  ^bb0(%11: bf16, %12: bf16, %13: bf16):
    %14 = arith.mulf %11, %12 fastmath<reassoc,contract> : bf16
    %15 = arith.addf %13, %14 fastmath<reassoc,contract> : bf16
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
    %26 = scf.if %25 -> (bf16) {
      %27 = arith.constant 0.000000e+00 : bf16
      %28 = arith.maximumf %15, %27 : bf16
      scf.yield %28 : bf16
    } else {
      scf.yield %15 : bf16
    }
    linalg.yield %26 : bf16
  } loc("cnn.py":5:6)
  memref.dealloc %2 : memref<?x5x9x11xbf16>
  func.return %8 : memref<?x8x4x5xbf16>
}


// -----

// A 1x1 stride-1 convolution without padding is a matmul on the NCHW image: when the
// image is 16-byte aligned and h * w a multiple of 8 (checked at run time with the
// weight's rows), both operands take the 4-stage cp.async pipeline, the image's
// copies 8 pixels of one channel each; otherwise the same gather through registers.
// 128 filters take the matmul's 128x128 tile.

// CHECK-LABEL: func.func @conv1x1_f16
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<4x128x24xf16, 3 : i64>
// CHECK-NEXT:      memref.collapse_shape %w {{.*}} : memref<128x64x1x1xf16> into memref<128x64xf16>
// CHECK-NEXT:      memref.alloca() : memref<4x16x136xf16, 3 : i64>
// CHECK:           "memref.extract_aligned_pointer_as_index"(%{{.+}}) : (memref<128x64xf16>) -> index
// CHECK:           "memref.extract_aligned_pointer_as_index"(%x) : (memref<?x64x8x8xf16>) -> index
// CHECK:           scf.if
// CHECK:             cp.async.cg.shared.global [$0], [ga], 16, $2;
// CHECK:             cp.async.commit_group;
// CHECK:             scf.for
// CHECK:               cp.async.wait_group 2;
// CHECK:               mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:           } else {
// CHECK-NOT:         cp.async
// CHECK:             memref.load %x[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<?x64x8x8xf16>
// CHECK:             mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:           arith.truncf %{{.+}} : f32 to f16
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<4x64x40xf16, 3 : i64>
// CHECK:           cp.async.cg.shared.global
// CHECK:         func.return

// SM75-LABEL: func.func @conv1x1_f16
// SM75-NOT:     gpu.launch
// SM75:         linalg.generic

func.func @conv1x1_f16(%x: memref<?x64x8x8xf16>, %w: memref<128x64x1x1xf16>) -> memref<?x128x8x8xf16> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x64x8x8xf16>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x128x8x8xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : memref<?x128x8x8xf16>) {
  ^bb0(%3: f16):
    %4 = arith.constant 0.000000e+00 : f16
    linalg.yield %4 : f16
  }
  // REMARK: convert-contractions-to-gpu-conv-half.mlir:[[# @LINE + 1]]:3: remark: 'linalg.generic' op 16-bit contraction left to the loop mapping: sm_75 has no m16n8k16 mma.sync (sm_80 on)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, (d2 + d4), (d6 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<?x64x8x8xf16>, memref<128x64x1x1xf16>) outs(%2 : memref<?x128x8x8xf16>) {
  ^bb0(%5: f16, %6: f16, %7: f16):
    %8 = arith.mulf %5, %6 fastmath<reassoc,contract> : f16
    %9 = arith.addf %7, %8 fastmath<reassoc,contract> : f16
    linalg.yield %9 : f16
  }
  func.return %2 : memref<?x128x8x8xf16>
}

// -----

// The 7x7 stride-2 stem on 3 channels: K = 147 is no multiple of 8, so the weight too
// is staged element by element through registers (no cp.async).

// CHECK-LABEL: func.func @stem7x7_f16
// CHECK-NOT:     linalg.generic
// CHECK:         "gpu.launch"
// CHECK:           memref.alloca() : memref<4x64x24xf16, 3 : i64>
// CHECK-NEXT:      memref.collapse_shape %w {{.*}} : memref<16x3x7x7xf16> into memref<16x147xf16>
// CHECK:           arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK:           memref.load %x[{{.*}}] : memref<?x3x32x32xf16>
// CHECK-NOT:       cp.async
// CHECK:           mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     cp.async
// CHECK:         func.return

func.func @stem7x7_f16(%x: memref<?x3x32x32xf16>, %w: memref<16x3x7x7xf16>) -> memref<?x16x16x16xf16> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x3x32x32xf16>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x3x38x38xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : memref<?x3x38x38xf16>) {
  ^bb0(%3: f16):
    %4 = arith.constant 0.000000e+00 : f16
    linalg.yield %4 : f16
  }
  %5 = memref.subview %2[0, 0, 3, 3] [%1, 3, 32, 32] [1, 1, 1, 1] : memref<?x3x38x38xf16> to memref<?x3x32x32xf16, strided<[4332, 1444, 38, 1], offset: 117>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<?x3x32x32xf16>) outs(%5 : memref<?x3x32x32xf16, strided<[4332, 1444, 38, 1], offset: 117>>) {
  ^bb0(%6: f16, %7: f16):
    linalg.yield %6 : f16
  }
  %8 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x16x16x16xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%8 : memref<?x16x16x16xf16>) {
  ^bb0(%9: f16):
    %10 = arith.constant 0.000000e+00 : f16
    linalg.yield %10 : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, ((d2 * 2) + d4), ((d6 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%2, %w : memref<?x3x38x38xf16>, memref<16x3x7x7xf16>) outs(%8 : memref<?x16x16x16xf16>) {
  ^bb0(%11: f16, %12: f16, %13: f16):
    %14 = arith.mulf %11, %12 fastmath<reassoc,contract> : f16
    %15 = arith.addf %13, %14 fastmath<reassoc,contract> : f16
    linalg.yield %15 : f16
  }
  memref.dealloc %2 : memref<?x3x38x38xf16>
  func.return %8 : memref<?x16x16x16xf16>
}

// -----

// Grouped and depthwise convolutions keep the loop mapping, with a remark (on every
// target: this one is not an implicit GEMM).

// CHECK-LABEL: func.func @grouped_bf16
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic

func.func @grouped_bf16(%x: memref<?x8x16x16xbf16>, %w: memref<16x4x3x3xbf16>) -> memref<?x16x14x14xbf16> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x8x16x16xbf16>
  %2 = memref.expand_shape %w [[0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64]] output_shape [2, 8, 4, 3, 3] : memref<16x4x3x3xbf16> into memref<2x8x4x3x3xbf16>
  %3 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x2x8x14x14xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%3 : memref<?x2x8x14x14xbf16>) {
  ^bb0(%4: bf16):
    %5 = arith.constant 0.000000e+00 : bf16
    linalg.yield %5 : bf16
  }
  // REMARK: convert-contractions-to-gpu-conv-half.mlir:[[# @LINE + 1]]:3: remark: 'linalg.generic' op convolution left to the loop mapping: not a 2-D convolution without groups (4 parallel and 3 reduction loops, got 5 and 3)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, ((d1 * 4) + d4), (d3 + d5), (d7 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %2 : memref<?x8x16x16xbf16>, memref<2x8x4x3x3xbf16>) outs(%3 : memref<?x2x8x14x14xbf16>) {
  ^bb0(%6: bf16, %7: bf16, %8: bf16):
    %9 = arith.mulf %6, %7 fastmath<reassoc,contract> : bf16
    %10 = arith.addf %8, %9 fastmath<reassoc,contract> : bf16
    linalg.yield %10 : bf16
  }
  %11 = memref.collapse_shape %3 [[0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] : memref<?x2x8x14x14xbf16> into memref<?x16x14x14xbf16>
  %12 = memref.dim %11, %0 : memref<?x16x14x14xbf16>
  %13 = memref.alloc(%12) {alignment = 64 : i64} : memref<?x16x14x14xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : memref<?x16x14x14xbf16>) outs(%13 : memref<?x16x14x14xbf16>) {
  ^bb0(%14: bf16, %15: bf16):
    linalg.yield %14 : bf16
  }
  memref.dealloc %3 : memref<?x2x8x14x14xbf16>
  func.return %13 : memref<?x16x14x14xbf16>
}


// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=1}' | filecheck %s

// A contraction marked with `mlc.tiles` (as `autotune-tiles` marks it) is blocked as
// the mark says, whatever the host's model would choose: its register tiles call the
// micro-kernel of a 2 x 8 block of 4-lane vectors.

// CHECK:       func.func private @mlc_micro_kernel_f32_2x8v4(
// CHECK-LABEL: func.func @marked
// CHECK:         func.call @mlc_micro_kernel_f32_2x8v4(
func.func @marked(%a: memref<6x12xf32>, %b: memref<12x16xf32>, %c: memref<6x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<6x12xf32>, memref<12x16xf32>) outs(%c : memref<6x16xf32>) attrs = {mlc.tiles = array<i64: 2, 8, 4, 4, 4>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A mark that is no blocking (NR not a multiple of the vector length) is ignored:
// the model's blocking is used.

// CHECK-NOT:   mlc_micro_kernel_f32_2x6
// CHECK-LABEL: func.func @bad_mark
// CHECK:         func.call @mlc_micro_kernel_f32_
// CHECK-NOT:   mlc_micro_kernel_f32_2x6
func.func @bad_mark(%a: memref<6x12xf32>, %b: memref<12x16xf32>, %c: memref<6x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<6x12xf32>, memref<12x16xf32>) outs(%c : memref<6x16xf32>) attrs = {mlc.tiles = array<i64: 2, 6, 4, 4, 4>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// RUN: mlc-opt %s --split-input-file -p outline-contractions | filecheck %s

// Rows counted on the device (a size the host loads, as a NonZero's count) keep
// the contractions where they are: bound-device-sizes bounds the count where it sees
// the launches, which a call would hide.

// CHECK-LABEL: func.func @counted_rows
// CHECK-NOT:     func.call
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     func.call
func.func @counted_rows(%count: memref<i64>, %w1: memref<64x128xf32>, %w2: memref<64x128xf32>) {
  %n = memref.load %count[] : memref<i64>
  %m = arith.index_cast %n : i64 to index
  %a = memref.alloc(%m) : memref<?x64xf32>
  %c1 = memref.alloc(%m) : memref<?x128xf32>
  %c2 = memref.alloc(%m) : memref<?x128xf32>
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %w1 : memref<?x64xf32>, memref<64x128xf32>) outs(%c1 : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %w2 : memref<?x64xf32>, memref<64x128xf32>) outs(%c2 : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// The same two with a size the host knows become one function.

// CHECK-LABEL: func.func @known_rows
// CHECK-COUNT-2: func.call @known_rows_kernel0
// CHECK:       func.func private @known_rows_kernel0
func.func @known_rows(%w1: memref<64x128xf32>, %w2: memref<64x128xf32>) {
  %n = arith.constant 300 : i64
  %m = arith.index_cast %n : i64 to index
  %a = memref.alloc(%m) : memref<?x64xf32>
  %c1 = memref.alloc(%m) : memref<?x128xf32>
  %c2 = memref.alloc(%m) : memref<?x128xf32>
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %w1 : memref<?x64xf32>, memref<64x128xf32>) outs(%c1 : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %w2 : memref<?x64xf32>, memref<64x128xf32>) outs(%c2 : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=2}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=1}' | filecheck %s --check-prefix=ONE
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=2 row-blocks=false}' \
// RUN:   | filecheck %s --check-prefix=OFF
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=2}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Row sums of %x, then %x scaled by its row's sum: both generics run over the same 4096
// rows (64 MB, more than L2 holds) and read %x, so they become one loop over blocks of
// rows (as many as fill half of the host's L2), each block running both on views of
// its rows. The allocation between them moves above the loop, the deallocation below.

// CHECK-LABEL: func.func @sum_then_scale
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<4096x4096xf32>)
// CHECK:         %[[S:.+]] = memref.alloc() : memref<4096x1xf32>
// CHECK-NEXT:    %[[Y:.+]] = memref.alloc() : memref<4096x4096xf32>
// CHECK:         "scf.parallel"
// CHECK:           memref.subview %[[X]][%{{.*}}, 0] [%{{.*}}, 4096] [1, 1]
// CHECK:           memref.subview %[[S]][%{{.*}}, 0] [%{{.*}}, 1] [1, 1]
// CHECK:           linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "reduction"]
// CHECK:           memref.subview %[[X]]
// CHECK:           memref.subview %[[S]]
// CHECK:           memref.subview %[[Y]]
// CHECK:           linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel"]
// CHECK:           scf.reduce
// CHECK:         memref.dealloc %[[S]]
// CHECK-NEXT:    func.return %[[Y]]

// ONE-LABEL: func.func @sum_then_scale
// ONE-NOT:     scf.parallel
// ONE:         scf.for
// ONE:           linalg.generic
// ONE:           linalg.generic
// ONE:         memref.dealloc

// OFF-LABEL: func.func @sum_then_scale
// OFF:         "scf.parallel"
// OFF:           linalg.generic
// OFF:           scf.reduce
// OFF:         "scf.parallel"
// OFF:           linalg.generic
// OFF:           scf.reduce

// LOC-LABEL: func.func @sum_then_scale
// LOC:         "scf.parallel"
// LOC:         }) : (index, index, index) -> () loc("sums.py":1:1)
func.func @sum_then_scale(%x: memref<4096x4096xf32>) -> memref<4096x4096xf32> {
  %s = memref.alloc() : memref<4096x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4096x4096xf32>) outs(%s : memref<4096x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  } loc("sums.py":1:1)
  %y = memref.alloc() : memref<4096x4096xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<4096x4096xf32>, memref<4096x1xf32>) outs(%y : memref<4096x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  }
  memref.dealloc %s : memref<4096x1xf32>
  func.return %y : memref<4096x4096xf32>
}

// -----

// Dynamic rows: the second generic indexes %s at the dimension the first wrote it by
// its row loop, so the rows are the same and the run is fused.

// CHECK-LABEL: func.func @dynamic_rows
// CHECK:         "scf.parallel"
// CHECK:           linalg.generic
// CHECK:           linalg.generic
// CHECK:           scf.reduce
// CHECK-NOT:     linalg.generic
func.func @dynamic_rows(%x: memref<?x40xf32>, %s: memref<?x1xf32>, %y: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x40xf32>) outs(%s : memref<?x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x40xf32>, memref<?x1xf32>) outs(%y : memref<?x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  }
  func.return
}

// -----

// Left alone: the second generic reads the buffer the first writes without its row
// loop (every block would need every row of %s, some not written yet): each generic
// is split on its own.

// CHECK-LABEL: func.func @all_rows_needed
// CHECK:         "scf.parallel"
// CHECK:           linalg.generic
// CHECK:           scf.reduce
// CHECK:         "scf.parallel"
// CHECK:           linalg.generic
// CHECK:           scf.reduce
func.func @all_rows_needed(%x: memref<4096x4096xf32>, %s: memref<4096x1xf32>, %y: memref<4096x4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4096x4096xf32>) outs(%s : memref<4096x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (4095, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<4096x4096xf32>, memref<4096x1xf32>) outs(%y : memref<4096x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  }
  func.return
}

// -----

// Left alone: no buffer is used by both generics, so no block would be found in cache.

// CHECK-LABEL: func.func @nothing_shared
// CHECK:         "scf.parallel"
// CHECK:           linalg.generic
// CHECK:           scf.reduce
// CHECK:         "scf.parallel"
// CHECK:           linalg.generic
// CHECK:           scf.reduce
func.func @nothing_shared(%x: memref<4096x4096xf32>, %y: memref<4096x4096xf32>, %z: memref<4096x4096xf32>, %w: memref<4096x4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4096x4096xf32>) outs(%y : memref<4096x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%z : memref<4096x4096xf32>) outs(%w : memref<4096x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  }
  func.return
}

// -----

// Left alone: six rows of 160 bytes all fit in L2, where the second generic finds them
// without blocks.

// CHECK-LABEL: func.func @fits_in_cache
// CHECK-NOT:     scf.parallel
// CHECK:         linalg.generic
// CHECK:         linalg.generic
func.func @fits_in_cache(%x: memref<6x40xf32>, %s: memref<6x1xf32>, %y: memref<6x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<6x40xf32>) outs(%s : memref<6x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<6x40xf32>, memref<6x1xf32>) outs(%y : memref<6x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  }
  func.return
}

// -----

// Softmax as bufferized: a max pass, exp(x - max) stored in %e with the row sums, the
// sums' reciprocals in place, and %e scaled in place. All run over the same rows, so
// each block of rows is read from memory once and its exps are scaled while in L2;
// the result is %e itself (no second buffer of x's size).

// CHECK-LABEL: func.func @softmax_in_place
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<4096x4096xf32>)
// CHECK:         %[[E:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4096x4096xf32>
// CHECK-NOT:     memref.alloc() {{.*}} : memref<4096x4096xf32>
// CHECK:         "scf.parallel"
// CHECK:           arith.maximumf
// CHECK:           memref.subview %[[E]]
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:           arith.mulf
// CHECK:           scf.reduce
// CHECK-NOT:     linalg.generic
// CHECK:         func.return %[[E]]
func.func @softmax_in_place(%x: memref<4096x4096xf32>) -> memref<4096x4096xf32> {
  %m = memref.alloc() {alignment = 64 : i64} : memref<4096x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%m : memref<4096x1xf32>) {
  ^bb0(%o: f32):
    %low = arith.constant 0xff800000 : f32
    linalg.yield %low : f32
  }
  %s = memref.alloc() {alignment = 64 : i64} : memref<4096x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%s : memref<4096x1xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.000000e+00 : f32
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4096x4096xf32>) outs(%m : memref<4096x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.maximumf %acc, %a : f32
    linalg.yield %t : f32
  }
  %e = memref.alloc() {alignment = 64 : i64} : memref<4096x4096xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %m : memref<4096x4096xf32>, memref<4096x1xf32>) outs(%e, %s : memref<4096x4096xf32>, memref<4096x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %t = math.exp %d : f32
    %u = arith.addf %acc, %t : f32
    linalg.yield %t, %u : f32, f32
  }
  memref.dealloc %m : memref<4096x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : memref<4096x1xf32>) outs(%s : memref<4096x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.000000e+00 : f32
    %r = arith.divf %one, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : memref<4096x1xf32>) outs(%e : memref<4096x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %o, %a : f32
    linalg.yield %t : f32
  }
  memref.dealloc %s : memref<4096x1xf32>
  func.return %e : memref<4096x4096xf32>
}

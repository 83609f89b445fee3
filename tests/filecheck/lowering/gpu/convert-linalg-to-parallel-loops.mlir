// RUN: mlc-opt %s --split-input-file -p 'convert-linalg-to-parallel-loops{register-tile=1,1}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops | filecheck %s --check-prefix=TILE
// RUN: not mlc-opt %s --split-input-file -p 'convert-linalg-to-parallel-loops{register-tile=4}' 2>&1 | filecheck %s --check-prefix=BAD

// BAD: register-tile takes two sizes in [1, 8], got [4]

// Parallel iterators become one scf.parallel, in map order; the body is inlined.

// CHECK-LABEL: func.func @elementwise(%a: memref<?x8xf32>, %out: memref<?x8xf32>)
// CHECK:         %[[N:.+]] = memref.dim %a, %{{.+}} : memref<?x8xf32>
// CHECK:         %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK:         "scf.parallel"(%{{.+}}, %{{.+}}, %[[N]], %[[EIGHT]], %{{.+}}, %{{.+}})
// CHECK-NEXT:    ^{{.+}}(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %a[%[[I]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:      %{{.+}} = memref.load %out[%[[I]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:      %[[E:.+]] = math.exp %[[X]] : f32
// CHECK-NEXT:      memref.store %[[E]], %out[%[[I]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:      scf.reduce
// CHECK-NOT:     linalg.generic
// LOC-LABEL:   func.func @elementwise
// LOC:           memref.load {{.*}} loc("model.py":3:4)
// LOC:           math.exp {{.*}} loc("model.py":2:1)
// LOC:           memref.store {{.*}} loc("model.py":3:4)
func.func @elementwise(%a: memref<?x8xf32>, %out: memref<?x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x8xf32>) outs(%out : memref<?x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32 loc("model.py":2:1)
    linalg.yield %e : f32
  } loc("model.py":3:4)
  func.return
}

// -----

// A reduction keeps its output element in a register: loaded once before the
// scf.for over the reduction dim (in the middle of the map dims here, as matmul's
// (i, k, j)), carried in iter_args, stored once after.

// CHECK-LABEL: func.func @matmul(%a: memref<4x16xf32>, %b: memref<16x8xf32>, %c: memref<4x8xf32>)
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^{{.+}}(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK:           %[[INIT:.+]] = memref.load %c[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK:           %[[SUM:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[X:.+]] = memref.load %a[%[[I]], %[[K]]] : memref<4x16xf32>
// CHECK-NEXT:        %[[Y:.+]] = memref.load %b[%[[K]], %[[J]]] : memref<16x8xf32>
// CHECK-NEXT:        %[[P:.+]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:        %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:        scf.yield %[[S]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[SUM]], %c[%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:      scf.reduce

func.func @matmul(%a: memref<4x16xf32>, %b: memref<16x8xf32>, %c: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<4x16xf32>, memref<16x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// With the default 4x4 register tile, each iteration of the parallel loop owns a
// 4x4 block of outputs (the loop runs to ceil(M/4) x ceil(32/4)); contractions
// with all sizes static and fewer than 32768 outputs are left untiled (as above); indices are clamped
// for the loads and each store is guarded; the 16 accumulators ride in iter_args.

// TILE:       func.func @matmul_dynamic
// TILE:         %[[ROWS:.+]] = arith.divui %{{.+}}, %{{.+}} : index
// TILE:         %[[COLS:.+]] = arith.divui %{{.+}}, %{{.+}} : index
// TILE:         "scf.parallel"(%{{.+}}, %{{.+}}, %[[ROWS]], %[[COLS]], %{{.+}}, %{{.+}})
// TILE:           %[[I0:.+]] = arith.minui
// TILE:           %[[IN0:.+]] = arith.cmpi ult
// TILE:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// TILE-COUNT-16:    arith.addf
// TILE:             scf.yield
// TILE-COUNT-16:  scf.if
// TILE-NOT:       scf.if
// TILE:           scf.reduce
func.func @matmul_dynamic(%a: memref<?x16xf32>, %b: memref<16x32xf32>, %c: memref<?x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x16xf32>, memref<16x32xf32>) outs(%c : memref<?x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// At most 16 static columns (a classifier head): an iteration takes a whole row (the
// parallel loop runs over the rows only), one accumulator per output riding in
// iter_args; no index needs a clamp, no store a guard.

// TILE-LABEL: func.func @narrow
// TILE:         %[[M:.+]] = memref.dim %a, %{{.+}} : memref<?x128xf32>
// TILE:         "scf.parallel"(%{{.+}}, %[[M]], %{{.+}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// TILE-NEXT:    ^{{.+}}(%[[I:[0-9a-z_]+]]: index):
// TILE-NOT:       arith.minui
// TILE:           scf.for %[[K:[0-9a-z_]+]] = {{.*}} -> (f32, f32, f32) {
// TILE:             %[[X:.+]] = memref.load %a[%[[I]], %[[K]]] : memref<?x128xf32>
// TILE-NEXT:        %[[W0:.+]] = memref.load %b[%[[K]], %[[C0:[0-9a-z_]+]]] : memref<128x3xf32>
// TILE-NEXT:        arith.mulf %[[X]], %[[W0]]
// TILE-NEXT:        arith.addf
// TILE-NEXT:        memref.load %a[%[[I]], %[[K]]] : memref<?x128xf32>
// TILE-NEXT:        memref.load %b[%[[K]], %[[C1:[0-9a-z_]+]]] : memref<128x3xf32>
// TILE-COUNT-2:     arith.addf
// TILE:             scf.yield
// TILE-NOT:       scf.if
// TILE:           memref.store %{{.+}}, %c[%[[I]], %[[C0]]] : memref<?x3xf32>
// TILE-NEXT:      memref.store %{{.+}}, %c[%[[I]], %[[C1]]] : memref<?x3xf32>
// TILE-NEXT:      memref.store %{{.+}}, %c[%[[I]], %{{.+}}] : memref<?x3xf32>
// TILE-NEXT:      scf.reduce
func.func @narrow(%a: memref<?x128xf32>, %b: memref<128x3xf32>, %c: memref<?x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x128xf32>, memref<128x3xf32>) outs(%c : memref<?x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// An epilogue that linalg-fuse-elementwise fused into the last iteration (a bias add)
// is peeled: the loop carries the sums alone, with no branch and no load of the bias,
// and the epilogue runs once on each total after it, before the store.

// TILE-LABEL: func.func @narrow_with_bias
// TILE:         scf.for
// TILE-NOT:       scf.if
// TILE-NOT:       memref.load %bias
// TILE:           scf.yield
// TILE-NEXT:    }
// TILE-NEXT:    %[[B0:.+]] = memref.load %bias[%{{.+}}] : memref<3xf32>
// TILE-NEXT:    %[[S0:.+]] = arith.addf %{{.+}}, %[[B0]] : f32
// TILE-NEXT:    memref.store %[[S0]], %c
func.func @narrow_with_bias(%a: memref<?x128xf32>, %b: memref<128x3xf32>, %bias: memref<3xf32>, %c: memref<?x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %bias : memref<?x128xf32>, memref<128x3xf32>, memref<3xf32>) outs(%c : memref<?x3xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 127 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %r = scf.if %is_last -> (f32) {
      %t = arith.addf %s, %z : f32
      scf.yield %t : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// -----

// A full reduction has no parallel dim: a one-iteration scf.parallel (one kernel).

// CHECK-LABEL: func.func @full_reduction(%a: memref<?xf32>, %r: memref<f32>)
// CHECK:         %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:    "scf.parallel"(%{{.+}}, %[[ONE]], %[[ONE]])
// CHECK:           memref.load %r[] : memref<f32>
// CHECK:           scf.for
// CHECK:             arith.maximumf
// CHECK:           memref.store %{{.+}}, %r[] : memref<f32>
func.func @full_reduction(%a: memref<?xf32>, %r: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<?xf32>) outs(%r : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  }
  func.return
}

// -----

// linalg.index becomes the loop index; broadcast maps index with constants.

// CHECK-LABEL: func.func @index_and_broadcast(%a: memref<1x8xi64>, %out: memref<3x8xi64>)
// CHECK:         ^{{.+}}(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:      %[[ZERO:.+]] = affine.apply affine_map<() -> (0)> ()
// CHECK-NEXT:      %[[X:.+]] = memref.load %a[%[[ZERO]], %[[J]]] : memref<1x8xi64>
// CHECK-NEXT:      %{{.+}} = memref.load %out[%[[I]], %[[J]]] : memref<3x8xi64>
// CHECK-NEXT:      %[[IDX:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:      %[[S:.+]] = arith.addi %[[X]], %[[IDX]] : i64
// CHECK-NEXT:      memref.store %[[S]], %out[%[[I]], %[[J]]] : memref<3x8xi64>
func.func @index_and_broadcast(%a: memref<1x8xi64>, %out: memref<3x8xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<1x8xi64>) outs(%out : memref<3x8xi64>) {
  ^bb0(%x: i64, %o: i64):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %s = arith.addi %x, %ii : i64
    linalg.yield %s : i64
  }
  func.return
}

// -----

// A buffer copy is a parallel loop too: on the GPU a copy is a kernel.

// CHECK-LABEL: func.func @copy(%a: memref<?x4xf16, strided<[8, 1]>>, %b: memref<?x4xf16>)
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^{{.+}}(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT:      %[[V:.+]] = memref.load %a[%[[I]], %[[J]]] : memref<?x4xf16, strided<[8, 1]>>
// CHECK-NEXT:      memref.store %[[V]], %b[%[[I]], %[[J]]] : memref<?x4xf16>
// CHECK-NOT:     memref.copy
func.func @copy(%a: memref<?x4xf16, strided<[8, 1]>>, %b: memref<?x4xf16>) {
  "memref.copy"(%a, %b) : (memref<?x4xf16, strided<[8, 1]>>, memref<?x4xf16>) -> ()
  func.return
}

// -----

// A fill just before a reduction that carries its outputs is absorbed: the carried
// values start at the fills' constants (-inf, 0), with no load of the outputs and no
// kernel for the fills. A fill read in between, or whose buffer the reduction writes
// only in part, stays.

// CHECK-LABEL: func.func @absorbed_fills
// CHECK-NOT:     linalg.generic
// CHECK:         "scf.parallel"
// CHECK-NOT:     "scf.parallel"
// CHECK:           %[[NEG:.+]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:           scf.for {{.*}} iter_args(%{{.+}} = %[[NEG]], %{{.+}} = %[[ZERO]]) -> (f32, f32)
// CHECK-NOT:     memref.load %max
// CHECK-NOT:     memref.load %sum
// CHECK:         func.return
func.func @absorbed_fills(%x: memref<?x10xf32>, %max: memref<?x1xf32>, %sum: memref<?x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%max : memref<?x1xf32>) {
  ^bb0(%o: f32):
    %c = arith.constant 0xff800000 : f32
    linalg.yield %c : f32
  }
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x10xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%sum : memref<?x1xf32>) {
  ^bb0(%o: f32):
    %c = arith.constant 0.0 : f32
    linalg.yield %c : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x10xf32>) outs(%max, %sum : memref<?x1xf32>, memref<?x1xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32):
    %mm = arith.maximumf %m, %v : f32
    %ss = arith.addf %s, %v : f32
    linalg.yield %mm, %ss : f32, f32
  }
  func.return
}

// CHECK-LABEL: func.func @kept_fills
// CHECK:         "scf.parallel"
// CHECK:         memref.load %acc
// CHECK:         "scf.parallel"
// CHECK:           memref.load %acc
// CHECK:         "scf.parallel"
// CHECK:         "scf.parallel"
// CHECK:           memref.load %part
func.func @kept_fills(%x: memref<?x10xf32>, %acc: memref<?x1xf32>, %part: memref<?x2xf32>) -> f32 {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%acc : memref<?x1xf32>) {
  ^bb0(%o: f32):
    %c = arith.constant 0.0 : f32
    linalg.yield %c : f32
  }
  %c0 = arith.constant 0 : index
  %read = memref.load %acc[%c0, %c0] : memref<?x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x10xf32>) outs(%acc : memref<?x1xf32>) {
  ^bb0(%v: f32, %s: f32):
    %ss = arith.addf %s, %v : f32
    linalg.yield %ss : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%part : memref<?x2xf32>) {
  ^bb0(%o: f32):
    %c = arith.constant 0.0 : f32
    linalg.yield %c : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x10xf32>) outs(%part : memref<?x2xf32>) {
  ^bb0(%v: f32, %s: f32):
    %ss = arith.addf %s, %v : f32
    linalg.yield %ss : f32
  }
  func.return %read : f32
}

// -----

// A loop marked `mlc.sequential` (a scatter's grouping loops) becomes the body of a
// one-iteration scf.parallel, a one-thread kernel later; the buffer it carries, updated
// in place, is used directly, and a scalar it carries stays inside.

// CHECK-LABEL: func.func @sequential_loop
// CHECK-SAME:    (%[[S:[a-zA-Z0-9_]+]]: memref<?xi64>, %[[N:[a-zA-Z0-9_]+]]: index)
// CHECK:         "scf.parallel"(%{{.+}}, %[[O:.+]], %[[O]])
// CHECK-NEXT:    ^{{.+}}(%{{.+}}: index):
// CHECK-NEXT:      %{{.+}} = scf.for %[[P:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (i64) {
// CHECK-NEXT:        %[[V:.+]] = memref.load %[[S]][%[[P]]] : memref<?xi64>
// CHECK-NEXT:        %[[SUM:.+]] = arith.addi %[[V]], %[[ACC]] : i64
// CHECK-NEXT:        memref.store %[[SUM]], %[[S]][%[[P]]] : memref<?xi64>
// CHECK-NEXT:        scf.yield %[[SUM]] : i64
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// CHECK:         func.return %[[S]] : memref<?xi64>
func.func @sequential_loop(%s: memref<?xi64>, %n: index) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %r, %last = scf.for %p = %c0 to %n step %c1 iter_args(%b = %s, %run = %zero) -> (memref<?xi64>, i64) {
    %v = memref.load %b[%p] : memref<?xi64>
    %sum = arith.addi %v, %run : i64
    memref.store %sum, %b[%p] : memref<?xi64>
    scf.yield %b, %sum : memref<?xi64>, i64
  } {mlc.sequential}
  func.return %r : memref<?xi64>
}

// -----

// A scalar result used after the loop (or a buffer not updated in place, or a loop
// without the mark) keeps it on the host.

// CHECK-LABEL: func.func @sequential_loop_result_used
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for
func.func @sequential_loop_result_used(%s: memref<?xi64>, %n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %r, %last = scf.for %p = %c0 to %n step %c1 iter_args(%b = %s, %run = %zero) -> (memref<?xi64>, i64) {
    %v = memref.load %b[%p] : memref<?xi64>
    %sum = arith.addi %v, %run : i64
    scf.yield %b, %sum : memref<?xi64>, i64
  } {mlc.sequential}
  func.return %last : i64
}

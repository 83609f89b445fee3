// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A float matmul on buffers: B is packed into NR-wide panels (of one batch), then a
// parallel loop over blocks of MC rows runs KC-deep MR x NR micro-kernels whose
// accumulators are vectors carried by the k loop; the packed buffer is freed after.
// This one is worth one task (8 rows, far below TASK_FLOPS), so its panels are packed
// by a plain loop on the calling thread (`@batched` packs in a parallel loop).

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<8x16xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<16x32xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<8x32xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK-NOT:     "scf.parallel"
// CHECK:         scf.for
// CHECK:           vector.load %[[B]]
// CHECK:           vector.store {{.*}}, %[[P]]
// CHECK-NOT:       vector.create_mask
// CHECK:         "scf.parallel"
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK:             vector.load %[[P]]
// CHECK:             memref.load %[[A]]
// CHECK:             vector.broadcast {{.*}} : f32 to vector<4xf32>
// CHECK-COUNT-2:     vector.fma
// CHECK:           vector.load %[[C]]
// CHECK:           vector.store {{.*}}, %[[C]]
// CHECK-NOT:       vector.create_mask
// CHECK:         memref.dealloc %[[P]]

// LOC-LABEL: func.func @matmul
// LOC:         vector.fma {{.*}} loc("model.py":3:5)
func.func @matmul(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  } loc("model.py":3:5)
  func.return
}

// -----

// N = 10 ends inside the second panel (NR = 8, VL = 4): B's full panels are packed a
// row of B at a time across the group of panels (on the calling thread: the kernel
// is one task), the last one with masked loads (its
// second vector, wholly past N, stored as zeros); each tile of C in that panel adds
// and stores only its lanes below N, through masked loads and stores, and skips a
// vector wholly past N. The full panels store whole vectors.

// CHECK-LABEL: func.func @ragged_n
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<8x16xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<16x10xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<8x10xf32>)
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK-NOT:     "scf.parallel"
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               vector.load %[[B]]
// CHECK:           scf.if
// CHECK:             %[[MASK0:.+]] = vector.create_mask %{{.+}} : vector<4xi1>
// CHECK:             %[[MASK1:.+]] = vector.create_mask %{{.+}} : vector<4xi1>
// CHECK:             scf.for
// CHECK:               scf.if
// CHECK:                 vector.maskedload %[[B]][{{.+}}], %[[MASK0]], %{{.+}} : memref<16x10xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
// CHECK:                 vector.store {{.*}}, %[[P]]
// CHECK:               } else {
// CHECK:                 vector.store {{.*}}, %[[P]]
// CHECK:               vector.maskedload %[[B]][{{.+}}], %[[MASK1]]
// CHECK:         "scf.parallel"
// CHECK:           vector.fma
// CHECK:           %[[FULL:.+]] = arith.cmpi sle, %{{.+}}, %{{.+}} : index
// CHECK:           scf.if %[[FULL]] {
// CHECK:             vector.load %[[C]]
// CHECK:             vector.store {{.*}}, %[[C]]
// CHECK:           } else {
// CHECK:             %[[CMASK:.+]] = vector.create_mask %{{.+}} : vector<4xi1>
// CHECK:             scf.if
// CHECK:               %[[OLD:.+]] = vector.maskedload %[[C]][{{.+}}], %[[CMASK]], %{{.+}}
// CHECK:               %[[SUM:.+]] = arith.addf %[[OLD]], %{{.+}} : vector<4xf32>
// CHECK:               vector.maskedstore %[[C]][{{.+}}], %[[CMASK]], %[[SUM]]
// CHECK:               %[[INSIDE:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : index
// CHECK:               scf.if %[[INSIDE]] {
// CHECK:                 vector.maskedstore %[[C]]
// CHECK:         memref.dealloc %[[P]]

// LOC-LABEL: func.func @ragged_n
// LOC:         vector.maskedstore {{.*}} loc("model.py":5:1)
func.func @ragged_n(%a: memref<8x16xf32>, %b: memref<16x10xf32>, %c: memref<8x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<16x10xf32>) outs(%c : memref<8x10xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  } loc("model.py":5:1)
  func.return
}

// -----

// N = 1 (a matrix-vector product): dot products along the rows of A in vector
// registers, eight rows per task, the vector operand read as a flat K-vector; a
// vector loop, then a scalar loop for the tail; each row is reduced once and stored
// only if it exists (M is dynamic).

// CHECK-LABEL: func.func @matvec
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<?x?xf64>, %[[X:[a-zA-Z0-9_]+]]: memref<?x1xf64>, %[[Y:[a-zA-Z0-9_]+]]: memref<?x1xf64>)
// CHECK:         %[[FLAT:.+]] = memref.collapse_shape %[[X]] {{\[}}[0 : i64, 1 : i64]] : memref<?x1xf64> into memref<?xf64>
// CHECK:         %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK:         "scf.parallel"({{.*}}, %[[EIGHT]])
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>)
// CHECK:             vector.load %[[FLAT]]
// CHECK-COUNT-8:     vector.fma
// CHECK:             scf.yield
// CHECK:           scf.for {{.*}} -> (f64, f64, f64, f64, f64, f64, f64, f64)
// CHECK-COUNT-8:   vector.reduction <add>
// CHECK:           scf.if
// CHECK:             memref.store {{.*}}, %[[Y]]
func.func @matvec(%a: memref<?x?xf64>, %x: memref<?x1xf64>, %y: memref<?x1xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %x : memref<?x?xf64>, memref<?x1xf64>) outs(%y : memref<?x1xf64>) {
  ^bb0(%u: f64, %v: f64, %w: f64):
    %p = arith.mulf %u, %v : f64
    %s = arith.addf %w, %p : f64
    linalg.yield %s : f64
  }
  func.return
}

// -----

// With no more rows than one task (u @ p in PageRank), the task runs as it is, without
// a parallel loop to dispatch, with one accumulator per row that exists. K = 2048 is
// a multiple of the vector: no scalar loop.

// CHECK-LABEL: func.func @matvec_one_row
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for {{.*}} -> (vector<4xf32>) {{[{]$}}
// CHECK-COUNT-1:   vector.fma
// CHECK:           scf.yield
// CHECK-NOT:     scf.for
// CHECK-COUNT-1: vector.reduction <add>
// CHECK-NOT:     vector.reduction
// CHECK-NOT:     scf.parallel
// CHECK:         func.return
func.func @matvec_one_row(%a: memref<1x2048xf32>, %x: memref<2048x1xf32>, %y: memref<1x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %x : memref<1x2048xf32>, memref<2048x1xf32>) outs(%y : memref<1x1xf32>) {
  ^bb0(%u: f32, %v: f32, %w: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %w, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Static sizes: the loop bounds are constants and the loops that would run no
// iteration are left out. K = 10 = 8 + 2: the vector loop to 8, a scalar tail of 2.
// M = 24 is three whole tasks: every row exists, no guard.

// CHECK-LABEL: func.func @matvec_static
// CHECK:         %[[TEN:.+]] = arith.constant 10 : index
// CHECK:         "scf.parallel"
// CHECK:           %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK-NEXT:      arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-NEXT:      %[[FOUR:.+]] = arith.constant 4 : index
// CHECK-NEXT:      scf.for %{{.*}} = %{{.*}} to %[[EIGHT]] step %[[FOUR]] iter_args
// CHECK:             scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      scf.for %{{.*}} = %[[EIGHT]] to %[[TEN]] step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-NOT:       scf.if
// CHECK:           scf.reduce
func.func @matvec_static(%a: memref<24x10xf32>, %x: memref<10x1xf32>, %y: memref<24x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %x : memref<24x10xf32>, memref<10x1xf32>) outs(%y : memref<24x1xf32>) {
  ^bb0(%u: f32, %v: f32, %w: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %w, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// K = 1 (e @ (u @ p) in PageRank): no vector loop at all, the scalar products only.

// CHECK-LABEL: func.func @matvec_k1
// CHECK:         "scf.parallel"
// CHECK-NOT:       vector.load
// CHECK-NOT:       vector.fma
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:             arith.mulf
// CHECK:           scf.reduce
func.func @matvec_k1(%e: memref<2048x1xf32>, %s: memref<1x1xf32>, %y: memref<2048x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%e, %s : memref<2048x1xf32>, memref<1x1xf32>) outs(%y : memref<2048x1xf32>) {
  ^bb0(%u: f32, %v: f32, %w: f32):
    %p = arith.mulf %u, %v : f32
    %t = arith.addf %w, %p : f32
    linalg.yield %t : f32
  }
  func.return
}

// -----

// An elementwise generic with enough work is split into one block of rows per
// thread: views of its operands, the same generic on them, in an scf.parallel. The
// rows divide among the threads, so every block has the same static size (and the
// loops inside have constant bounds).

// CHECK-LABEL: func.func @elementwise
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<512x256xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<512x256xf32>)
// CHECK:         %[[BLOCK:.+]] = arith.constant 256 : index
// CHECK:         "scf.parallel"(%{{.+}}, %{{.+}}, %[[BLOCK]])
// CHECK:           %[[XV:.+]] = memref.subview %[[X]][{{.*}}, 0] [256, 256] [1, 1] : memref<512x256xf32> to memref<256x256xf32, strided<[256, 1], offset: ?>>
// CHECK:           %[[YV:.+]] = memref.subview %[[Y]]
// CHECK:           linalg.generic {{.*}} ins(%[[XV]] : {{.*}}) outs(%[[YV]] : {{.*}})
// CHECK:             math.exp
func.func @elementwise(%x: memref<512x256xf32>, %y: memref<512x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<512x256xf32>) outs(%y : memref<512x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  func.return
}

// -----

// A loop of extent 1 is not split; the next parallel loop is, and an operand whose
// map does not use it (a broadcast row) is shared whole.

// CHECK-LABEL: func.func @skips_unit_loop
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x300x300xf32>, %[[R:[a-zA-Z0-9_]+]]: memref<300xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x300x300xf32>)
// CHECK:         "scf.parallel"
// CHECK:           %[[XV:.+]] = memref.subview %[[X]][0, {{.*}}, 0] [1, 150, 300] [1, 1, 1]
// CHECK:           linalg.generic {{.*}} ins(%[[XV]], %[[R]] : {{.*}})
func.func @skips_unit_loop(%x: memref<1x300x300xf32>, %r: memref<300xf32>, %y: memref<1x300x300xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %r : memref<1x300x300xf32>, memref<300xf32>) outs(%y : memref<1x300x300xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Rows that do not divide among the threads (301 for 2): blocks of ceil(301 / 2) = 151
// rows (a constant, which bounds the blocks' loops for convert-to-llvm's weighing),
// the last one shorter, so each block's size is `min(block, rows - start)`.

// CHECK-LABEL: func.func @odd_rows
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<301x256xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<301x256xf32>)
// CHECK:         %[[BLOCK:.+]] = arith.constant 151 : index
// CHECK:         "scf.parallel"(%{{.+}}, %{{.+}}, %[[BLOCK]])
// CHECK:           %[[SIZE:.+]] = arith.minsi %[[BLOCK]], %{{.+}} : index
// CHECK:           memref.subview %[[X]][{{.*}}, 0] [%[[SIZE]], 256] [1, 1] : memref<301x256xf32> to memref<?x256xf32, strided<[256, 1], offset: ?>>
func.func @odd_rows(%x: memref<301x256xf32>, %y: memref<301x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<301x256xf32>) outs(%y : memref<301x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  func.return
}

// -----

// Left alone: too little work to split, a parallel loop that only appears inside a
// compound index of an input (a window: blocks of it would need overlapping views),
// and generics on tensors.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     scf.parallel
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     scf.parallel
func.func @left_alone(%x: memref<4x4xf32>, %w: memref<100002xf32>, %k: memref<3xf32>, %o: memref<100000xf32>, %t: tensor<4x4xf32>) -> tensor<4x4xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x4xf32>) outs(%x : memref<4x4xf32>) {
  ^bb0(%u: f32, %v: f32):
    linalg.yield %u : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%w, %k : memref<100002xf32>, memref<3xf32>) outs(%o : memref<100000xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) {
  ^bb0(%u: f32, %v: f32):
    linalg.yield %u : f32
  } -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Dynamic sizes: the blocks are sized at run time, and a view's unknown strides stay
// unknown (`?`) in its layout.

// CHECK-LABEL: func.func @dynamic_fill
// CHECK-SAME:    (%[[C:[a-zA-Z0-9_]+]]: memref<?x?xf32>)
// CHECK:         %[[N:.+]] = memref.dim %[[C]], %{{.+}} : memref<?x?xf32>
// CHECK:         %[[BLOCK:.+]] = arith.ceildivsi %[[N]], %{{.+}} : index
// CHECK:         "scf.parallel"
// CHECK:           memref.subview %[[C]][{{.*}}, 0] [{{.*}}, {{.*}}] [1, 1] : memref<?x?xf32> to memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @dynamic_fill(%c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<?x?xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  func.return
}

// -----

// A matmul with an epilogue (as linalg-fuse-elementwise builds it) and a zero fill
// before it: the fill is dropped, the first K block stores its accumulators (no load
// of C), later ones add to C, and after the last K block the epilogue's scalar ops run
// over the finished tile, reading the bias through its map.

// CHECK-LABEL: func.func @epilogue
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<5x12xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<12x9xf32>, %[[BIAS:[a-zA-Z0-9_]+]]: memref<9xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<5x9xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         vector.fma
// CHECK:         %[[FIRST:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NOT:       vector.load %[[C]]
// CHECK:           vector.store {{.*}}, %[[C]]
// CHECK:         } else {
// CHECK:           vector.load %[[C]]
// CHECK:           arith.addf {{.*}} : vector<4xf32>
// CHECK:           vector.store {{.*}}, %[[C]]
// CHECK:         %[[LAST:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    scf.if %[[LAST]] {
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               memref.load %[[C]]
// CHECK:               memref.load %[[BIAS]]
// CHECK:               arith.addf
// CHECK:               arith.maximumf
// CHECK:               memref.store {{.*}}, %[[C]]
// CHECK:         memref.dealloc
// CHECK-NOT:     linalg.generic

// LOC-LABEL: func.func @epilogue
// LOC:         arith.maximumf {{.*}} loc("model.py":7:1)
func.func @epilogue(%a: memref<5x12xf32>, %b: memref<12x9xf32>, %bias: memref<9xf32>, %c: memref<5x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<5x9xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %bias : memref<5x12xf32>, memref<12x9xf32>, memref<9xf32>) outs(%c : memref<5x9xf32>) {
  ^bb0(%x: f32, %y: f32, %v: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 11 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %r = scf.if %is_last -> (f32) {
      %t = arith.addf %s, %v : f32
      %zero = arith.constant 0.0 : f32
      %relu = arith.maximumf %t, %zero : f32
      scf.yield %relu : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  } loc("model.py":7:1)
  func.return
}

// -----

// An epilogue as a fused runtime broadcast leaves it (BERT's residual add of two
// buffers whose dims may be 1 when it runs): loop indices made before the `scf.if`,
// loads at indices computed from them and from values made before the generic. The
// micro-kernel runs it, replaying the loads with the tile's row and column.

// CHECK-LABEL: func.func @epilogue_reads_buffers
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<?x12xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<12x9xf32>, %[[R:[a-zA-Z0-9_]+]]: memref<?x9xf32>, %[[S:[a-zA-Z0-9_]+]]: index, %[[C:[a-zA-Z0-9_]+]]: memref<?x9xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         vector.fma
// CHECK:         scf.if
// CHECK:           scf.for %[[I:[a-zA-Z0-9_]+]] =
// CHECK:             scf.for %[[J:[a-zA-Z0-9_]+]] =
// CHECK:               memref.load %[[C]]
// CHECK:               %[[ROW:.+]] = arith.muli %{{.+}}, %[[S]] : index
// CHECK-NEXT:          memref.load %[[R]][%[[ROW]], %{{.+}}] : memref<?x9xf32>
// CHECK:               memref.store {{.*}}, %[[C]]
// CHECK-NOT:     linalg.generic
func.func @epilogue_reads_buffers(%a: memref<?x12xf32>, %b: memref<12x9xf32>, %res: memref<?x9xf32>, %stride: index, %c: memref<?x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x12xf32>, memref<12x9xf32>) outs(%c : memref<?x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 11 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %i = linalg.index 0 : index
    %j = linalg.index 2 : index
    %r = scf.if %is_last -> (f32) {
      %row = arith.muli %i, %stride : index
      %v = memref.load %res[%row, %j] : memref<?x9xf32>
      %t = arith.addf %s, %v : f32
      scf.yield %t : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// -----

// Left to the loops: such an epilogue loading from C (a view of it), and one that
// stores to memory.

// CHECK-LABEL: func.func @epilogue_touches_c
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     vector.fma
func.func @epilogue_touches_c(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>, %other: memref<8x8xf32>) {
  %view = memref.subview %c[0, 0] [8, 8] [1, 1] : memref<8x8xf32> to memref<8x8xf32, strided<[8, 1]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 7 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %i = linalg.index 0 : index
    %r = scf.if %is_last -> (f32) {
      %v = memref.load %view[%i, %i] : memref<8x8xf32, strided<[8, 1]>>
      %t = arith.addf %s, %v : f32
      scf.yield %t : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 7 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %i = linalg.index 0 : index
    %r = scf.if %is_last -> (f32) {
      memref.store %s, %other[%i, %i] : memref<8x8xf32>
      scf.yield %s : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// -----

// A batched matmul whose B is shared by every batch: B is packed once (one batch of
// panels), and one flat parallel loop runs every (batch, row block) task.

// CHECK-LABEL: func.func @batched
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<3x8x16xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<16x8xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<3x8x8xf32>)
// CHECK:         %[[BATCHES:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1 : index
// CHECK:         memref.alloc(%[[ONE]], {{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         "scf.parallel"
// CHECK:         "scf.parallel"
// CHECK:           arith.divsi
// CHECK:           arith.remsi
// CHECK:           vector.fma
// CHECK:           vector.store {{.*}}, %[[C]][{{.*}}, {{.*}}, {{.*}}] : memref<3x8x8xf32>, vector<4xf32>
func.func @batched(%a: memref<3x8x16xf32>, %b: memref<16x8xf32>, %c: memref<3x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<3x8x16xf32>, memref<16x8xf32>) outs(%c : memref<3x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Left to the loops: an epilogue that reads C itself (C already holds the sum when the
// epilogue would run), and a body that is not a multiply-add.

// CHECK-LABEL: func.func @not_tiled
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT:     vector.fma
func.func @not_tiled(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %c : memref<8x8xf32>, memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %v: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 7 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %r = scf.if %is_last -> (f32) {
      %t = arith.addf %s, %v : f32
      scf.yield %t : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// B read transposed (`x @ w.T`, ONNX Gemm's transB): each panel is packed from NR rows
// of B read along k, 16 k at a time (the panel's rows stay in L1), a column past N
// zeroed instead of read, and the same micro-kernel runs.

// CHECK-LABEL: func.func @transposed_b
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<8x16xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<32x16xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<8x32xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK-NOT:     "scf.parallel"
// CHECK:         scf.for
// CHECK:           scf.for %[[PANEL:[a-zA-Z0-9_]+]] =
// CHECK:             scf.for %[[K0:[a-zA-Z0-9_]+]] = %{{.*}} to %{{.*}} step %[[C16:[a-zA-Z0-9_]+]]
// CHECK:               scf.for %[[JJ:[a-zA-Z0-9_]+]] =
// CHECK:                 scf.if
// CHECK-NEXT:              scf.for %[[KK:[a-zA-Z0-9_]+]] = %[[K0]] to
// CHECK-NEXT:                memref.load %[[B]][{{%[a-zA-Z0-9_]+}}, %[[KK]]]
// CHECK-NEXT:                memref.store {{.*}}, %[[P]][{{.*}}, %[[PANEL]], %[[KK]], %[[JJ]]]
// CHECK:                 } else {
// CHECK-NEXT:              arith.constant 0.0
// CHECK-NEXT:              scf.for %[[KZ:[a-zA-Z0-9_]+]] = %[[K0]] to
// CHECK-NEXT:                memref.store {{.*}}, %[[P]][{{.*}}, %[[PANEL]], %[[KZ]], %[[JJ]]]
// CHECK:         "scf.parallel"
// CHECK:           vector.load %[[P]]
// CHECK-COUNT-2:   vector.fma
// CHECK:         memref.dealloc %[[P]]

// LOC-LABEL: func.func @transposed_b
// LOC:         vector.fma {{.*}} loc("model.py":9:1)
func.func @transposed_b(%a: memref<8x16xf32>, %b: memref<32x16xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<32x16xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  } loc("model.py":9:1)
  func.return
}

// -----

// A read transposed, its batch loop between its two dims (a folded head transpose):
// the micro-kernel reads each A value through the map, A[k, b, i].

// CHECK-LABEL: func.func @transposed_a
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<16x3x8xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<3x16x32xf32>
// CHECK:         "scf.parallel"
// CHECK:           vector.load %[[B]]
// CHECK:         "scf.parallel"
// CHECK:           scf.for %[[K:[a-zA-Z0-9_]+]] = {{.*}} iter_args
// CHECK:             memref.load %[[A]][%[[K]], %{{[a-zA-Z0-9_]+}}, %{{[a-zA-Z0-9_]+}}]
// CHECK:             vector.fma
func.func @transposed_a(%a: memref<16x3x8xf32>, %b: memref<3x16x32xf32>, %c: memref<3x8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<16x3x8xf32>, memref<3x16x32xf32>) outs(%c : memref<3x8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// B a `dense_resource` weight whose data this process does not hold (IR read from
// text): its panels cannot be packed at compile time, so each call packs them.

// CHECK-LABEL: func.func @weight_without_data
// CHECK:         %[[W:.+]] = memref.get_global @__resource_w_0123 : memref<16x32xf32>
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         scf.for
// CHECK:           vector.load %[[W]]
// CHECK:         memref.dealloc %[[P]]
// CHECK-NOT:     panels
"memref.global"() <{sym_name = "__resource_w_0123", type = memref<16x32xf32>, initial_value, sym_visibility = "public", constant, alignment = 64 : i64}> : () -> ()
func.func @weight_without_data(%a: memref<8x16xf32>, %c: memref<8x32xf32>) {
  %b = memref.get_global @__resource_w_0123 : memref<16x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Left to the loops: B's contiguous dim is a batch loop (neither k nor j can be packed
// along it), B read along the diagonal of its two dims, and a matrix-vector product
// reading A transposed (the dot-product kernel takes contiguous rows of A only).

// CHECK-LABEL: func.func @layouts_not_tiled
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     vector.fma
// CHECK-NOT:     vector.reduction
func.func @layouts_not_tiled(%a: memref<3x8x16xf32>, %b: memref<16x32x3xf32>, %c: memref<3x8x32xf32>, %d: memref<16x16xf32>, %e: memref<8x16xf32>, %at: memref<16x8xf32>, %vx: memref<16x1xf32>, %vy: memref<8x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%at, %vx : memref<16x8xf32>, memref<16x1xf32>) outs(%vy : memref<8x1xf32>) {
  ^bb0(%u: f32, %v: f32, %w: f32):
    %p = arith.mulf %u, %v : f32
    %s = arith.addf %w, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d2, d3, d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<3x8x16xf32>, memref<16x32x3xf32>) outs(%c : memref<3x8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%e, %d : memref<8x16xf32>, memref<16x16xf32>) outs(%e : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A convolution (stride 2, as convert-ml-to-linalg builds it) is an implicit GEMM per
// image: the weight and the output are read as matrices through views that merge
// their trailing dims, and B's panels are packed straight from the image through its
// map (no im2col buffer), by each task, into a buffer of its own, the panels it then
// reads (M fits one block: a task is all rows of one image): where each vector lies in
// one output row, by a plain and a (VL - 1)-lane read of the image row and their even
// lanes, a plain store; else each row's piece by two masked reads, their even lanes and
// a masked store. The per-channel bias epilogue reads the bias by the row.

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<2x3x9x9xf32>, %[[W:[a-zA-Z0-9_]+]]: memref<4x3x3x3xf32>, %[[BIAS:[a-zA-Z0-9_]+]]: memref<4xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<2x4x4x4xf32>)
// CHECK:         %[[A:.+]] = memref.collapse_shape %[[W]] {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] : memref<4x3x3x3xf32> into memref<4x27xf32>
// CHECK:         %[[C:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<2x4x4x4xf32> into memref<2x4x16xf32>
// CHECK:         "scf.parallel"
// CHECK:           %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:           scf.for
// CHECK:             scf.if
// CHECK:             %[[SHORT:.+]] = vector.create_mask %{{.+}} : vector<4xi1>
// CHECK:             %[[E:.+]] = vector.load %[[X]]
// CHECK:             %[[O:.+]] = vector.maskedload %[[X]][{{.*}}], %[[SHORT]]
// CHECK:             %[[V:.+]] = vector.shuffle %[[E]], %[[O]] [0, 2, 4, 6]
// CHECK:             vector.store %[[V]], %[[P]]
// CHECK:           } else {
// CHECK:             %[[EVEN:.+]] = vector.maskedload %[[X]]
// CHECK:             %[[ODD:.+]] = vector.maskedload %[[X]]
// CHECK:             %[[ROW:.+]] = vector.shuffle %[[EVEN]], %[[ODD]] [0, 2, 4, 6]
// CHECK:             vector.maskedstore %[[P]][{{.*}}], %{{.*}}, %[[ROW]]
// CHECK-NOT:       "scf.parallel"
// CHECK:           memref.load %[[A]]
// CHECK:           vector.fma
// CHECK:           vector.store {{.*}}, %[[C]]
// CHECK:           memref.load %[[BIAS]]
// CHECK:           memref.store {{.*}}, %[[C]]
// CHECK:           memref.dealloc %[[P]]
// CHECK-NOT:     linalg.generic
func.func @conv(%x: memref<2x3x9x9xf32>, %w: memref<4x3x3x3xf32>, %bias: memref<4xf32>, %y: memref<2x4x4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 * 2 + d4, d6 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w, %bias : memref<2x3x9x9xf32>, memref<4x3x3x3xf32>, memref<4xf32>) outs(%y : memref<2x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %v: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    %c2 = arith.constant 2 : index
    %i3 = linalg.index 3 : index
    %l3 = arith.cmpi eq, %i3, %c2 : index
    %c2b = arith.constant 2 : index
    %i4 = linalg.index 4 : index
    %l4 = arith.cmpi eq, %i4, %c2b : index
    %l34 = arith.andi %l3, %l4 : i1
    %c2c = arith.constant 2 : index
    %i5 = linalg.index 5 : index
    %l5 = arith.cmpi eq, %i5, %c2c : index
    %last = arith.andi %l34, %l5 : i1
    %r = scf.if %last -> (f32) {
      %t = arith.addf %s, %v : f32
      scf.yield %t : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// -----

// A stride-1 convolution whose output rows (3 wide) are narrower than a vector (4):
// a panel that does not fit whole vectors in rows is cut at the row ends and each
// piece copied by masked vectors (a row of 3 read contiguously, not an element at a
// time); the last panel, reaching past N = 9, is zeroed first.

// CHECK-LABEL: func.func @conv_short_rows
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x2x5x5xf32>
// CHECK:         "scf.parallel"
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         scf.if
// CHECK:           vector.load %[[X]]
// CHECK:           vector.store {{.*}}, %[[P]]
// CHECK:         } else {
// CHECK:           %[[END:.+]] = arith.minsi
// CHECK:           %[[PAST:.+]] = arith.cmpi slt, %[[END]]
// CHECK:           scf.if %[[PAST]] {
// CHECK:             %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK:             scf.for
// CHECK-COUNT-2:       vector.store %[[ZEROS]], %[[P]]
// CHECK:           scf.for %[[ROW:[a-zA-Z0-9_]+]] =
// CHECK:             %[[START:.+]] = arith.muli %[[ROW]]
// CHECK:             %[[LO:.+]] = arith.maxsi %[[START]]
// CHECK:             %[[HI:.+]] = arith.minsi
// CHECK:             scf.for %[[J:[a-zA-Z0-9_]+]] = %[[LO]] to %[[HI]] step
// CHECK:               %[[LEFT:.+]] = arith.subi %[[HI]], %[[J]] : index
// CHECK:               %[[MASK:.+]] = vector.create_mask %[[LEFT]] : vector<4xi1>
// CHECK:                   %[[V:.+]] = vector.maskedload %[[X]][{{.*}}], %[[MASK]]
// CHECK:                   vector.maskedstore %[[P]][{{.*}}], %[[MASK]], %[[V]]
// CHECK:           vector.fma
// CHECK:           memref.dealloc %[[P]]
func.func @conv_short_rows(%x: memref<1x2x5x5xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x5x5xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A convolution of at most 4 output columns (a 2x2 output) takes the kernel with one
// 4-wide panel in one 4-lane vector, not the plain loops a matmul that narrow takes,
// which run a convolution's window scalar. Its 5 output channels are more rows than
// a block of A (MC = 4 here): B's panels are packed up front, for every row block.

// CHECK-LABEL: func.func @conv_four_columns
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x4xf32>
// CHECK:         "scf.parallel"
// CHECK:           vector.store {{.*}}, %[[P]]{{.*}} : memref<?x?x?x4xf32>, vector<4xf32>
// CHECK:         "scf.parallel"
// CHECK:           %[[B:.+]] = vector.load %[[P]]{{.*}} : memref<?x?x?x4xf32>, vector<4xf32>
// CHECK:           vector.fma %{{.*}}, %[[B]], %{{.*}} : vector<4xf32>
// CHECK-NOT:     linalg.generic

func.func @conv_four_columns(%x: memref<2x3x4x4xf32>, %w: memref<5x3x3x3xf32>, %y: memref<2x5x2x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<2x3x4x4xf32>, memref<5x3x3x3xf32>) outs(%y : memref<2x5x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A read along its rows (row-major, contiguous along k) is read in place, however
// many panels B has (N = 64 is 8 panels of NR = 8): no buffer, no copy; the micro-kernel
// broadcasts its MR values for each k straight from MR rows of A.

// CHECK-LABEL: func.func @a_in_place
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<9x16xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<16x64xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<9x64xf32>)
// CHECK:         %[[BP:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         "scf.parallel"
// CHECK-NOT:       memref.alloc
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 scf.for {{.*}} iter_args
// CHECK:                   memref.load %[[A]][%{{.+}}, %{{.+}}] : memref<9x16xf32>
// CHECK:                   vector.broadcast
// CHECK-COUNT-2:           vector.fma
// CHECK:                   memref.load %[[A]][%{{.+}}, %{{.+}}] : memref<9x16xf32>
// CHECK:         scf.reduce
// CHECK-NOT:     memref.alloc
// CHECK:         memref.dealloc %[[BP]]
func.func @a_in_place(%a: memref<9x16xf32>, %b: memref<16x64xf32>, %c: memref<9x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<9x16xf32>, memref<16x64xf32>) outs(%c : memref<9x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A read across its rows (`A[k, i]`, ONNX Gemm's transA) with enough column panels
// (N = 64 is 8 panels of NR = 8) to repay packing it: the task allocates a buffer for
// its block of A (MC/MR micro-panels of KC x MR), copies the block into it for each K
// block (rows past the task clamped to its last row), and the micro-kernel reads its
// MR values for each k from that one contiguous micro-panel.

// CHECK-LABEL: func.func @packed_a
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<16x9xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<16x64xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<9x64xf32>)
// CHECK:         scf.for
// CHECK:         "scf.parallel"
// CHECK:           %[[AP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<5x4x2xf32>
// CHECK:           scf.for %[[K0:[a-zA-Z0-9_]+]] =
// CHECK:             scf.for %[[Q:[a-zA-Z0-9_]+]] =
// CHECK:               arith.minsi
// CHECK:               scf.for %[[K:[a-zA-Z0-9_]+]] = %[[K0]] to
// CHECK:                 %[[KK:.+]] = arith.subi %[[K]], %[[K0]] : index
// CHECK:                 %[[V0:.+]] = memref.load %[[A]][%[[K]], {{.*}}] : memref<16x9xf32>
// CHECK:                 memref.store %[[V0]], %[[AP]][%[[Q]], %[[KK]], %{{.+}}] : memref<5x4x2xf32>
// CHECK:                 %[[V1:.+]] = memref.load %[[A]][%[[K]], {{.*}}] : memref<16x9xf32>
// CHECK:                 memref.store %[[V1]], %[[AP]][%[[Q]], %[[KK]], %{{.+}}] : memref<5x4x2xf32>
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 scf.for {{.*}} iter_args
// CHECK-NOT:               memref.load %[[A]]
// CHECK:                   memref.load %[[AP]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<5x4x2xf32>
// CHECK:                   vector.broadcast
// CHECK-COUNT-2:           vector.fma
// CHECK:           memref.dealloc %[[AP]] : memref<5x4x2xf32>
// CHECK:         memref.dealloc

// LOC-LABEL: func.func @packed_a
// LOC:         memref.alloc() {alignment = 64 : i64} : memref<5x4x2xf32> loc("model.py":9:2)
func.func @packed_a(%a: memref<16x9xf32>, %b: memref<16x64xf32>, %c: memref<9x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<16x9xf32>, memref<16x64xf32>) outs(%c : memref<9x64xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  } loc("model.py":9:2)
  func.return
}

// -----

// N unknown until run time: a transposed A is packed too (a wide N is the common case);
// a dynamic A read along its rows is read in place.

// CHECK-LABEL: func.func @packed_a_dynamic
// CHECK:         "scf.parallel"
// CHECK:           memref.alloc() {alignment = 64 : i64} : memref<2x4x2xf32>
// CHECK:           memref.dealloc %{{.+}} : memref<2x4x2xf32>
// CHECK-LABEL: func.func @a_in_place_dynamic
// CHECK:         "scf.parallel"
// CHECK-NOT:       memref.alloc
// CHECK:           vector.fma
// CHECK:         scf.reduce
func.func @packed_a_dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
func.func @a_in_place_dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A zero fill, then ops without memory effects (the bias's get_global, as ONNX Gemm
// gives), then the matmul: the fill is still dropped; a store in between keeps it.

// CHECK-LABEL: func.func @fill_before_global
// CHECK-NOT:     linalg.generic
// CHECK:         memref.get_global @bias
// CHECK:         vector.fma
// CHECK:         scf.if
// CHECK-NOT:       vector.load
// CHECK:           vector.store
// CHECK:         } else {
// CHECK:           vector.load
// CHECK-LABEL: func.func @fill_before_store
// CHECK:         linalg.generic
// CHECK:         memref.store
// CHECK:         vector.fma
"memref.global"() <{sym_name = "bias", type = memref<9xf32>, initial_value, sym_visibility = "public", constant}> : () -> ()
func.func @fill_before_global(%a: memref<5x12xf32>, %b: memref<12x9xf32>, %c: memref<5x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<5x9xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  %bias = memref.get_global @bias : memref<9xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<5x12xf32>, memref<12x9xf32>) outs(%c : memref<5x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
func.func @fill_before_store(%a: memref<5x12xf32>, %b: memref<12x9xf32>, %c: memref<5x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<5x9xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  %one = arith.constant 1.0 : f32
  %i = arith.constant 2 : index
  memref.store %one, %c[%i, %i] : memref<5x9xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<5x12xf32>, memref<12x9xf32>) outs(%c : memref<5x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Between the fill and the matmul, another buffer allocated and freed (what
// `bufferize` leaves when a dynamic size is read from a buffer): the fill is dropped.

// CHECK-LABEL: func.func @fill_before_alloc
// CHECK-NOT:     linalg.generic
// CHECK:         memref.alloc(%{{.+}}) : memref<?x9xf32>
// CHECK:         memref.dealloc
// CHECK:         vector.fma
// CHECK:         scf.if
// CHECK-NOT:       vector.load
// CHECK:           vector.store
func.func @fill_before_alloc(%a: memref<?x12xf32>, %b: memref<12x9xf32>, %c: memref<?x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<?x9xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  %c0 = arith.constant 0 : index
  %rows = memref.dim %c, %c0 : memref<?x9xf32>
  %unused = memref.alloc(%rows) : memref<?x9xf32>
  memref.dealloc %unused : memref<?x9xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x12xf32>, memref<12x9xf32>) outs(%c : memref<?x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A backward pass fills a gradient's buffer early and computes it later: between the
// fill and the matmul, a kernel on other buffers. Where C is the function's own buffer,
// reached by no other name, the fill is dropped; where C is an argument (another name
// may write it) or an op in between reads it, the fill stays.

// CHECK-LABEL: func.func @fill_far_before
// CHECK:         %[[C:.+]] = memref.alloc() : memref<5x9xf32>
// CHECK-NOT:     linalg.generic {{.*}} outs(%[[C]]
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : memref<5x12xf32>)
// CHECK:         vector.fma
// CHECK:         scf.if
// CHECK-NOT:       vector.load
// CHECK:           vector.store
// CHECK-LABEL: func.func @fill_far_before_argument
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : memref<5x9xf32>)
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : memref<5x12xf32>)
// CHECK:         vector.fma
// CHECK-LABEL: func.func @fill_far_before_read
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : memref<5x9xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.+}} : memref<5x9xf32>)
// CHECK:         vector.fma
func.func @fill_far_before(%a: memref<5x12xf32>, %b: memref<12x9xf32>, %d: memref<5x12xf32>) -> memref<5x9xf32> {
  %c = memref.alloc() : memref<5x9xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<5x9xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<5x12xf32>) outs(%d : memref<5x12xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%d, %b : memref<5x12xf32>, memref<12x9xf32>) outs(%c : memref<5x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return %c : memref<5x9xf32>
}
func.func @fill_far_before_argument(%a: memref<5x12xf32>, %b: memref<12x9xf32>, %d: memref<5x12xf32>, %c: memref<5x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<5x9xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<5x12xf32>) outs(%d : memref<5x12xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%d, %b : memref<5x12xf32>, memref<12x9xf32>) outs(%c : memref<5x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
func.func @fill_far_before_read(%a: memref<5x12xf32>, %b: memref<12x9xf32>, %d: memref<5x9xf32>) -> memref<5x9xf32> {
  %c = memref.alloc() : memref<5x9xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<5x9xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c : memref<5x9xf32>) outs(%d : memref<5x9xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<5x12xf32>, memref<12x9xf32>) outs(%c : memref<5x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return %c : memref<5x9xf32>
}

// -----

// An f16 matmul takes the kernel, summed in f32: B packed widened to f32, A widened
// as it is broadcast, one block of all of K (the sums are rounded once), C widened to
// add to and rounded to f16 as it is stored.

// CHECK-LABEL: func.func @half_matmul
// CHECK:         %[[PANELS:.*]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         %[[ROW:.*]] = vector.load %{{.*}} : memref<16x32xf16>, vector<4xf16>
// CHECK-NEXT:    %[[WIDE:.*]] = arith.extf %[[ROW]] : vector<4xf16> to vector<4xf32>
// CHECK-NEXT:    vector.store %[[WIDE]], %[[PANELS]]
// CHECK:         %[[DEPTH:.*]] = arith.maxsi %[[K:.*]], %{{.*}} : index
// CHECK:         scf.for %[[K0:.*]] = %{{.*}} to %[[K]] step %[[DEPTH]] {
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// CHECK:             %[[A:.*]] = memref.load %{{.*}} : memref<8x16xf16>
// CHECK-NEXT:        %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:        %[[AV:.*]] = vector.broadcast %[[AW]] : f32 to vector<4xf32>
// CHECK-NEXT:        vector.fma %[[AV]], %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK:           %[[OLD:.*]] = vector.load %{{.*}} : memref<8x32xf16>, vector<4xf16>
// CHECK-NEXT:      %[[OLDW:.*]] = arith.extf %[[OLD]] : vector<4xf16> to vector<4xf32>
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[OLDW]], %{{.*}} : vector<4xf32>
// CHECK-NEXT:      %[[NARROW:.*]] = arith.truncf %[[SUM]] : vector<4xf32> to vector<4xf16>
// CHECK-NEXT:      vector.store %[[NARROW]], %{{.*}} : memref<8x32xf16>, vector<4xf16>
// CHECK:         memref.dealloc %[[PANELS]] : memref<?x?x?x8xf32>
func.func @half_matmul(%a: memref<8x16xf16>, %b: memref<16x32xf16>, %c: memref<8x32xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf16>, memref<16x32xf16>) outs(%c : memref<8x32xf16>) {
  ^bb0(%x: f16, %y: f16, %z: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %z, %p : f16
    linalg.yield %s : f16
  }
  func.return
}

// RUN: mlc-opt %s --split-input-file -p convert-contractions-to-gpu | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-contractions-to-gpu --print-debuginfo | filecheck %s --check-prefix=LOC

// A matmul becomes one launch of 256-thread blocks over 128x128 output tiles
// (ceil(N/128) x ceil(M/128) x 1), with two double-buffered shared tiles in address
// space 3 (A transposed as it is stored, rows padded to 132 floats; B as it is, 136),
// one barrier per 8-deep K slice, 16-byte shared loads, 64 fma accumulators per thread
// and guarded stores. The K loop is built twice: with 16-byte global loads (a run of 4
// along K of A, along the columns of B), taken when both buffers are 16-byte aligned
// with rows of a multiple of 4 floats, and with scalar loads. Elements past K are
// zeroed as they are stored into shared memory. When the 128x128 grid has fewer than
// 264 blocks, the host launches the 64x64-tile variant instead: 8x4 accumulators a
// thread, 16-deep slices of which two groups of 128 threads take 8 steps each, the
// second group's sums added to the first's through shared memory before the stores.
// Its vector version is a 3-stage cp.async pipeline: three buffers of each tile, both
// kept in the operands' layouts (A as [row, k], rows padded to 20 floats); slices 0
// and 1 are issued before the loop, each a commit group (one 16-byte copy of A and
// one of B a thread); each iteration waits for all but the newest group, then a
// barrier, issues the slice two ahead and multiplies; nothing is left in flight after.

// CHECK-LABEL: func.func @matmul
// CHECK-NOT:     linalg.generic
// CHECK:         %[[BIG:.+]] = arith.cmpi uge, %{{.+}}, %{{.+}} : index
// CHECK:         scf.if %[[BIG]] {
// CHECK:           "gpu.launch"
// CHECK:           %[[A:.+]] = memref.alloca() : memref<2x8x132xf32, 3 : i64>
// CHECK-NEXT:      %[[B:.+]] = memref.alloca() : memref<2x8x136xf32, 3 : i64>
// CHECK:           "memref.extract_aligned_pointer_as_index"(%a)
// CHECK:           "memref.extract_aligned_pointer_as_index"(%b)
// CHECK:           scf.if %{{.+}} -> ({{(f32, ){63}f32}}) {
// CHECK:             scf.if %{{.+}} -> (vector<4xf32>, vector<4xf32>) {
// CHECK:               vector.load %a[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK:               vector.load %b[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK:             scf.for {{.*}} -> ({{(f32, ){64}v}}ector<4xf32>, vector<4xf32>) {
// CHECK:               arith.select %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[A]][{{.*}}] : memref<2x8x132xf32, 3 : i64>
// CHECK:               arith.select %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK-NEXT:          vector.store %{{.+}}, %[[B]][{{.*}}] {alignment = 16 : i64} : memref<2x8x136xf32, 3 : i64>, vector<4xf32>
// CHECK-NEXT:          gpu.barrier
// CHECK:               vector.load %a
// CHECK:               vector.load %b
// CHECK:               vector.load %[[A]][{{.*}}] {alignment = 16 : i64} : memref<2x8x132xf32, 3 : i64>, vector<4xf32>
// CHECK-COUNT-64:      math.fma
// CHECK:               scf.yield
// CHECK:           } else {
// CHECK-NOT:         vector.load %a
// CHECK:             scf.for {{.*}} -> ({{(f32, ){71}f32}}) {
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[A]][{{.*}}] : memref<2x8x132xf32, 3 : i64>
// CHECK-COUNT-4:       memref.store %{{.+}}, %[[B]][{{.*}}] : memref<2x8x136xf32, 3 : i64>
// CHECK-NEXT:          gpu.barrier
// CHECK-COUNT-64:      math.fma
// CHECK:               scf.yield
// CHECK-COUNT-64:  scf.if
// CHECK-NOT:       scf.if
// CHECK:           gpu.terminator
// CHECK:         } else {
// CHECK:           %[[T:.+]] = arith.constant 256 : index
// CHECK:           "gpu.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]],
// CHECK:           %[[SA:.+]] = memref.alloca() : memref<3x64x20xf32, 3 : i64>
// CHECK-NEXT:      %[[SB:.+]] = memref.alloca() : memref<3x16x72xf32, 3 : i64>
// CHECK:           "memref.extract_aligned_pointer_as_index"(%a)
// CHECK:           "memref.extract_aligned_pointer_as_index"(%b)
// CHECK:           scf.if %{{.+}} -> ({{(f32, ){31}f32}}) {
// CHECK:             scf.if
// CHECK:               "memref.extract_aligned_pointer_as_index"(%a)
// CHECK:               "memref.extract_aligned_pointer_as_index"(%[[SA]])
// CHECK:               llvm.inline_asm has_side_effects "{ .reg .u64 sa, ga; cvta.to.shared.u64 sa, $0; cvta.to.global.u64 ga, $1; cp.async.cg.shared.global [sa], [ga], 16, $2; }", "l,l,r,~{memory}"
// CHECK:               "memref.extract_aligned_pointer_as_index"(%b)
// CHECK:               "memref.extract_aligned_pointer_as_index"(%[[SB]])
// CHECK:               llvm.inline_asm has_side_effects "{{.*}}cp.async.cg.shared.global
// CHECK:             llvm.inline_asm has_side_effects "cp.async.commit_group;", "~{memory}"
// CHECK-COUNT-2:       llvm.inline_asm has_side_effects "{{.*}}cp.async.cg.shared.global
// CHECK:             llvm.inline_asm has_side_effects "cp.async.commit_group;"
// CHECK:             scf.for {{.*}} -> ({{(f32, ){31}f32}}) {
// CHECK-NEXT:          llvm.inline_asm has_side_effects "cp.async.wait_group 1;", "~{memory}"
// CHECK-NEXT:          gpu.barrier
// CHECK-COUNT-2:       llvm.inline_asm has_side_effects "{{.*}}cp.async.cg.shared.global
// CHECK:               llvm.inline_asm has_side_effects "cp.async.commit_group;"
// CHECK:               vector.load %[[SA]][{{.*}}] {alignment = 16 : i64} : memref<3x64x20xf32, 3 : i64>, vector<4xf32>
// CHECK-COUNT-256:     math.fma
// CHECK-NOT:           math.fma
// CHECK:               scf.yield
// CHECK:             llvm.inline_asm has_side_effects "cp.async.wait_group 0;"
// CHECK:           } else {
// CHECK-NOT:         llvm.inline_asm
// CHECK:             scf.for {{.*}} -> ({{(f32, ){39}f32}}) {
// CHECK-COUNT-256:     math.fma
// CHECK:               scf.yield
// CHECK:           %[[SUMS:.+]] = memref.alloca() : memref<1x32x128xf32, 3 : i64>
// CHECK:           scf.if
// CHECK-COUNT-32:    memref.store %{{.+}}, %[[SUMS]]
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK-COUNT-32:    memref.load %[[SUMS]]
// CHECK-COUNT-32:    scf.if
// CHECK-NOT:       scf.if
// CHECK:           gpu.terminator
// LOC:           memref.alloca() : memref<2x8x132xf32, 3 : i64> loc("mm.py":3:4)
// LOC:           "gpu.barrier"() : () -> () loc("mm.py":3:4)
// LOC:           math.fma {{.*}} loc("mm.py":3:4)
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } loc("mm.py":3:4)
  func.return
}

// -----

// Batch dims are the grid's z: block z is delinearised into the batch indices.

// CHECK-LABEL: func.func @batched
// CHECK:         %[[B:.+]] = memref.dim %a, %{{.+}} : memref<?x?x?xf32>
// CHECK:         %[[Z:.+]] = arith.muli %{{.+}}, %[[B]] : index
// CHECK:         %[[GZ:.+]] = arith.maxui %[[Z]], %{{.+}} : index
// CHECK:         "gpu.launch"(%{{.+}}, %{{.+}}, %[[GZ]],
// CHECK:           "gpu.block_id"() <{dimension = #gpu<dim z>}>
// CHECK:           memref.load %a[%{{.+}}, %{{.+}}, %{{.+}}] : memref<?x?x?xf32>
func.func @batched(%a: memref<?x?x?xf32>, %b: memref<?x?x?xf32>, %c: memref<?x?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, k, j) -> (n, i, k)>, affine_map<(n, i, k, j) -> (n, k, j)>, affine_map<(n, i, k, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%c : memref<?x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// An epilogue fused by linalg-fuse-elementwise (bias + relu on the last K iteration)
// runs once per output, after the K loop and before its store; the bias is read once
// a column of the thread's (8 here), at the column clamped inside N, before the
// stores' checks; the per-iteration condition is gone.

// CHECK-LABEL: func.func @epilogue
// CHECK-COUNT-8: arith.minui
// CHECK-NEXT:    %[[COL:.+]] = arith.minui %{{.+}}, %{{.+}} : index
// CHECK:         scf.for
// CHECK-NOT:       linalg.index
// CHECK:           %[[BIAS:.+]] = memref.load %bias[%[[COL]]] : memref<?xf32>
// CHECK-COUNT-7:   memref.load %bias
// CHECK-NOT:       memref.load %bias
// CHECK:           scf.if %{{[0-9]+}} {
// CHECK-NEXT:        arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %[[SUM:.+]] = arith.addf %{{.+}}, %[[BIAS]] : f32
// CHECK-NEXT:        %[[R:.+]] = arith.maximumf %[[SUM]], %{{.+}} : f32
// CHECK-NEXT:        memref.store %[[R]], %c[%{{.+}}, %{{.+}}] : memref<?x?xf32>
// CHECK-NOT:         memref.load %bias
// CHECK:             memref.store
func.func @epilogue(%a: memref<?x?xf32>, %b: memref<?x64xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %bias : memref<?x?xf32>, memref<?x64xf32>, memref<?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 63 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %r = scf.if %is_last -> (f32) {
      %zero = arith.constant 0.0 : f32
      %t = arith.addf %s, %z : f32
      %u = arith.maximumf %t, %zero : f32
      scf.yield %u : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// -----

// The zero fill just before the matmul goes: the accumulators start at its constant
// and the output is not read. A fill with a use between stays, and is read.

// CHECK-LABEL: func.func @filled
// CHECK-NOT:     linalg.generic
// CHECK:         "gpu.launch"
// CHECK:           %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %{{.+}} = arith.constant
// CHECK-NOT:       memref.load %c
// CHECK:           scf.for {{.*}} iter_args(%{{.+}} = %[[ZERO]], %{{.+}} = %[[ZERO]],
// CHECK-LABEL: func.func @read_between
// CHECK:         linalg.generic
// CHECK:         memref.load %c
// CHECK:         "gpu.launch"
// CHECK:           memref.load %c
// CHECK-LABEL: func.func @read_in_a_region
// CHECK:         linalg.generic
// CHECK:         scf.if
// CHECK:           memref.load %c
// CHECK:         "gpu.launch"
// CHECK:           memref.load %c
func.func @filled(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<?x?xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
func.func @read_between(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<?x?xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  %i = arith.constant 0 : index
  %seen = memref.load %c[%i, %i] : memref<?x?xf32>
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

func.func @read_in_a_region(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %flag: i1) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<?x?xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  scf.if %flag {
    %i = arith.constant 0 : index
    %seen = memref.load %c[%i, %i] : memref<?x?xf32>
    memref.store %seen, %a[%i, %i] : memref<?x?xf32>
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Left to convert-linalg-to-parallel-loops: f64, a small static matmul (a warp per
// output does better there), two reduction dims, a body that is not acc + a * b, and
// a narrow one (16 static columns: warps share its rows).

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT:     gpu.launch
func.func @left_alone(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>,
                      %s: memref<64x64xf32>, %t: memref<64x64xf32>, %u: memref<64x64xf32>,
                      %x: memref<?x?x?xf32>, %w: memref<?x?xf32>, %y: memref<?x?xf32>,
                      %p: memref<?x?xf32>, %q: memref<?x?xf32>, %r: memref<?x?xf32>,
                      %h: memref<?x128xf32>, %v: memref<128x16xf32>, %o: memref<?x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %v : memref<?x128xf32>, memref<128x16xf32>) outs(%o : memref<?x16xf32>) {
  ^bb0(%e: f32, %f: f32, %acc: f32):
    %m = arith.mulf %e, %f : f32
    %n = arith.addf %acc, %m : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>) {
  ^bb0(%e: f64, %f: f64, %acc: f64):
    %m = arith.mulf %e, %f : f64
    %n = arith.addf %acc, %m : f64
    linalg.yield %n : f64
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%s, %t : memref<64x64xf32>, memref<64x64xf32>) outs(%u : memref<64x64xf32>) {
  ^bb0(%e: f32, %f: f32, %acc: f32):
    %m = arith.mulf %e, %f : f32
    %n = arith.addf %acc, %m : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, l, j) -> (i, k, l)>, affine_map<(i, k, l, j) -> (k, j)>, affine_map<(i, k, l, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<?x?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%e: f32, %f: f32, %acc: f32):
    %m = arith.mulf %e, %f : f32
    %n = arith.addf %acc, %m : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%p, %q : memref<?x?xf32>, memref<?x?xf32>) outs(%r : memref<?x?xf32>) {
  ^bb0(%e: f32, %f: f32, %acc: f32):
    %m = arith.maximumf %e, %f : f32
    %n = arith.addf %acc, %m : f32
    linalg.yield %n : f32
  }
  func.return
}

// -----

// B read as b[j, k] (`x @ w.T`): its runs go along K, its contiguous dim, 16 bytes at a
// time, and are transposed as they are stored (B's tile padded to 132 like A's).

// CHECK-LABEL: func.func @transposed_b
// CHECK:         memref.alloca() : memref<2x8x132xf32, 3 : i64>
// CHECK-NEXT:    %[[B:.+]] = memref.alloca() : memref<2x8x132xf32, 3 : i64>
// CHECK:         vector.load %b[%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<128x784xf32>, vector<4xf32>
// CHECK:         scf.for
// CHECK-COUNT-4:   memref.store %{{.+}}, %[[B]]
func.func @transposed_b(%a: memref<?x784xf32>, %b: memref<128x784xf32>, %c: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (j, k)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x784xf32>, memref<128x784xf32>) outs(%c : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Seventeen static columns are no longer narrow: the tiled kernel takes them.

// CHECK-LABEL: func.func @seventeen_columns
// CHECK:         "gpu.launch"
// CHECK-NOT:     linalg.generic
func.func @seventeen_columns(%h: memref<?x128xf32>, %v: memref<128x17xf32>, %o: memref<?x17xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %v : memref<?x128xf32>, memref<128x17xf32>) outs(%o : memref<?x17xf32>) {
  ^bb0(%e: f32, %f: f32, %acc: f32):
    %m = arith.mulf %e, %f : f32
    %n = arith.addf %acc, %m : f32
    linalg.yield %n : f32
  }
  func.return
}

// -----

// A block works only when its tile starts inside the output (row and column of its
// first element against M and N): a grid launched at a bound (bound-device-sizes)
// has blocks past the rows the device counted, which leave without multiplying.

// CHECK-LABEL: func.func @guard
// CHECK:         %[[M:.+]] = memref.dim %a, %{{.+}} : memref<?x64xf32>
// CHECK:         "gpu.launch"
// CHECK:           %[[BX:.+]] = "gpu.block_id"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:      %[[BY:.+]] = "gpu.block_id"() <{dimension = #gpu<dim y>}>
// CHECK:           %[[ROW0:.+]] = arith.muli %[[BY]], %{{.+}} : index
// CHECK-NEXT:      %[[IN_M:.+]] = arith.cmpi ult, %[[ROW0]], %[[M]] : index
// CHECK:           %[[COL0:.+]] = arith.muli %[[BX]], %{{.+}} : index
// CHECK-NEXT:      %[[IN_N:.+]] = arith.cmpi ult, %[[COL0]], %{{.+}} : index
// CHECK-NEXT:      %[[BOTH:.+]] = arith.andi %[[IN_M]], %[[IN_N]] : i1
// CHECK:           %[[WORK:.+]] = arith.andi %[[BOTH]], %{{.+}} : i1
// CHECK-NEXT:      scf.if %[[WORK]] {
func.func @guard(%a: memref<?x64xf32>, %b: memref<64x128xf32>, %c: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x64xf32>, memref<64x128xf32>) outs(%c : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

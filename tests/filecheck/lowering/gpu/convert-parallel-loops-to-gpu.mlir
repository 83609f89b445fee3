// RUN: mlc-opt %s --split-input-file -p 'convert-parallel-loops-to-gpu{vector-lanes=false}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'convert-parallel-loops-to-gpu{block-size=128 vector-lanes=false}' | filecheck %s --check-prefix=B128
// RUN: mlc-opt %s --split-input-file -p 'convert-parallel-loops-to-gpu{vector-lanes=false}' --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: not mlc-opt %s -p 'convert-parallel-loops-to-gpu{block-size=100}' 2>&1 | filecheck %s --check-prefix=BAD

// BAD: block-size must be a multiple of 32 in [32, 1024], got 100

// A 2-D loop is flattened over a 1-D grid: the host computes the trip count and the
// number of blocks (at least one); each thread delinearises its index (last dim
// fastest) and does nothing past the end.

// CHECK-LABEL: func.func @two_dims(%m: memref<?x?xf32>, %n0: index, %n1: index)
// CHECK:         %[[C0:.+]] = arith.subi %n0, %[[LB:.+]] : index
// CHECK:         %[[COUNT0:.+]] = arith.divui
// CHECK:         %[[COUNT1:.+]] = arith.divui
// CHECK:         %[[TOTAL:.+]] = arith.muli %[[COUNT0]], %[[COUNT1]] : index
// CHECK:         %[[THREADS:.+]] = arith.constant 256 : index
// CHECK:         %[[BLOCKS:.+]] = arith.divui
// CHECK:         %[[GRID:.+]] = arith.maxui %[[BLOCKS]], %{{.+}} : index
// CHECK:         "gpu.launch"(%[[GRID]], %[[ONE:.+]], %[[ONE]], %[[THREADS]], %[[ONE]], %[[ONE]])
// CHECK:           %[[BID:.+]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[TID:.+]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[BDIM:.+]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:      %[[FIRST:.+]] = arith.muli %[[BID]], %[[BDIM]] : index
// CHECK-NEXT:      %[[T:.+]] = arith.addi %[[FIRST]], %[[TID]] : index
// CHECK-NEXT:      %[[IN:.+]] = arith.cmpi ult, %[[T]], %[[TOTAL]] : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-NEXT:        %[[J:.+]] = arith.remui %[[T]], %[[COUNT1]] : index
// CHECK-NEXT:        %[[I:.+]] = arith.divui %[[T]], %[[COUNT1]] : index
// CHECK:             memref.store %{{.+}}, %m[%{{.+}}, %{{.+}}] : memref<?x?xf32>
// CHECK:           "gpu.terminator"() : () -> ()
// CHECK-NOT:     scf.parallel
// B128-LABEL:  func.func @two_dims
// B128:          arith.constant 128 : index
// LOC-LABEL:   func.func @two_dims
// LOC:           "gpu.thread_id"{{.*}} loc("prog.py":7:3)
// LOC:           memref.store {{.*}} loc("prog.py":6:5)
// LOC:           }) : (index, index, index, index, index, index) -> () loc("prog.py":7:3)
func.func @two_dims(%m: memref<?x?xf32>, %n0: index, %n1: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %c0, %n0, %n1, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    memref.store %v, %m[%i, %j] : memref<?x?xf32> loc("prog.py":6:5)
    scf.reduce
  }) : (index, index, index, index, index, index) -> () loc("prog.py":7:3)
  func.return
}

// -----

// Lower bounds and steps other than 0 and 1 are applied to each index; a nested
// scf.parallel stays inside the kernel (it runs sequentially in its thread).

// CHECK-LABEL: func.func @strided_and_nested(%m: memref<64x8xf32>)
// CHECK:         "gpu.launch"
// CHECK:           scf.if
// CHECK:             %[[SCALED:.+]] = arith.muli %{{.+}}, %[[STEP:.+]] : index
// CHECK-NEXT:        %[[I:.+]] = arith.addi %[[LOWER:.+]], %[[SCALED]] : index
// CHECK:             "scf.parallel"
// CHECK:               memref.store %{{.+}}, %m[%[[I]], %{{.+}}] : memref<64x8xf32>
// CHECK-NOT:     "gpu.launch"
func.func @strided_and_nested(%m: memref<64x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %v = arith.constant 2.0 : f32
  "scf.parallel"(%c3, %c64, %c8) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb1(%j: index):
      memref.store %v, %m[%i, %j] : memref<64x8xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Loops inside host control flow become launches where they are.

// CHECK-LABEL: func.func @in_a_host_loop(%m: memref<4xf32>, %n: index)
// CHECK:         scf.for
// CHECK:           "gpu.launch"
func.func @in_a_host_loop(%m: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = arith.constant 2.0 : f32
  scf.for %k = %c0 to %n step %c1 {
    "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      memref.store %v, %m[%i] : memref<4xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}

// -----

// A row reduction (one scf.for whose iter_args accumulate with addf, then stores)
// gets a warp per row. Where the row's buffer starts 16-byte aligned with rows of a
// multiple of 4 floats (checked at run time), lanes first take groups of four
// consecutive elements with one 16-byte vector load (lane l from column 4l, a warp
// step of 128 columns: one group a step on this short row); the end of that loop is
// the row's start otherwise. From there, lanes stride by 32, four of a lane's
// iterations a step (their loads all in flight), then the rest one at a time. Lane 0
// starts from the stored value and the others from the identity; a butterfly of
// shuffles combines the lanes, and lane 0 stores.

// CHECK-LABEL: func.func @row_sum(%x: memref<?x128xf32>, %r: memref<?xf32>, %n: index)
// CHECK:         %[[WARP:.+]] = arith.constant 32 : index
// CHECK-NEXT:    %[[WORKERS:.+]] = arith.muli %{{.+}}, %[[WARP]] : index
// CHECK:         "gpu.launch"
// CHECK:           %[[T:.+]] = arith.addi
// CHECK:           %[[LANE:.+]] = arith.remui %[[T]], %{{.+}} : index
// CHECK:           %[[ROW:.+]] = arith.divui %[[T]], %{{.+}} : index
// CHECK:           %[[INIT:.+]] = memref.load %r[%{{.+}}] : memref<?xf32>
// CHECK:           %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK:           %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[FROM:.+]] = arith.select %[[FIRST]], %[[INIT]], %[[ZERO]] : f32
// CHECK:           %[[ADDRESS:.+]] = "memref.extract_aligned_pointer_as_index"(%x)
// CHECK:           %[[ALIGNED:.+]] = arith.andi
// CHECK:           %[[END:.+]] = arith.select %[[ALIGNED]], %{{.+}}, %{{.+}} : index
// CHECK:           %[[QUADS:.+]] = arith.muli %[[LANE]], %{{.+}} : index
// CHECK-NEXT:      %[[V0:.+]] = arith.addi %{{.+}}, %[[QUADS]] : index
// CHECK-NEXT:      %[[VSTEP:.+]] = arith.constant 128 : index
// CHECK-NEXT:      %[[VECTORS:.+]] = scf.for %[[C:.+]] = %[[V0]] to %[[END]] step %[[VSTEP]] iter_args(%{{.+}} = %[[FROM]]) -> (f32) {
// CHECK:             vector.load %x[%{{.+}}, %[[C]]] {alignment = 16 : i64} : memref<?x128xf32>, vector<4xf32>
// CHECK-NOT:         vector.load
// CHECK-COUNT-4:     arith.addf
// CHECK:           }
// CHECK-NEXT:      %[[OFFSET:.+]] = arith.muli %[[LANE]], %{{.+}} : index
// CHECK-NEXT:      %[[START:.+]] = arith.addi %[[END]], %[[OFFSET]] : index
// CHECK-NEXT:      %[[LANES:.+]] = arith.constant 32 : index
// CHECK-NEXT:      %[[STRIDE:.+]] = arith.muli %{{.+}}, %[[LANES]] : index
// CHECK:           %[[MAIN_END:.+]] = arith.addi %[[START]], %{{.+}} : index
// CHECK:           %[[WIDE:.+]] = arith.muli %[[STRIDE]], %{{.+}} : index
// CHECK-NEXT:      %[[MAIN:.+]] = scf.for %[[K:.+]] = %[[START]] to %[[MAIN_END]] step %[[WIDE]] iter_args(%{{.+}} = %[[VECTORS]]) -> (f32) {
// CHECK-NEXT:        memref.load %x[%{{.+}}, %[[K]]]
// CHECK-COUNT-3:     memref.load %x
// CHECK:           }
// CHECK-NEXT:      %[[PART:.+]] = scf.for %{{.+}} = %[[MAIN_END]] to %{{.+}} step %[[STRIDE]] iter_args(%{{.+}} = %[[MAIN]]) -> (f32) {
// CHECK-COUNT-5:   llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"
// CHECK:           %[[SUM:.+]] = arith.addf
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        memref.store %[[SUM]], %r[%{{.+}}] : memref<?xf32>
func.func @row_sum(%x: memref<?x128xf32>, %r: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %init = memref.load %r[%i] : memref<?xf32>
    %s = scf.for %k = %c0 to %c128 step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<?x128xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %r[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Softmax's online statistics (a running max and a sum rescaled to it, carried as a
// pair: mlc.lowering.support.online_softmax) are shared by a warp too: each lane starts from
// (-inf, 0), and each butterfly step shuffles both values and merges the pairs with
// one exp, scaling the sum of the lane with the smaller max.

// CHECK-LABEL: func.func @online_softmax_statistics
// CHECK:         "gpu.launch"
// CHECK:           %[[LANE:.+]] = arith.remui
// CHECK:           %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK:           scf.for
// CHECK:           %[[M:mx]], %[[S:sm]] = scf.for
// CHECK:           %[[M16:.+]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%{{.+}}, %[[M]], %{{.+}}, %{{.+}})
// CHECK-NEXT:      %[[S16:.+]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%{{.+}}, %[[S]], %{{.+}}, %{{.+}})
// CHECK-NEXT:      %[[MAX:.+]] = arith.maximumf %[[M]], %[[M16]] : f32
// CHECK-NEXT:      %[[MIN:.+]] = arith.minimumf %[[M]], %[[M16]] : f32
// CHECK-NEXT:      %[[GAP:.+]] = arith.subf %[[MIN]], %[[MAX]] : f32
// CHECK-NEXT:      %[[ORD:.+]] = arith.cmpf ord, %[[GAP]], %[[GAP]] : f32
// CHECK-NEXT:      %[[EXP:.+]] = math.exp %[[GAP]] : f32
// CHECK-NEXT:      %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SCALE:.+]] = arith.select %[[ORD]], %[[EXP]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[THEIRS:.+]] = arith.mulf %[[S16]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[KEEP:.+]] = arith.addf %[[S]], %[[THEIRS]] : f32
// CHECK-NEXT:      %[[MINE:.+]] = arith.mulf %[[S]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[GROW:.+]] = arith.addf %[[MINE]], %[[S16]] : f32
// CHECK-NEXT:      %[[LARGER:.+]] = arith.cmpf oge, %[[M]], %[[M16]] : f32
// CHECK-NEXT:      %{{.+}} = arith.select %[[LARGER]], %[[KEEP]], %[[GROW]] : f32
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"
// CHECK:           scf.if %[[FIRST]] {
// CHECK-NEXT:        memref.store %{{.+}}, %m[%{{.+}}] : memref<?xf32>
// CHECK-NEXT:        memref.store %{{.+}}, %s[%{{.+}}] : memref<?xf32>
func.func @online_softmax_statistics(%x: memref<?x100xf32>, %m: memref<?xf32>, %s: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %low = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %mx, %sm = scf.for %k = %c0 to %c100 step %c1 iter_args(%am = %low, %as = %zero) -> (f32, f32) {
      %v = memref.load %x[%i, %k] : memref<?x100xf32>
      %nm = arith.maximumf %am, %v : f32
      %lo = arith.minimumf %am, %v : f32
      %gap = arith.subf %lo, %nm : f32
      %ord = arith.cmpf ord, %gap, %gap : f32
      %e = math.exp %gap : f32
      %scale = arith.select %ord, %e, %zero : f32
      %d = arith.subf %v, %nm : f32
      %own = arith.addf %d, %one : f32
      %p = arith.mulf %as, %scale : f32
      %grown = arith.addf %p, %own : f32
      %kept = arith.addf %as, %scale : f32
      %gt = arith.cmpf ogt, %v, %am : f32
      %ns = arith.select %gt, %grown, %kept : f32
      scf.yield %nm, %ns : f32, f32
    }
    memref.store %mx, %m[%i] : memref<?xf32>
    memref.store %sm, %s[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A pair that is not the online step (here the kept sum adds the unguarded exp) has no
// merge the pass knows: the row stays with one thread, no shuffles.

// CHECK-LABEL: func.func @not_the_online_step
// CHECK:         "gpu.launch"
// CHECK-NOT:       llvm.nvvm.shfl
// CHECK:           scf.for
// CHECK-NOT:       llvm.nvvm.shfl
// CHECK:         func.return
func.func @not_the_online_step(%x: memref<?x100xf32>, %m: memref<?xf32>, %s: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %low = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %mx, %sm = scf.for %k = %c0 to %c100 step %c1 iter_args(%am = %low, %as = %zero) -> (f32, f32) {
      %v = memref.load %x[%i, %k] : memref<?x100xf32>
      %nm = arith.maximumf %am, %v : f32
      %lo = arith.minimumf %am, %v : f32
      %gap = arith.subf %lo, %nm : f32
      %ord = arith.cmpf ord, %gap, %gap : f32
      %e = math.exp %gap : f32
      %scale = arith.select %ord, %e, %zero : f32
      %d = arith.subf %v, %nm : f32
      %own = arith.addf %d, %one : f32
      %p = arith.mulf %as, %scale : f32
      %grown = arith.addf %p, %own : f32
      %kept = arith.addf %as, %e : f32
      %gt = arith.cmpf ogt, %v, %am : f32
      %ns = arith.select %gt, %grown, %kept : f32
      scf.yield %nm, %ns : f32, f32
    }
    memref.store %mx, %m[%i] : memref<?xf32>
    memref.store %sm, %s[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A short row (10 static elements) takes 16 lanes, two rows a warp: the host launches
// 16 threads a row, a thread's row and lane are its index over and modulo 16, the lanes
// whose rows are inside vote before the bounds check (the last warp may hold a row past
// the end), and only they shuffle, in four steps (8, 4, 2, 1). Each lane takes at most
// one element: no unrolled loop.

// CHECK-LABEL: func.func @short_rows(%x: memref<?x10xf32>, %r: memref<?xf32>, %n: index)
// CHECK:         %[[LANES:.+]] = arith.constant 16 : index
// CHECK-NEXT:    %{{.+}} = arith.muli %{{.+}}, %[[LANES]] : index
// CHECK:         "gpu.launch"
// CHECK:           %[[T:.+]] = arith.addi
// CHECK:           %[[LANE:.+]] = arith.remui %[[T]], %{{.+}} : index
// CHECK:           %[[ROW:.+]] = arith.divui %[[T]], %{{.+}} : index
// CHECK-NEXT:      %[[INSIDE:.+]] = arith.cmpi ult, %[[ROW]], %{{.+}} : index
// CHECK-NEXT:      %[[ALL:.+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:      %[[ACTIVE:.+]] = llvm.call_intrinsic "llvm.nvvm.vote.ballot.sync"(%[[ALL]], %[[INSIDE]]) : (i32, i1) -> i32
// CHECK-NEXT:      scf.if %[[INSIDE]] {
// CHECK:             %[[PART:.+]] = scf.for
// CHECK-NOT:         scf.for
// CHECK:             %[[EIGHT:.+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NOT:         llvm.mlir.constant(16 : i32)
// CHECK:             llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%[[ACTIVE]], %[[PART]], %[[EIGHT]], %{{.+}})
// CHECK-COUNT-3:     llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%[[ACTIVE]]
// CHECK-NOT:         llvm.nvvm.shfl
// CHECK:             scf.if
// CHECK-NEXT:          memref.store
func.func @short_rows(%x: memref<?x10xf32>, %r: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c10 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<?x10xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %r[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A narrow contraction's row (eight columns: 8 accumulators) takes a quarter of a warp.
// The weights, a small static buffer every row reads along its lanes (`w[k, c]`, k
// split among them), are copied into shared memory by the whole block first, rows
// padded to an odd length (8 -> 9), then a barrier; the row loop reads the copy. Lane
// 0 stores the row.

// CHECK-LABEL: func.func @narrow_rows(%x: memref<?x64xf32>, %w: memref<64x8xf32>, %y: memref<?x8xf32>, %n: index)
// CHECK:         %[[LANES:.+]] = arith.constant 8 : index
// CHECK-NEXT:    %{{.+}} = arith.muli %{{.+}}, %[[LANES]] : index
// CHECK:         "gpu.launch"
// CHECK:           %[[TID:.+]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK:           %[[COPY:.+]] = memref.alloca() : memref<64x9xf32, 3 : i64>
// CHECK-NEXT:      %[[ALL:.+]] = arith.constant 512 : index
// CHECK-NEXT:      %[[BLOCK:.+]] = arith.constant 256 : index
// CHECK-NEXT:      %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK-NEXT:      scf.for %[[E:.+]] = %[[TID]] to %[[ALL]] step %[[BLOCK]] {
// CHECK-NEXT:        %[[C:.+]] = arith.remui %[[E]], %[[EIGHT]] : index
// CHECK-NEXT:        %[[R:.+]] = arith.divui %[[E]], %[[EIGHT]] : index
// CHECK-NEXT:        %[[V:.+]] = memref.load %w[%[[R]], %[[C]]] : memref<64x8xf32>
// CHECK-NEXT:        memref.store %[[V]], %[[COPY]][%[[R]], %[[C]]] : memref<64x9xf32, 3 : i64>
// CHECK-NEXT:      }
// CHECK-NEXT:      "gpu.barrier"() : () -> ()
// CHECK:           scf.if
// CHECK:             %[[FIRST:.+]] = arith.cmpi eq
// CHECK:             scf.for
// CHECK-NOT:           memref.load %w
// CHECK:               memref.load %[[COPY]]
// CHECK-NOT:           memref.load %w
// CHECK:             scf.yield
// CHECK-COUNT-24:    llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"
// CHECK-NOT:         llvm.nvvm.shfl
// CHECK:             scf.if %[[FIRST]] {
// CHECK-COUNT-8:       memref.store %{{.+}}, %y
// CHECK-NEXT:        }
func.func @narrow_rows(%x: memref<?x64xf32>, %w: memref<64x8xf32>, %y: memref<?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s:8 = scf.for %k = %c0 to %c64 step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero, %a3 = %zero, %a4 = %zero, %a5 = %zero, %a6 = %zero, %a7 = %zero) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
      %v = memref.load %x[%i, %k] : memref<?x64xf32>
      %w0 = memref.load %w[%k, %c0] : memref<64x8xf32>
      %w1 = memref.load %w[%k, %c1] : memref<64x8xf32>
      %w2 = memref.load %w[%k, %c2] : memref<64x8xf32>
      %w3 = memref.load %w[%k, %c3] : memref<64x8xf32>
      %w4 = memref.load %w[%k, %c4] : memref<64x8xf32>
      %w5 = memref.load %w[%k, %c5] : memref<64x8xf32>
      %w6 = memref.load %w[%k, %c6] : memref<64x8xf32>
      %w7 = memref.load %w[%k, %c7] : memref<64x8xf32>
      %p0 = arith.mulf %v, %w0 : f32
      %p1 = arith.mulf %v, %w1 : f32
      %p2 = arith.mulf %v, %w2 : f32
      %p3 = arith.mulf %v, %w3 : f32
      %p4 = arith.mulf %v, %w4 : f32
      %p5 = arith.mulf %v, %w5 : f32
      %p6 = arith.mulf %v, %w6 : f32
      %p7 = arith.mulf %v, %w7 : f32
      %t0 = arith.addf %a0, %p0 : f32
      %t1 = arith.addf %a1, %p1 : f32
      %t2 = arith.addf %a2, %p2 : f32
      %t3 = arith.addf %a3, %p3 : f32
      %t4 = arith.addf %a4, %p4 : f32
      %t5 = arith.addf %a5, %p5 : f32
      %t6 = arith.addf %a6, %p6 : f32
      %t7 = arith.addf %a7, %p7 : f32
      scf.yield %t0, %t1, %t2, %t3, %t4, %t5, %t6, %t7 : f32, f32, f32, f32, f32, f32, f32, f32
    }
    memref.store %s#0, %y[%i, %c0] : memref<?x8xf32>
    memref.store %s#1, %y[%i, %c1] : memref<?x8xf32>
    memref.store %s#2, %y[%i, %c2] : memref<?x8xf32>
    memref.store %s#3, %y[%i, %c3] : memref<?x8xf32>
    memref.store %s#4, %y[%i, %c4] : memref<?x8xf32>
    memref.store %s#5, %y[%i, %c5] : memref<?x8xf32>
    memref.store %s#6, %y[%i, %c6] : memref<?x8xf32>
    memref.store %s#7, %y[%i, %c7] : memref<?x8xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A register tile's stores guarded against the edge (a 4x4 contraction tile) keep a
// thread an iteration: no lanes, no shuffles.

// CHECK-LABEL: func.func @guarded_stores
// CHECK-NOT:     llvm.nvvm.shfl
// CHECK:         memref.store %{{.+}}, %y
// CHECK-NOT:     llvm.nvvm.shfl
// CHECK:         func.return
func.func @guarded_stores(%x: memref<?x64xf32>, %y: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %inside = arith.cmpi ult, %i, %n : index
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<?x64xf32>
      %t = arith.addf %a, %v : f32
      scf.yield %t : f32
    }
    scf.if %inside {
      memref.store %s, %y[%i] : memref<?xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Not staged: a buffer the lanes read along its last dim (layer norm's scale: their
// loads coalesce already), one over 16 KiB, and one of a dynamic size.

// CHECK-LABEL: func.func @not_staged
// CHECK-NOT:     memref.alloca
// CHECK:         gpu.launch
// CHECK-NOT:     memref.alloca
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.launch
// CHECK-NOT:     memref.alloca
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.launch
// CHECK-NOT:     memref.alloca
// CHECK-NOT:     gpu.barrier
func.func @not_staged(%x: memref<?x256xf32>, %g: memref<256xf32>, %r: memref<?xf32>, %big: memref<256x17xf32>, %dyn: memref<?x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<?x256xf32>
      %s = memref.load %g[%k] : memref<256xf32>
      %p = arith.mulf %v, %s : f32
      %t = arith.addf %acc, %p : f32
      scf.yield %t : f32
    }
    memref.store %s, %r[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<?x256xf32>
      %s = memref.load %big[%k, %c0] : memref<256x17xf32>
      %p = arith.mulf %v, %s : f32
      %t = arith.addf %acc, %p : f32
      scf.yield %t : f32
    }
    memref.store %s, %r[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<?x256xf32>
      %s = memref.load %dyn[%k, %c0] : memref<?x4xf32>
      %p = arith.mulf %v, %s : f32
      %t = arith.addf %acc, %p : f32
      scf.yield %t : f32
    }
    memref.store %s, %r[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

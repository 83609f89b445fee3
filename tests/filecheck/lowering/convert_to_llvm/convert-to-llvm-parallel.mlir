// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// The outermost scf.parallel is outlined into @<f>_parallel0(lo, hi, lb, step,
// captured...), which runs iterations [lo, hi) of dimension 0 and the other
// dimensions as loops. The call site counts the iterations, stores the arguments in
// stack slots (allocated in the entry block) and, when the work is large enough, calls
// mlc_parallel_for with the chunk trampoline; otherwise it calls the trampoline itself
// with the same slots (the body has one caller, the trampoline, so LLVM does not
// inline it twice).
// Only the descriptor fields the body reads are passed: of each memref<?x?xf32> its
// aligned pointer and its row stride (the allocated pointer, the offset, the sizes and
// the unit stride are not read), so 8 slots: lb, step, %m, 2 x 2 fields and %s.
// The last argument is the address of the call site's i64 counter, zero at first,
// where the runtime keeps the loop's measured work between calls.

// CHECK:       llvm.func @mlc_parallel_for(!llvm.ptr, i64, i64, !llvm.ptr, !llvm.ptr)
// CHECK-LABEL: llvm.func @scale
// CHECK-SAME:    %[[S:[a-zA-Z0-9_]+]]: f32)
// CHECK-NEXT:    %[[ONE:.+]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[SLOTS:.+]] = llvm.alloca %[[ONE]] x !llvm.array<8 x i64>
// CHECK:         %[[BIG:.+]] = llvm.and %{{.*}}, %{{.*}} : i1
// CHECK:         llvm.store %[[S]], %{{.*}} : f32, !llvm.ptr
// CHECK:         llvm.cond_br %[[BIG]], ^[[PAR:.+]], ^[[SER:[a-z0-9]+]]
// CHECK-NEXT:  ^[[PAR]]:
// CHECK-NEXT:    %[[CHUNK:.+]] = llvm.mlir.addressof @scale_parallel0_chunk : !llvm.ptr
// CHECK-NEXT:    %[[WORK:.+]] = llvm.mlir.addressof @scale_parallel0_work0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @mlc_parallel_for(%[[CHUNK]], %[[LO0:[^,]+]], %[[HI0:[^,]+]], %[[SLOTS]], %[[WORK]])
// CHECK-NEXT:    llvm.br ^[[JOIN:[a-z0-9]+]]
// CHECK-NEXT:  ^[[SER]]:
// CHECK-NEXT:    llvm.call @scale_parallel0_chunk(%[[LO0]], %[[HI0]], %[[SLOTS]]) : (i64, i64, !llvm.ptr) -> ()
// CHECK-NEXT:    llvm.br ^[[JOIN]]
// CHECK-NEXT:  ^[[JOIN]]:
// CHECK-NEXT:    llvm.return
// CHECK-NOT:     scf.parallel

// CHECK-LABEL: llvm.func internal @scale_parallel0
// CHECK-SAME:    (%{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: i64, %{{[^:]+}}: f32, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: i64) {
// CHECK-NOT:     llvm.insertvalue
// CHECK:         llvm.fmul

// CHECK-LABEL: llvm.func internal @scale_parallel0_chunk
// CHECK-SAME:    (%[[LO:.+]]: i64, %[[HI:.+]]: i64, %[[CTX:.+]]: !llvm.ptr)
// CHECK:         llvm.inttoptr
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         llvm.call @scale_parallel0(%[[LO]], %[[HI]], {{.*}}) : (i64, i64, i64, i64, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK:       llvm.mlir.global internal @scale_parallel0_work0(0 : i64)

// LOC-LABEL:   llvm.func @scale
// LOC:           llvm.call @mlc_parallel_for({{.*}} loc("loops.py":4:2)
func.func @scale(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  "scf.parallel"(%c0, %c0, %n, %m, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i, %j] : memref<?x?xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> () loc("loops.py":4:2)
  func.return
}

// -----

// A parallel loop inside another runs as plain loops inside the outer one's body, and
// only the outer loop's call site has a counter of measured work.

// CHECK-LABEL: llvm.func @nested
// CHECK:         llvm.call @mlc_parallel_for
// CHECK-LABEL: llvm.func internal @nested_parallel0(
// CHECK-NOT:     mlc_parallel_for
// CHECK-LABEL: llvm.func internal @nested_parallel0_chunk
// CHECK:       llvm.mlir.global internal @nested_parallel0_work0(0 : i64)
// CHECK-NOT:   llvm.mlir.global
func.func @nested(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  %z = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb1(%j: index):
      memref.store %z, %a[%i, %j] : memref<?x?xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A generic split into blocks of a dynamic size (`linalg-tile` on a dynamic extent):
// each block's loops run to `min(block, n - i)` through a subview's size, so a block's
// work is counted per row of the block: the call site weighs count * (6 + 34 * block),
// reading the block size (the loop's step, capped) when it runs, instead of guessing
// 1024 rows for a block of any size.

// The constants are the function's, at the top of its entry block: the cap on the
// rows and the threshold (both 50000) are one.

// CHECK-LABEL: llvm.func @dynamic_blocks
// CHECK-DAG:     %[[FIXED:.+]] = llvm.mlir.constant(6) : i64
// CHECK-DAG:     %[[CAP:.+]] = llvm.mlir.constant(50000) : i64
// CHECK-DAG:     %[[PER_ROW:.+]] = llvm.mlir.constant(34) : i64
// CHECK:         %[[BLOCK:.+]] = llvm.call_intrinsic "llvm.smax.i64"
// CHECK:         %[[COUNT:.+]] = llvm.call_intrinsic "llvm.smax.i64"
// CHECK-NEXT:    %[[ROWS:.+]] = llvm.call_intrinsic "llvm.smin.i64"(%[[BLOCK]], %[[CAP]])
// CHECK-NEXT:    %[[ROWS_WORK:.+]] = llvm.mul %[[ROWS]], %[[PER_ROW]] : i64
// CHECK-NEXT:    %[[EACH:.+]] = llvm.add %[[FIXED]], %[[ROWS_WORK]] : i64
// CHECK-NEXT:    %[[TOTAL:.+]] = llvm.mul %[[COUNT]], %[[EACH]] : i64
// CHECK-NEXT:    llvm.icmp "sge" %[[TOTAL]], %[[CAP]] : i64
func.func @dynamic_blocks(%a: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?x16xf32>
  %half = arith.ceildivsi %n, %c2 : index
  %block = arith.maxsi %half, %c1 : index
  "scf.parallel"(%c0, %n, %block) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %left = arith.subi %n, %i : index
    %size = arith.minsi %block, %left : index
    %view = memref.subview %a[%i, 0] [%size, 16] [1, 1] : memref<?x16xf32> to memref<?x16xf32, strided<[16, 1], offset: ?>>
    %rows = memref.dim %view, %c0 : memref<?x16xf32, strided<[16, 1], offset: ?>>
    scf.for %r = %c0 to %rows step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        memref.store %z, %view[%r, %j] : memref<?x16xf32, strided<[16, 1], offset: ?>>
      }
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Blocks of a static size that does not divide the extent (1001 rows in blocks of
// 501): the rows of a block are bounded by the constant in the `min`, so a block
// weighs 6 + 501 * 34 ops, a constant.

// CHECK-LABEL: llvm.func @odd_blocks
// CHECK-DAG:     %[[EACH:.+]] = llvm.mlir.constant(17040) : i64
// CHECK-DAG:     %[[THRESHOLD:.+]] = llvm.mlir.constant(50000) : i64
// CHECK:         %[[COUNT:.+]] = llvm.call_intrinsic "llvm.smax.i64"
// CHECK-NEXT:    %[[TOTAL:.+]] = llvm.mul %[[COUNT]], %[[EACH]] : i64
// CHECK-NEXT:    llvm.icmp "sge" %[[TOTAL]], %[[THRESHOLD]] : i64
func.func @odd_blocks(%a: memref<1001x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  %n = arith.constant 1001 : index
  %block = arith.constant 501 : index
  "scf.parallel"(%c0, %n, %block) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %left = arith.subi %n, %i : index
    %size = arith.minsi %block, %left : index
    %view = memref.subview %a[%i, 0] [%size, 16] [1, 1] : memref<1001x16xf32> to memref<?x16xf32, strided<[16, 1], offset: ?>>
    %rows = memref.dim %view, %c0 : memref<?x16xf32, strided<[16, 1], offset: ?>>
    scf.for %r = %c0 to %rows step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        memref.store %z, %view[%r, %j] : memref<?x16xf32, strided<[16, 1], offset: ?>>
      }
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A bound it cannot read (loaded from memory) is still guessed as 1024 iterations:
// 3 + 1024 * 3 ops per iteration of the parallel loop.

// CHECK-LABEL: llvm.func @unknown_rows
// CHECK:         %[[EACH:.+]] = llvm.mlir.constant(3075) : i64
// CHECK:         %[[COUNT:.+]] = llvm.call_intrinsic "llvm.smax.i64"
// CHECK-NEXT:    llvm.mul %[[COUNT]], %[[EACH]] : i64
func.func @unknown_rows(%a: memref<?xf32>, %sizes: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %rows = memref.load %sizes[%i] : memref<?xindex>
    scf.for %r = %c0 to %rows step %c1 {
      %j = arith.addi %i, %r : index
      memref.store %z, %a[%j] : memref<?xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// The pool is called only for more than one iteration, whatever the work of each: the
// dispatch test ands "enough work" with "count > 1" (a static count of 1 folds to
// the serial call in LLVM).

// CHECK-LABEL: llvm.func @one_iteration
// CHECK:         %[[ENOUGH:.+]] = llvm.icmp "sge"
// CHECK:         %[[SHARED:.+]] = llvm.icmp "sgt" %[[COUNT:[^,]+]], %[[ONE:[^ ]+]] : i64
// CHECK-NEXT:    %[[BOTH:.+]] = llvm.and %[[ENOUGH]], %[[SHARED]] : i1
// CHECK:         llvm.cond_br %[[BOTH]]
func.func @one_iteration(%a: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %z = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    scf.for %r = %c0 to %c64 step %c1 {
      scf.for %j = %c0 to %c64 step %c1 {
        memref.store %z, %a[%r, %j] : memref<64x64xf32>
      }
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A call weighs what its callee's body does (`parallel_work`): four iterations, each a
// call of a function whose two loops of unknown trip counts are assumed long, get the
// pool's test with a full iteration's work (capped at 50000), where the call alone would
// weigh one op; the pool is then chosen at run time by the measured work.

// CHECK-LABEL: llvm.func @calls_defined
// CHECK:         %[[EACH:.+]] = llvm.mlir.constant(50000) : i64
// CHECK:         %[[COUNT:.+]] = llvm.call_intrinsic "llvm.smax.i64"
// CHECK-NEXT:    llvm.mul %[[COUNT]], %[[EACH]] : i64
func.func private @fill_rows(%a: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      memref.store %z, %a[%i, %j] : memref<?x?xf32>
    }
  }
  func.return
}

func.func @calls_defined(%a: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    func.call @fill_rows(%a, %n, %m) : (memref<?x?xf32>, index, index) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A call of a declaration (no body to weigh) counts one op (with `scf.reduce`: 2). A
// function that calls itself is weighed once, the inner call counting one op: 13 ops
// (three constants, the loop, four iterations of a call and a reduce, the return), and
// with the outer call and its reduce 15.

// CHECK-LABEL: llvm.func @calls_declared
// CHECK:         %[[EACH:.+]] = llvm.mlir.constant(2) : i64
// CHECK:         %[[COUNT:.+]] = llvm.call_intrinsic "llvm.smax.i64"
// CHECK-NEXT:    llvm.mul %[[COUNT]], %[[EACH]] : i64
// CHECK-LABEL: llvm.func @recursive
// CHECK:         %[[EACH:.+]] = llvm.mlir.constant(15) : i64
// CHECK:         %[[COUNT:.+]] = llvm.call_intrinsic "llvm.smax.i64"
// CHECK-NEXT:    llvm.mul %[[COUNT]], %[[EACH]] : i64
func.func private @external(%a: memref<?x?xf32>)

func.func @calls_declared(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    func.call @external(%a) : (memref<?x?xf32>) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

func.func @recursive(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    func.call @recursive(%a) : (memref<?x?xf32>) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

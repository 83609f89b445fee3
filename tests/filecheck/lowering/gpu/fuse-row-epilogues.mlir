// RUN: mlc-opt %s --split-input-file -p fuse-row-epilogues | filecheck %s
// RUN: mlc-opt %s --split-input-file -p fuse-row-epilogues,canonicalize,cse | filecheck %s --check-prefix=TWO-PASS

// A row sum and the loop over rows and columns that subtracts it: the consumer becomes
// an scf.for over the columns inside the row loop, its load of the sum reads the sum
// itself, and the sum's buffer (now only written) goes with its store. The output's
// allocation moves above the fused loop.

// CHECK-LABEL: func.func @centered(%x: memref<?x64xf32>, %n: index) -> memref<?x64xf32>
// CHECK-NOT:     memref.alloc(%n) {{.*}} : memref<?x1xf32>
// CHECK:         %[[Y:.+]] = memref.alloc(%n) : memref<?x64xf32>
// CHECK-NEXT:    "scf.parallel"
// CHECK-NEXT:    ^bb0(%[[I:.+]]: index):
// CHECK:           %[[S:.+]] = scf.for
// CHECK:           }
// CHECK-NEXT:      scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%[[I]], %[[J]]] : memref<?x64xf32>
// CHECK-NEXT:        %[[D:.+]] = arith.subf %[[V]], %[[S]] : f32
// CHECK-NEXT:        memref.store %[[D]], %[[Y]][%[[I]], %[[J]]] : memref<?x64xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.reduce
// CHECK-NOT:     scf.parallel
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return %[[Y]]
func.func @centered(%x: memref<?x64xf32>, %n: index) -> memref<?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc(%n) : memref<?x1xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<?x64xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %sum[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %y = memref.alloc(%n) : memref<?x64xf32>
  "scf.parallel"(%c0, %c0, %n, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<?x64xf32>
    %m = memref.load %sum[%i, %c0] : memref<?x1xf32>
    %d = arith.subf %v, %m : f32
    memref.store %d, %y[%i, %j] : memref<?x64xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %sum : memref<?x1xf32>
  func.return %y : memref<?x64xf32>
}

// -----

// Layer norm's shape: the sums, a per-row loop over (rows, 1) that turns them into
// statistics in place, and the normalisation. Both join: the per-row body is appended
// (its unit dim read as its start), and the normalisation reads the statistics the
// per-row body computed, not the sums.

// CHECK-LABEL: func.func @normalised
// CHECK-COUNT-1: "scf.parallel"
// CHECK:           %[[S:.+]] = scf.for
// CHECK:           %[[MEAN:.+]] = arith.divf %[[S]], %{{.+}} : f32
// CHECK-NEXT:      scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%{{.+}}, %[[J]]] : memref<8x64xf32>
// CHECK-NEXT:        %[[D:.+]] = arith.subf %[[V]], %[[MEAN]] : f32
// CHECK-NOT:     "scf.parallel"
// CHECK-NOT:     memref.load %stat
func.func @normalised(%x: memref<8x64xf32>, %y: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %count = arith.constant 64.0 : f32
  %stat = memref.alloc() : memref<8x1xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<8x64xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %stat[%i, %c0] : memref<8x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c8, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %u: index):
    %s = memref.load %stat[%i, %u] : memref<8x1xf32>
    %mean = arith.divf %s, %count : f32
    memref.store %mean, %stat[%i, %u] : memref<8x1xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  %out = memref.alloc() : memref<8x64xf32>
  "scf.parallel"(%c0, %c0, %c8, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<8x64xf32>
    %m = memref.load %stat[%i, %c0] : memref<8x1xf32>
    %d = arith.subf %v, %m : f32
    memref.store %d, %out[%i, %j] : memref<8x64xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  "memref.copy"(%out, %y) : (memref<8x64xf32>, memref<8x64xf32>) -> ()
  func.return
}

// -----

// Statistics that something after the fused loop still reads keep their buffer and
// store; the consumer inside still reads the value itself.

// CHECK-LABEL: func.func @statistics_read_later
// CHECK:         %[[SUM:.+]] = memref.alloc() : memref<8x1xf32>
// CHECK:         "scf.parallel"
// CHECK:           %[[S:.+]] = scf.for
// CHECK:           memref.store %[[S]], %[[SUM]]
// CHECK:           scf.for
// CHECK-NOT:         memref.load %[[SUM]]
// CHECK:             arith.mulf %{{.+}}, %[[S]] : f32
// CHECK:         "memref.copy"(%[[SUM]], %r)
func.func @statistics_read_later(%x: memref<8x64xf32>, %y: memref<8x64xf32>, %r: memref<8x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<8x1xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<8x64xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %sum[%i, %c0] : memref<8x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %out = memref.alloc() : memref<8x64xf32>
  "scf.parallel"(%c0, %c0, %c8, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<8x64xf32>
    %m = memref.load %sum[%i, %c0] : memref<8x1xf32>
    %d = arith.mulf %v, %m : f32
    memref.store %d, %out[%i, %j] : memref<8x64xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  "memref.copy"(%sum, %r) : (memref<8x1xf32>, memref<8x1xf32>) -> ()
  "memref.copy"(%out, %y) : (memref<8x64xf32>, memref<8x64xf32>) -> ()
  func.return
}

// -----

// Not fused: the consumer reads the sums along its column dim (a softmax along the
// leading axis of a square matrix, say), which no row computed for itself.

// CHECK-LABEL: func.func @read_along_the_columns
// CHECK-COUNT-2: "scf.parallel"
func.func @read_along_the_columns(%x: memref<8x8xf32>, %y: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<1x8xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%k, %j] : memref<8x8xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %sum[%c0, %j] : memref<1x8xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c8, %c8, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<8x8xf32>
    %m = memref.load %sum[%c0, %j] : memref<1x8xf32>
    %d = arith.divf %v, %m : f32
    memref.store %d, %y[%i, %j] : memref<8x8xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %sum : memref<1x8xf32>
  func.return
}

// -----

// In place: the consumer writes over the input the reductions read, each element where
// it reads it, and each row's reduction reads only its own row, so no row sees another
// row's results (softmax bufferized over its input looks like this).

// CHECK-LABEL: func.func @in_place_over_the_rows
// CHECK-COUNT-1: "scf.parallel"
// CHECK:           %[[S:.+]] = scf.for
// CHECK:           scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%{{.+}}, %[[J]]] : memref<8x64xf32>
// CHECK-NEXT:        %[[D:.+]] = arith.subf %[[V]], %[[S]] : f32
// CHECK-NEXT:        memref.store %[[D]], %x[%{{.+}}, %[[J]]] : memref<8x64xf32>
// CHECK-NOT:     "scf.parallel"
func.func @in_place_over_the_rows(%x: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<8x1xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<8x64xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %sum[%i, %c0] : memref<8x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c8, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<8x64xf32>
    %m = memref.load %sum[%i, %c0] : memref<8x1xf32>
    %d = arith.subf %v, %m : f32
    memref.store %d, %x[%i, %j] : memref<8x64xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %sum : memref<8x1xf32>
  func.return
}

// -----

// Not fused: the consumer writes over a buffer that every row's reduction reads beyond
// its own row (each sum also adds row 0's element), so a row finishing early would
// change what later rows read.

// CHECK-LABEL: func.func @writes_what_other_rows_read
// CHECK-COUNT-2: "scf.parallel"
func.func @writes_what_other_rows_read(%x: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<8x1xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<8x64xf32>
      %w = memref.load %x[%c0, %k] : memref<8x64xf32>
      %p = arith.mulf %v, %w : f32
      %t = arith.addf %acc, %p : f32
      scf.yield %t : f32
    }
    memref.store %s, %sum[%i, %c0] : memref<8x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c8, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<8x64xf32>
    %m = memref.load %sum[%i, %c0] : memref<8x1xf32>
    %d = arith.subf %v, %m : f32
    memref.store %d, %x[%i, %j] : memref<8x64xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %sum : memref<8x1xf32>
  func.return
}

// -----

// Not fused: the in-place consumer reads its row at another column than the one it
// writes, which another lane may already have overwritten.

// CHECK-LABEL: func.func @reads_beside_what_it_writes
// CHECK-COUNT-2: "scf.parallel"
func.func @reads_beside_what_it_writes(%x: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<8x1xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i, %k] : memref<8x64xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %sum[%i, %c0] : memref<8x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c8, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %r = arith.subi %c63, %j : index
    %v = memref.load %x[%i, %r] : memref<8x64xf32>
    %m = memref.load %sum[%i, %c0] : memref<8x1xf32>
    %d = arith.subf %v, %m : f32
    memref.store %d, %x[%i, %j] : memref<8x64xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %sum : memref<8x1xf32>
  func.return
}

// -----

// An f64 reduction, which a warp shares too (its shuffles move two 32-bit halves):
// the consumer joins the row as a loop over its columns, reading the total itself, and
// the statistics' buffer goes.

// CHECK-LABEL: func.func @f64_rows
// CHECK:         "scf.parallel"
// CHECK:           %[[S:.+]] = scf.for
// CHECK:           scf.for %[[J:.+]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%i, %[[J]]] : memref<8x64xf64>
// CHECK-NEXT:        %[[D:.+]] = arith.subf %[[V]], %[[S]] : f64
// CHECK-NEXT:        memref.store %[[D]], %y[%i, %[[J]]] : memref<8x64xf64>
// CHECK-NOT:     "scf.parallel"
// CHECK-NOT:     memref.alloc
func.func @f64_rows(%x: memref<8x64xf64>, %y: memref<8x64xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f64
  %sum = memref.alloc() : memref<8x1xf64>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f64) {
      %v = memref.load %x[%i, %k] : memref<8x64xf64>
      %t = arith.addf %acc, %v : f64
      scf.yield %t : f64
    }
    memref.store %s, %sum[%i, %c0] : memref<8x1xf64>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c8, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<8x64xf64>
    %m = memref.load %sum[%i, %c0] : memref<8x1xf64>
    %d = arith.subf %v, %m : f64
    memref.store %d, %y[%i, %j] : memref<8x64xf64>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %sum : memref<8x1xf64>
  func.return
}

// -----

// A narrow row body (a classifier head: three columns a row, each stored at a constant
// column) and a softmax over those columns: the statistics loop's short column loop and
// the normalisation's column dim are unrolled as they join, every load of the head's
// output reads the accumulator stored there, the head's own stores go (the softmax
// overwrites them, nothing reads them between) and so does the statistics buffer. The
// dealloc between the loops stays where it is.

// CHECK-LABEL: func.func @narrow_head_softmax
// CHECK:         "scf.parallel"
// CHECK:           %[[A0:[^ ]+]], %[[A1:[^ ]+]], %[[A2:[^ ]+]] = scf.for
// CHECK-NOT:       scf.for
// CHECK-NOT:       memref.load %h
// CHECK:           %[[M0:.+]] = arith.maximumf %{{.+}}, %[[A0]] : f32
// CHECK:           %[[M1:.+]] = arith.maximumf %[[M0]], %[[A1]] : f32
// CHECK:           %[[M2:.+]] = arith.maximumf %[[M1]], %[[A2]] : f32
// CHECK-NOT:       memref.store %{{.+}}, %stats
// CHECK:           %[[D0:.+]] = arith.subf %[[A0]], %[[M2]] : f32
// CHECK-NEXT:      %[[E0:.+]] = math.exp %[[D0]] : f32
// CHECK-NEXT:      memref.store %[[E0]], %h[%{{.+}}, %{{.+}}] : memref<?x3xf32>
// CHECK-COUNT-2:   memref.store %{{.+}}, %h
// CHECK-NOT:       memref.store
// CHECK:           scf.reduce
// CHECK-NOT:     "scf.parallel"
// CHECK:         memref.dealloc %x
// CHECK-NOT:     memref.alloc
func.func @narrow_head_softmax(%x: memref<?x8xf32>, %w: memref<8x3xf32>, %h: memref<?x3xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s:3 = scf.for %k = %c0 to %c8 step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero) -> (f32, f32, f32) {
      %v = memref.load %x[%i, %k] : memref<?x8xf32>
      %w0 = memref.load %w[%k, %c0] : memref<8x3xf32>
      %w1 = memref.load %w[%k, %c1] : memref<8x3xf32>
      %w2 = memref.load %w[%k, %c2] : memref<8x3xf32>
      %p0 = arith.mulf %v, %w0 : f32
      %p1 = arith.mulf %v, %w1 : f32
      %p2 = arith.mulf %v, %w2 : f32
      %t0 = arith.addf %a0, %p0 : f32
      %t1 = arith.addf %a1, %p1 : f32
      %t2 = arith.addf %a2, %p2 : f32
      scf.yield %t0, %t1, %t2 : f32, f32, f32
    }
    memref.store %s#0, %h[%i, %c0] : memref<?x3xf32>
    memref.store %s#1, %h[%i, %c1] : memref<?x3xf32>
    memref.store %s#2, %h[%i, %c2] : memref<?x3xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  memref.dealloc %x : memref<?x8xf32>
  %stats = memref.alloc(%n) : memref<?x1xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %m = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc = %lowest) -> (f32) {
      %v = memref.load %h[%i, %j] : memref<?x3xf32>
      %b = arith.maximumf %acc, %v : f32
      scf.yield %b : f32
    }
    memref.store %m, %stats[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %n, %c3, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %h[%i, %j] : memref<?x3xf32>
    %m = memref.load %stats[%i, %c0] : memref<?x1xf32>
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    memref.store %e, %h[%i, %j] : memref<?x3xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %stats : memref<?x1xf32>
  func.return
}

// -----

// Not unrolled, not joined: a column loop that reads a column the row did not store
// (the head stored two of three), and one of 17 columns (more than a narrow row).

// CHECK-LABEL: func.func @columns_not_stored
// CHECK:         "scf.parallel"
// CHECK:         "scf.parallel"
// CHECK:           scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:             memref.load %h
// CHECK:         "scf.parallel"
// CHECK:           scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK:             memref.load %g
func.func @columns_not_stored(%x: memref<?x8xf32>, %h: memref<?x3xf32>, %g: memref<?x17xf32>, %r: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c17 = arith.constant 17 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s:2 = scf.for %k = %c0 to %c8 step %c1 iter_args(%a0 = %zero, %a1 = %zero) -> (f32, f32) {
      %v = memref.load %x[%i, %k] : memref<?x8xf32>
      %t0 = arith.addf %a0, %v : f32
      %t1 = arith.maximumf %a1, %v : f32
      scf.yield %t0, %t1 : f32, f32
    }
    memref.store %s#0, %h[%i, %c0] : memref<?x3xf32>
    memref.store %s#1, %h[%i, %c1] : memref<?x3xf32>
    memref.store %s#0, %g[%i, %c0] : memref<?x17xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %m = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %h[%i, %j] : memref<?x3xf32>
      %b = arith.addf %acc, %v : f32
      scf.yield %b : f32
    }
    memref.store %m, %r[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %m = scf.for %j = %c0 to %c17 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %g[%i, %j] : memref<?x17xf32>
      %b = arith.addf %acc, %v : f32
      scf.yield %b : f32
    }
    memref.store %m, %r[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// The MLP's head as the GPU lowers it: a bias, then an online softmax. Unrolled, the
// online (max, sum) pair of the statistics loop becomes the two-pass form, trees both
// (no chain of rescaling steps); the normalisation's loads of the bias reuse the
// statistics' (the bias is never written), so each `exp(h + b - max)` is one value for
// the sum and the output after cse.

// TWO-PASS-LABEL: func.func @head_online_softmax
// TWO-PASS:         %[[H:[^ ]+]], %[[H1:[^ ]+]], %[[H2:[^ ]+]] = scf.for
// TWO-PASS:         %[[B0:.+]] = memref.load %b[%{{.+}}] : memref<3xf32>
// TWO-PASS-NEXT:    %[[X0:.+]] = arith.addf %[[H]], %[[B0]] : f32
// TWO-PASS:         %[[X1:.+]] = arith.addf %[[H1]], %{{.+}} : f32
// TWO-PASS:         %[[X2:.+]] = arith.addf %[[H2]], %{{.+}} : f32
// TWO-PASS-NEXT:    %[[M01:.+]] = arith.maximumf %[[X0]], %[[X1]] : f32
// TWO-PASS-NEXT:    %[[M:.+]] = arith.maximumf %[[M01]], %[[X2]] : f32
// TWO-PASS-NEXT:    %[[D0:.+]] = arith.subf %[[X0]], %[[M]] : f32
// TWO-PASS-NEXT:    %[[E0:.+]] = math.exp %[[D0]] : f32
// TWO-PASS-NEXT:    %[[D1:.+]] = arith.subf %[[X1]], %[[M]] : f32
// TWO-PASS-NEXT:    %[[E1:.+]] = math.exp %[[D1]] : f32
// TWO-PASS-NEXT:    %[[D2:.+]] = arith.subf %[[X2]], %[[M]] : f32
// TWO-PASS-NEXT:    %[[E2:.+]] = math.exp %[[D2]] : f32
// TWO-PASS-NEXT:    %[[S01:.+]] = arith.addf %[[E0]], %[[E1]] : f32
// TWO-PASS-NEXT:    %[[S:.+]] = arith.addf %[[S01]], %[[E2]] : f32
// TWO-PASS-NEXT:    %[[Y0:.+]] = arith.divf %[[E0]], %[[S]] : f32
// TWO-PASS-NEXT:    memref.store %[[Y0]], %h[%{{.+}}, %{{.+}}] : memref<?x3xf32>
// TWO-PASS-NEXT:    arith.divf %[[E1]], %[[S]] : f32
// TWO-PASS-NEXT:    memref.store
// TWO-PASS-NEXT:    arith.divf %[[E2]], %[[S]] : f32
// TWO-PASS-NEXT:    memref.store
// TWO-PASS-NEXT:    scf.reduce
func.func @head_online_softmax(%x: memref<?x8xf32>, %w: memref<8x3xf32>, %b: memref<3xf32>, %h: memref<?x3xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s:3 = scf.for %k = %c0 to %c8 step %c1 iter_args(%a0 = %zero, %a1 = %zero, %a2 = %zero) -> (f32, f32, f32) {
      %v = memref.load %x[%i, %k] : memref<?x8xf32>
      %w0 = memref.load %w[%k, %c0] : memref<8x3xf32>
      %w1 = memref.load %w[%k, %c1] : memref<8x3xf32>
      %w2 = memref.load %w[%k, %c2] : memref<8x3xf32>
      %p0 = arith.mulf %v, %w0 : f32
      %p1 = arith.mulf %v, %w1 : f32
      %p2 = arith.mulf %v, %w2 : f32
      %t0 = arith.addf %a0, %p0 : f32
      %t1 = arith.addf %a1, %p1 : f32
      %t2 = arith.addf %a2, %p2 : f32
      scf.yield %t0, %t1, %t2 : f32, f32, f32
    }
    memref.store %s#0, %h[%i, %c0] : memref<?x3xf32>
    memref.store %s#1, %h[%i, %c1] : memref<?x3xf32>
    memref.store %s#2, %h[%i, %c2] : memref<?x3xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  %max = memref.alloc(%n) : memref<?x1xf32>
  %sum = memref.alloc(%n) : memref<?x1xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %lowest = arith.constant 0xff800000 : f32
    %none = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %m, %z = scf.for %j = %c0 to %c3 step %c1 iter_args(%am = %lowest, %as = %none) -> (f32, f32) {
      %v = memref.load %h[%i, %j] : memref<?x3xf32>
      %bj = memref.load %b[%j] : memref<3xf32>
      %e = arith.addf %v, %bj : f32
      %nm = arith.maximumf %am, %e : f32
      %lo = arith.minimumf %am, %e : f32
      %gap = arith.subf %lo, %nm : f32
      %ord = arith.cmpf ord, %gap, %gap : f32
      %ex = math.exp %gap : f32
      %scale = arith.select %ord, %ex, %none : f32
      %d = arith.subf %e, %nm : f32
      %own = arith.addf %d, %one : f32
      %prod = arith.mulf %as, %scale : f32
      %grown = arith.addf %prod, %own : f32
      %kept = arith.addf %as, %scale : f32
      %gt = arith.cmpf ogt, %e, %am : f32
      %ns = arith.select %gt, %grown, %kept : f32
      scf.yield %nm, %ns : f32, f32
    }
    memref.store %m, %max[%i, %c0] : memref<?x1xf32>
    memref.store %z, %sum[%i, %c0] : memref<?x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %n, %c3, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %h[%i, %j] : memref<?x3xf32>
    %bj = memref.load %b[%j] : memref<3xf32>
    %m = memref.load %max[%i, %c0] : memref<?x1xf32>
    %z = memref.load %sum[%i, %c0] : memref<?x1xf32>
    %e = arith.addf %v, %bj : f32
    %d = arith.subf %e, %m : f32
    %ex = math.exp %d : f32
    %y = arith.divf %ex, %z : f32
    memref.store %y, %h[%i, %j] : memref<?x3xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %sum : memref<?x1xf32>
  memref.dealloc %max : memref<?x1xf32>
  func.return
}

// RUN: mlc-opt %s --split-input-file -p promote-accumulators | filecheck %s
// RUN: mlc-opt %s --split-input-file -p promote-accumulators,promote-accumulators | filecheck %s
// RUN: mlc-opt %s --split-input-file -p promote-accumulators --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// The second RUN checks idempotence; LOC checks that the load before the loop and the
// store after it keep the locations of the load and the store they were, and the new
// loop the old loop's.

// A row sum as convert-linalg-to-loops writes it: the accumulator element is loaded and
// stored on every iteration. It becomes a value carried by the inner loop, loaded once
// before it and stored once after; the outer loop's element depends on %i and stays.

// CHECK-LABEL: func.func @row_sums
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<4x8xf32>)
// CHECK:         %[[S:.+]] = memref.alloc() : memref<4x1xf32>
// CHECK:         scf.for %[[I:.+]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[INIT:.+]] = memref.load %[[S]][%[[I]], %[[C0:.+]]] : memref<4x1xf32>
// CHECK-NEXT:      %[[R:.+]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[V:.+]] = memref.load %[[X]]
// CHECK-NEXT:        %[[SUM:.+]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:        scf.yield %[[SUM]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[R]], %[[S]][%[[I]], %[[C0]]] : memref<4x1xf32>
// CHECK-NEXT:    }

// LOC-LABEL: func.func @row_sums
// LOC:         memref.load {{.*}} loc("acc.mlir":1:1)
// LOC-NEXT:    scf.for {{.*}} iter_args
// LOC:         } loc("inner.mlir":3:4)
// LOC-NEXT:    memref.store {{.*}} loc("acc.mlir":2:2)
func.func @row_sums(%x: memref<4x8xf32>) -> memref<4x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %s = memref.alloc() : memref<4x1xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %acc = memref.load %s[%i, %c0] : memref<4x1xf32> loc("acc.mlir":1:1)
      %v = memref.load %x[%i, %j] : memref<4x8xf32>
      %sum = arith.addf %acc, %v : f32
      memref.store %sum, %s[%i, %c0] : memref<4x1xf32> loc("acc.mlir":2:2)
    } loc("inner.mlir":3:4)
  }
  func.return %s : memref<4x1xf32>
}

// -----

// Through a view of an allocation (a block of rows, as in a parallel chunk), with two
// accumulators in two buffers and a value the loop carried already: all three are
// carried now. Elements invariant in both loops climb out of both.

// CHECK-LABEL: func.func @two_accumulators
// CHECK:         %[[T:.+]] = memref.alloc() : memref<1xf32>
// CHECK:         %[[V:.+]] = memref.subview
// CHECK-NEXT:    %[[A0:.+]] = memref.load %[[V]][%[[C0:[a-z0-9]+]], %[[C1:[a-z0-9]+]]]
// CHECK-NEXT:    %[[B0:.+]] = memref.load %[[T]][%[[C0]]]
// CHECK-NEXT:    %[[R:[a-z0-9_]+]], %[[A:[a-z0-9_]+]], %[[B:[a-z0-9_]+]] = scf.for %{{.*}} = {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[A0]], %{{.*}} = %[[B0]]) -> (f32, f32, f32)
// CHECK-NEXT:      scf.for %{{.*}} = {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, f32)
// CHECK-NOT:         memref.store
// CHECK:           }
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[A]], %[[V]][%[[C0]], %[[C1]]]
// CHECK-NEXT:    memref.store %[[B]], %[[T]][%[[C0]]]
// CHECK-NEXT:    func.return %[[R]]
func.func @two_accumulators(%x: memref<4x8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8x2xf32>
  %t = memref.alloc() : memref<1xf32>
  %v = memref.subview %s[2, 0] [2, 2] [1, 1] : memref<8x2xf32> to memref<2x2xf32, strided<[2, 1], offset: 4>>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%m = %zero) -> (f32) {
    %r2 = scf.for %j = %c0 to %c8 step %c1 iter_args(%n = %m) -> (f32) {
      %a = memref.load %v[%c0, %c1] : memref<2x2xf32, strided<[2, 1], offset: 4>>
      %b = memref.load %t[%c0] : memref<1xf32>
      %e = memref.load %x[%i, %j] : memref<4x8xf32>
      %a2 = arith.addf %a, %e : f32
      %b2 = arith.mulf %e, %e : f32
      %b3 = arith.addf %b, %b2 : f32
      %n2 = arith.maximumf %n, %e : f32
      memref.store %a2, %v[%c0, %c1] : memref<2x2xf32, strided<[2, 1], offset: 4>>
      memref.store %b3, %t[%c0] : memref<1xf32>
      scf.yield %n2 : f32
    }
    scf.yield %r2 : f32
  }
  func.return %r : f32
}

// -----

// Left alone: the accumulator lies in a function argument (the caller's buffer may be
// %x too); the element depends on the loop; another element of the same buffer is read,
// or written by a vector store; a call may touch any memory; a loop-carried buffer may
// be the accumulator's.

// CHECK-LABEL: func.func @in_an_argument
// CHECK:         scf.for
// CHECK-NEXT:      memref.load %{{.*}}[%{{.*}}]
// CHECK:           memref.store
func.func @in_an_argument(%x: memref<8xf32>, %s: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %j = %c0 to %c8 step %c1 {
    %acc = memref.load %s[%c0] : memref<1xf32>
    %v = memref.load %x[%j] : memref<8xf32>
    %sum = arith.addf %acc, %v : f32
    memref.store %sum, %s[%c0] : memref<1xf32>
  }
  func.return
}

// CHECK-LABEL: func.func @element_varies
// CHECK:         scf.for
// CHECK-NEXT:      memref.load
// CHECK:           memref.store
func.func @element_varies(%x: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.alloc() : memref<8xf32>
  scf.for %j = %c0 to %c8 step %c1 {
    %acc = memref.load %s[%j] : memref<8xf32>
    %v = memref.load %x[%j] : memref<8xf32>
    %sum = arith.addf %acc, %v : f32
    memref.store %sum, %s[%j] : memref<8xf32>
  }
  func.return %s : memref<8xf32>
}

// CHECK-LABEL: func.func @other_element_read
// CHECK:         scf.for
// CHECK-NEXT:      memref.load
// CHECK:           memref.store
func.func @other_element_read(%x: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.alloc() : memref<8xf32>
  scf.for %j = %c0 to %c8 step %c1 {
    %acc = memref.load %s[%c0] : memref<8xf32>
    %w = memref.load %s[%j] : memref<8xf32>
    %sum = arith.addf %acc, %w : f32
    memref.store %sum, %s[%c0] : memref<8xf32>
  }
  func.return %s : memref<8xf32>
}

// CHECK-LABEL: func.func @vector_store_to_the_buffer
// CHECK:         scf.for
// CHECK-NEXT:      memref.load
// CHECK:           vector.store
func.func @vector_store_to_the_buffer(%x: memref<8xf32>) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.alloc() : memref<16xf32>
  %z = arith.constant dense<0.0> : vector<8xf32>
  scf.for %j = %c0 to %c8 step %c1 {
    %acc = memref.load %s[%c0] : memref<16xf32>
    %v = memref.load %x[%j] : memref<8xf32>
    %sum = arith.addf %acc, %v : f32
    memref.store %sum, %s[%c0] : memref<16xf32>
    vector.store %z, %s[%c8] : memref<16xf32>, vector<8xf32>
  }
  func.return %s : memref<16xf32>
}

func.func private @touch(memref<1xf32>) -> ()

// CHECK-LABEL: func.func @with_a_call
// CHECK:         scf.for
// CHECK-NEXT:      memref.load
// CHECK:           memref.store
func.func @with_a_call(%x: memref<8xf32>) -> memref<1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.alloc() : memref<1xf32>
  scf.for %j = %c0 to %c8 step %c1 {
    %acc = memref.load %s[%c0] : memref<1xf32>
    %v = memref.load %x[%j] : memref<8xf32>
    %sum = arith.addf %acc, %v : f32
    memref.store %sum, %s[%c0] : memref<1xf32>
    func.call @touch(%s) : (memref<1xf32>) -> ()
  }
  func.return %s : memref<1xf32>
}

// CHECK-LABEL: func.func @loop_carried_buffer
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        memref.load
// CHECK:             memref.store
func.func @loop_carried_buffer(%x: memref<1xf32>) -> memref<1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %s = memref.alloc() : memref<1xf32>
  %last = scf.for %i = %c0 to %c8 step %c1 iter_args(%b = %s) -> (memref<1xf32>) {
    scf.for %j = %c0 to %c8 step %c1 {
      %acc = memref.load %s[%c0] : memref<1xf32>
      %v = memref.load %b[%c0] : memref<1xf32>
      %sum = arith.addf %acc, %v : f32
      memref.store %sum, %s[%c0] : memref<1xf32>
    }
    scf.yield %b : memref<1xf32>
  }
  func.return %last : memref<1xf32>
}

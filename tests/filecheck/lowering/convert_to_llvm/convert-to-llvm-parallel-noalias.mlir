// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-to-llvm | mlc-translate --mlir-to-llvmir \
// RUN:   | filecheck %s --check-prefix=IR

// An outlined parallel loop receives its buffers as pointers. A buffer allocated by the
// calling function, which no other captured memref reaches, is marked noalias (on its
// aligned pointer, the one the body reads), so that LLVM knows a store to it leaves the
// other buffers alone (an elementwise loop reading a bias then vectorises). The
// function's arguments and globals are distinct from that allocation, but not marked.

// CHECK-LABEL: llvm.func internal @bias_parallel0
// CHECK-SAME:    (%{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: i64, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr, %{{[^:]+}}: !llvm.ptr {llvm.noalias})
// IR-LABEL:    define internal void @"bias_parallel0"(i64 %{{.+}}, i64 %{{.+}}, i64 %{{.+}}, i64 %{{.+}}, ptr %{{[^,]+}}, ptr %{{[^,]+}}, ptr noalias %{{[^,]+}})
func.func @bias(%x: memref<?x8xf32>, %b: memref<8xf32>) -> memref<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?x8xf32>
  %y = memref.alloc(%n) : memref<?x8xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x8xf32>
      %w = memref.load %b[%j] : memref<8xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %y[%i, %j] : memref<?x8xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return %y : memref<?x8xf32>
}

// -----

// Two views of one allocation (a concatenation's halves) may overlap as far as this
// knows: neither is marked.

// CHECK-LABEL: llvm.func internal @halves_parallel0
// CHECK-NOT:     llvm.noalias
// CHECK:       llvm.func internal @halves_parallel0_chunk
// IR-LABEL:    define internal void @"halves_parallel0"
// IR-NOT:      noalias
// IR:          define internal void @"halves_parallel0_chunk"
func.func @halves(%n: index) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %y = memref.alloc() : memref<16xf32>
  %lo = memref.subview %y[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %hi = memref.subview %y[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %lo[%i] : memref<8xf32, strided<[1]>>
    memref.store %v, %hi[%i] : memref<8xf32, strided<[1], offset: 8>>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return %y : memref<16xf32>
}

// -----

// A buffer chosen at run time (an scf.if's result) may be the allocation: nothing is
// marked.

// CHECK-LABEL: llvm.func internal @chosen_parallel0
// CHECK-NOT:     llvm.noalias
// CHECK:       llvm.func internal @chosen_parallel0_chunk
// IR-LABEL:    define internal void @"chosen_parallel0"
// IR-NOT:      noalias
// IR:          define internal void @"chosen_parallel0_chunk"
func.func @chosen(%x: memref<8xf32>, %c: i1) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %y = memref.alloc() : memref<8xf32>
  %src = scf.if %c -> (memref<8xf32>) {
    scf.yield %y : memref<8xf32>
  } else {
    scf.yield %x : memref<8xf32>
  }
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %src[%i] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return %y : memref<8xf32>
}

// -----

// A buffer read and written in place is one argument, marked: no other pointer
// reaches it.

// CHECK-LABEL: llvm.func internal @in_place_parallel0
// CHECK-SAME:    !llvm.ptr {llvm.noalias})
func.func @in_place() -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %y = memref.alloc() : memref<8xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<8xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return %y : memref<8xf32>
}

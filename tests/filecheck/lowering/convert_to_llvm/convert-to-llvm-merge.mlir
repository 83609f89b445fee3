// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// Two parallel loops that differ only in the buffers they read and write are one
// kernel: a single outlined function (and chunk) serves both call sites, each of
// which keeps its own location and its own counter of measured work (the two loops
// may run over different sizes).

// CHECK-LABEL: llvm.func @twice
// CHECK:         %[[C1:.+]] = llvm.mlir.addressof @twice_parallel1_chunk : !llvm.ptr
// CHECK-NEXT:    %[[W1:.+]] = llvm.mlir.addressof @twice_parallel1_work0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @mlc_parallel_for(%[[C1]], {{.*}}, %[[W1]])
// CHECK:         llvm.call @twice_parallel1_chunk(
// CHECK:         %[[C2:.+]] = llvm.mlir.addressof @twice_parallel1_chunk : !llvm.ptr
// CHECK-NEXT:    %[[W2:.+]] = llvm.mlir.addressof @twice_parallel1_work1 : !llvm.ptr
// CHECK-NEXT:    llvm.call @mlc_parallel_for(%[[C2]], {{.*}}, %[[W2]])
// CHECK:         llvm.call @twice_parallel1_chunk(
// CHECK-NOT:     twice_parallel0
// CHECK-LABEL: llvm.func internal @twice_parallel1(
// CHECK-LABEL: llvm.func internal @twice_parallel1_chunk(
// CHECK-DAG:   llvm.mlir.global internal @twice_parallel1_work0(0 : i64)
// CHECK-DAG:   llvm.mlir.global internal @twice_parallel1_work1(0 : i64)
// CHECK-NOT:     twice_parallel0

// LOC-LABEL:   llvm.func @twice
// LOC:           llvm.call @mlc_parallel_for({{.*}} loc("merge.py":3:1)
// LOC:           llvm.call @mlc_parallel_for({{.*}} loc("merge.py":4:1)
func.func @twice(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> () loc("merge.py":3:1)
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %b[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %c[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> () loc("merge.py":4:1)
  func.return
}

// -----

// Loops whose bodies differ in a constant, or in a buffer's type, stay apart.

// CHECK-LABEL: llvm.func @different
// CHECK-DAG:     llvm.mlir.addressof @different_parallel0_chunk
// CHECK-DAG:     llvm.mlir.addressof @different_parallel1_chunk
// CHECK-DAG:     llvm.mlir.addressof @different_parallel2_chunk
// CHECK-DAG:   llvm.func internal @different_parallel0(
// CHECK-DAG:   llvm.func internal @different_parallel1(
// CHECK-DAG:   llvm.func internal @different_parallel2(
func.func @different(%a: memref<?xf32>, %b: memref<?xf32>, %s: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %b[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c16, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %x = memref.load %s[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %s[%i] : memref<16xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

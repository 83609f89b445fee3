// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// The 1-D vector ops of linalg-tile's kernels: loads and stores of consecutive
// elements at an element's address (aligned as one element), a broadcast as
// insertelement + zero-mask shufflevector, fma, and an ordered float add-reduction.

// CHECK-LABEL: llvm.func @vector_ops
// CHECK-SAME:    %[[S:[a-zA-Z0-9_]+]]: f32) -> f32
// CHECK-NEXT:    %[[Z:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:         %[[P:.+]] = llvm.getelementptr inbounds {{.*}} -> !llvm.ptr, f32
// CHECK-NEXT:    %[[V:.+]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    %[[U:.+]] = llvm.mlir.undef : vector<8xf32>
// CHECK-NEXT:    %[[E:.+]] = llvm.insertelement %[[S]], %[[U]][%[[Z]] : i32] : vector<8xf32>
// CHECK-NEXT:    %[[B:.+]] = llvm.shufflevector %[[E]], %[[U]] [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xf32>
// CHECK-NEXT:    %[[F:.+]] = llvm.intr.fma(%[[B]], %[[V]], %[[V]])
// CHECK:         llvm.store %[[F]], %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// CHECK:         %[[R:.+]] = "llvm.intr.vector.reduce.fadd"(%[[S]], %[[F]])
// CHECK-NEXT:    llvm.return %[[R]] : f32

// LOC: llvm.intr.fma{{.*}} loc("kernel.py":2:9)
func.func @vector_ops(%m: memref<?x?xf32>, %i: index, %s: f32) -> f32 {
  %v = vector.load %m[%i, %i] : memref<?x?xf32>, vector<8xf32>
  %b = vector.broadcast %s : f32 to vector<8xf32>
  %f = vector.fma %b, %v, %v : vector<8xf32> loc("kernel.py":2:9)
  vector.store %f, %m[%i, %i] : memref<?x?xf32>, vector<8xf32>
  %r = vector.reduction <add>, %f, %s : vector<8xf32> into f32
  func.return %r : f32
}

// -----

// Vectors as loop-carried values become phis of vector type.

// CHECK-LABEL: llvm.func @carried
// CHECK:       ^{{.+}}(%{{.+}}: i64, %[[ACC:.+]]: vector<4xf64>):
func.func @carried(%n: index) -> vector<4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : vector<4xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (vector<4xf64>) {
    %d = arith.addf %acc, %acc : vector<4xf64>
    scf.yield %d : vector<4xf64>
  }
  func.return %r : vector<4xf64>
}

// -----

// The lanes below %n of a row (the matmul kernel's last column panel): the mask
// compares the lane numbers with a splat of %n, and the masked load and store are
// LLVM's intrinsics for the vector type, aligned as one element (one alignment
// constant for both); their addresses are plain GEPs, not `inbounds` (a masked row may
// start before its buffer).

// CHECK-LABEL: llvm.func @masked
// CHECK:         %[[ALIGN:.+]] = llvm.mlir.constant(4 : i32) : i32
// CHECK:         %[[FIRST:.+]] = llvm.insertelement %{{.+}}, %{{.+}}[%{{.+}} : i32] : vector<8xi64>
// CHECK:         %[[SPLAT:.+]] = llvm.shufflevector %[[FIRST]], %{{.+}} [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xi64>
// CHECK:         %[[LANES:.+]] = llvm.mlir.constant(dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi64>) : vector<8xi64>
// CHECK:         %[[MASK:.+]] = llvm.icmp "slt" %[[LANES]], %[[SPLAT]] : vector<8xi64>
// CHECK-NOT:     inbounds
// CHECK:         %[[P:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NOT:     inbounds
// CHECK:         %[[V:.+]] = llvm.call_intrinsic "llvm.masked.load.v8f32.p0"(%[[P]], %[[ALIGN]], %[[MASK]], %{{.+}}) : (!llvm.ptr, i32, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
// CHECK:         %[[S:.+]] = llvm.fadd %[[V]], %[[V]]
// CHECK:         llvm.call_intrinsic "llvm.masked.store.v8f32.p0"(%[[S]], %{{.+}}, %[[ALIGN]], %[[MASK]]) : (vector<8xf32>, !llvm.ptr, i32, vector<8xi1>) -> ()
// CHECK-NOT:     llvm.call_intrinsic

// LOC-LABEL: llvm.func @masked
// LOC: llvm.call_intrinsic "llvm.masked.store.v8f32.p0"{{.*}} loc("kernel.py":7:3)
func.func @masked(%m: memref<?x?xf32>, %i: index, %n: index) {
  %mask = vector.create_mask %n : vector<8xi1>
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %v = vector.maskedload %m[%i, %i], %mask, %zero : memref<?x?xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
  %s = arith.addf %v, %v : vector<8xf32>
  vector.maskedstore %m[%i, %i], %mask, %s : memref<?x?xf32>, vector<8xi1>, vector<8xf32> loc("kernel.py":7:3)
  func.return
}

// -----

// f64 lanes: the intrinsics' names follow the vector type.

// CHECK-LABEL: llvm.func @masked_f64
// CHECK:         llvm.icmp "slt" %{{.+}}, %{{.+}} : vector<4xi64>
// CHECK:         llvm.call_intrinsic "llvm.masked.store.v4f64.p0"
func.func @masked_f64(%m: memref<?xf64>, %n: index, %v: vector<4xf64>) {
  %c0 = arith.constant 0 : index
  %mask = vector.create_mask %n : vector<4xi1>
  vector.maskedstore %m[%c0], %mask, %v : memref<?xf64>, vector<4xi1>, vector<4xf64>
  func.return
}

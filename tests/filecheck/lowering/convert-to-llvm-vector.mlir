// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// The 1-D vector ops of linalg-tile's kernels: loads and stores of consecutive
// elements at an element's address (aligned as one element), a broadcast as
// insertelement + zero-mask shufflevector, fma, and an ordered float add-reduction.

// CHECK-LABEL: llvm.func @vector_ops
// CHECK-SAME:    %[[S:[a-zA-Z0-9_]+]]: f32) -> f32
// CHECK:         %[[P:.+]] = llvm.getelementptr inbounds {{.*}} -> !llvm.ptr, f32
// CHECK-NEXT:    %[[V:.+]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:    %[[U:.+]] = llvm.mlir.undef : vector<8xf32>
// CHECK-NEXT:    %[[Z:.+]] = llvm.mlir.constant(0 : i32) : i32
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

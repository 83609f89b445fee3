// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// A memref argument is passed as its descriptor's fields (MLIR's convention) and
// packed into the struct at the top of the entry block, after the function's
// constants (one per value and type: the index 0 used twice is one constant).

// CHECK-LABEL: llvm.func @expanded(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %k: f32) -> f32
// CHECK-NEXT:    %[[C0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[C4:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>
// CHECK-NEXT:    llvm.insertvalue %{{.*}}, %[[U]][0]
// LOC-LABEL:   llvm.func @expanded
// LOC:           llvm.mlir.undef {{.*}} loc("f.py":1:1)
func.func @expanded(%m: memref<?x4xf32>, %k: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %m[%c0, %c0] : memref<?x4xf32>
  func.return %x : f32
} loc("f.py":1:1)

// -----

// Several results come back as one struct; calls expand memref operands into fields
// and read results back out of the struct (unused ones are dropped). Private functions get internal linkage
// and no wrapper.

// CHECK-LABEL: llvm.func internal @pair(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %x: f32)
// CHECK-SAME:    -> !llvm.struct<(!llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>, f32)>
// CHECK:         %[[S:.*]] = llvm.mlir.undef : !llvm.struct<(!llvm.struct<
// CHECK-NEXT:    %[[S0:.*]] = llvm.insertvalue %{{.*}}, %[[S]][0]
// CHECK-NEXT:    %[[S1:.*]] = llvm.insertvalue %x, %[[S0]][1]
// CHECK-NEXT:    llvm.return %[[S1]]
// CHECK-NOT:   @_mlc_invoke_pair
// CHECK-LABEL: llvm.func @caller
// CHECK-COUNT-5: llvm.extractvalue %{{.*}}[{{[0-4]}}{{(, 0)?}}]
// CHECK-NEXT:    %[[C:.*]] = llvm.call @pair(
// CHECK-NEXT:    %[[X:.*]] = llvm.extractvalue %[[C]][1]
// CHECK-NEXT:    llvm.return %[[X]] : f32
func.func private @pair(%m: memref<?xf32>, %x: f32) -> (memref<?xf32>, f32) {
  func.return %m, %x : memref<?xf32>, f32
}
func.func @caller(%m: memref<?xf32>, %x: f32) -> f32 {
  %a, %b = func.call @pair(%m, %x) : (memref<?xf32>, f32) -> (memref<?xf32>, f32)
  func.return %b : f32
}

// -----

// The packed entry wrapper: argument i is read through packed[i], the result is
// written through packed[n_args + j].

// CHECK-LABEL: llvm.func @_mlc_invoke_scale
// CHECK-SAME:    (%[[P:[a-zA-Z0-9_]+]]: !llvm.ptr)
// CHECK-NEXT:    %[[A0:.*]] = llvm.getelementptr %[[P]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[D0:.*]] = llvm.load %[[A0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[M:.*]] = llvm.load %[[D0]] : !llvm.ptr -> !llvm.struct<(!llvm.ptr, !llvm.ptr, i64)>
// CHECK-NEXT:    %[[A1:.*]] = llvm.getelementptr %[[P]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[D1:.*]] = llvm.load %[[A1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    %[[K:.*]] = llvm.load %[[D1]] : !llvm.ptr -> f64
// CHECK-NEXT:    %[[F0:.*]] = llvm.extractvalue %[[M]][0]
// CHECK-NEXT:    %[[F1:.*]] = llvm.extractvalue %[[M]][1]
// CHECK-NEXT:    %[[F2:.*]] = llvm.extractvalue %[[M]][2]
// CHECK-NEXT:    %[[R:.*]] = llvm.call @scale(%[[F0]], %[[F1]], %[[F2]], %[[K]]) : (!llvm.ptr, !llvm.ptr, i64, f64) -> f64
// CHECK-NEXT:    %[[A2:.*]] = llvm.getelementptr %[[P]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT:    %[[D2:.*]] = llvm.load %[[A2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.store %[[R]], %[[D2]] : f64, !llvm.ptr
// CHECK-NEXT:    llvm.return
func.func @scale(%m: memref<f64>, %k: f64) -> f64 {
  %x = memref.load %m[] : memref<f64>
  %y = arith.mulf %x, %k : f64
  func.return %y : f64
}

// -----

// Declarations stay declarations (external, no wrapper).

// CHECK-LABEL: llvm.func @external(!llvm.ptr, !llvm.ptr, i64, i64, i64) -> f32
// CHECK-NOT:   _mlc_invoke_external
func.func private @external(%m: memref<?xf32>) -> f32

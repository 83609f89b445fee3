// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// A load from a static identity layout: strides are constants (at the top of the
// entry block), the offset is 0.

// CHECK-LABEL: llvm.func @load_static
// CHECK-NEXT:    %[[C:.*]] = llvm.mlir.constant(8) : i64
// CHECK:         %[[A:.*]] = llvm.mul %i, %[[C]] : i64
// CHECK-NEXT:    %[[L:.*]] = llvm.add %[[A]], %j : i64
// CHECK-NEXT:    %[[P:.*]] = llvm.extractvalue %{{.*}}[1]
// CHECK-NEXT:    %[[E:.*]] = llvm.getelementptr inbounds %[[P]][%[[L]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:    %{{.*}} = llvm.load %[[E]] : !llvm.ptr -> f32
// LOC-LABEL:   llvm.func @load_static
// LOC:           llvm.load {{.*}} loc("load.py":2:3)
func.func @load_static(%m: memref<4x8xf32>, %i: index, %j: index) -> f32 {
  %v = memref.load %m[%i, %j] : memref<4x8xf32> loc("load.py":2:3)
  func.return %v : f32
}

// -----

// A store into a dynamic strided layout reads offset and strides from the descriptor.

// CHECK-LABEL: llvm.func @store_dynamic
// CHECK-DAG:     %[[OFF:.*]] = llvm.extractvalue %[[M:.*]][2]
// CHECK-DAG:     %[[S0:.*]] = llvm.extractvalue %[[M]][4, 0]
// CHECK:         %[[A:.*]] = llvm.mul %i, %[[S0]] : i64
// CHECK-NEXT:    %[[B:.*]] = llvm.add %[[OFF]], %[[A]] : i64
// CHECK:         %[[E:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f64
// CHECK-NEXT:    llvm.store %v, %[[E]] : f64, !llvm.ptr
func.func @store_dynamic(%m: memref<?x?xf64, strided<[?, 1], offset: ?>>, %i: index, %j: index, %v: f64) {
  memref.store %v, %m[%i, %j] : memref<?x?xf64, strided<[?, 1], offset: ?>>
  func.return
}

// -----

// alloc: malloc(count * 4 + 63), pointer rounded up to 64 bytes; dealloc frees field 0.
// The 63 of the size and of the mask is one constant.

// CHECK-DAG:   llvm.func @free(!llvm.ptr)
// CHECK-DAG:   llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @alloc_dealloc(%n: i64)
// CHECK:         %[[PAD63:.*]] = llvm.mlir.constant(63) : i64
// CHECK:         %[[SIZE:.*]] = llvm.add %{{.*}}, %[[PAD63]] : i64
// CHECK-NEXT:    %[[RAW:.*]] = llvm.call @malloc(%[[SIZE]]) : (i64) -> !llvm.ptr
// CHECK-NEXT:    %[[ADDR:.*]] = llvm.ptrtoint %[[RAW]] : !llvm.ptr to i64
// CHECK:         %[[PAD:.*]] = llvm.and %{{.*}}, %[[PAD63]] : i64
// CHECK-NEXT:    %[[ALIGNED:.*]] = llvm.getelementptr inbounds %[[RAW]][%[[PAD]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.insertvalue %[[RAW]], %{{.*}}[0]
// CHECK-NEXT:    llvm.insertvalue %[[ALIGNED]], %{{.*}}[1]
// CHECK:         %[[FREED:.*]] = llvm.extractvalue %{{.*}}[0]
// CHECK-NEXT:    llvm.call @free(%[[FREED]]) : (!llvm.ptr) -> ()
func.func @alloc_dealloc(%n: index) {
  %m = memref.alloc(%n) : memref<?x16xf32>
  memref.dealloc %m : memref<?x16xf32>
  func.return
}

// -----

// dim of a static size is a constant; of a dynamic one, the descriptor's size field.

// CHECK-LABEL: llvm.func @dims
// CHECK:         %[[S:.*]] = llvm.mlir.constant(5) : i64
// CHECK:         %[[D:.*]] = llvm.extractvalue %{{.*}}[3, 0]
// CHECK:         llvm.add %[[D]], %[[S]] : i64
func.func @dims(%m: memref<?x5xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.dim %m, %c0 : memref<?x5xf32>
  %b = memref.dim %m, %c1 : memref<?x5xf32>
  %s = arith.addi %a, %b : index
  func.return %s : index
}

// -----

// A subview with dynamic offsets: offset = source offset + sum(offset_i * stride_i),
// the same pointers, the given sizes, strides from the result type.

// CHECK-LABEL: llvm.func @subview
// CHECK:         %[[A:.*]] = llvm.mul %i, %{{.*}} : i64
// CHECK-NEXT:    %[[OFF:.*]] = llvm.add %[[A]], %j : i64
// CHECK:         %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>
// CHECK:         llvm.insertvalue %[[OFF]], %{{.*}}[2]
func.func @subview(%m: memref<8x16xf32>, %i: index, %j: index) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.subview %m[%i, %j] [2, 4] [1, 1] : memref<8x16xf32> to memref<2x4xf32, strided<[16, 1], offset: ?>>
  %x = memref.load %v[%c0, %c0] : memref<2x4xf32, strided<[16, 1], offset: ?>>
  func.return %x : f32
}

// -----

// A rank-reducing subview drops the unit dim; static offset and strides are constants.

// CHECK-LABEL: llvm.func @subview_rank_reducing
// CHECK:         %[[OFF:.*]] = llvm.mlir.constant(32) : i64
// CHECK:         llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK:         llvm.insertvalue %[[OFF]], %{{.*}}[2]
func.func @subview_rank_reducing(%m: memref<8x16xf32>) -> memref<16xf32, strided<[1], offset: 32>> {
  %v = memref.subview %m[2, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: 32>>
  func.return %v : memref<16xf32, strided<[1], offset: 32>>
}

// -----

// collapse_shape / expand_shape keep the pointers and recompute sizes and strides.

// CHECK-LABEL: llvm.func @reshape
// CHECK:         %[[D0:.*]] = llvm.extractvalue %{{.*}}[3, 0]
// CHECK:         %[[N:.*]] = llvm.mul %[[D0]], %{{.*}} : i64
// CHECK:         llvm.insertvalue %[[N]], %{{.*}}[3, 0] : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>
// CHECK:         llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<3 x i64>, !llvm.array<3 x i64>)>
func.func @reshape(%m: memref<?x6xf32>, %n: index) -> memref<?x2x3xf32> {
  %flat = memref.collapse_shape %m [[0, 1]] : memref<?x6xf32> into memref<?xf32>
  %e = memref.expand_shape %flat [[0, 1, 2]] output_shape [%n, 2, 3] : memref<?xf32> into memref<?x2x3xf32>
  func.return %e : memref<?x2x3xf32>
}

// -----

// A constant global is a flat, aligned LLVM array holding the dense data.

// CHECK:       llvm.mlir.global internal constant @table(dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>) {{.*}}alignment = 64 : i64} : !llvm.array<4 x f32>
// CHECK-LABEL: llvm.func @global_read
// CHECK:         %[[G:.*]] = llvm.mlir.addressof @table : !llvm.ptr
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<2x2xf32>, initial_value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>, constant}> : () -> ()
func.func @global_read(%i: index) -> f32 {
  %g = memref.get_global @table : memref<2x2xf32>
  %x = memref.load %g[%i, %i] : memref<2x2xf32>
  func.return %x : f32
}

// -----

// A copy between identity layouts is one memcpy of the whole buffer.

// CHECK-LABEL: llvm.func @copy_contiguous
// CHECK:         llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"
"func.func"() <{sym_name = "copy_contiguous", function_type = (memref<?x4xf32>, memref<?x4xf32>) -> ()}> ({
^bb0(%a: memref<?x4xf32>, %b: memref<?x4xf32>):
  "memref.copy"(%a, %b) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
  func.return
}) : () -> ()

// -----

// A strided copy becomes a loop nest of loads and stores.

// CHECK-LABEL: llvm.func @copy_strided
// CHECK-NOT:     llvm.memcpy
// CHECK:         llvm.cond_br
// CHECK:         llvm.load
// CHECK:         llvm.store
"func.func"() <{sym_name = "copy_strided", function_type = (memref<4x4xf32, strided<[8, 1]>>, memref<4x4xf32>) -> ()}> ({
^bb0(%a: memref<4x4xf32, strided<[8, 1]>>, %b: memref<4x4xf32>):
  "memref.copy"(%a, %b) : (memref<4x4xf32, strided<[8, 1]>>, memref<4x4xf32>) -> ()
  func.return
}) : () -> ()

// -----

// scf.for carrying a memref: the loop-carried block argument becomes a descriptor struct.

// CHECK-LABEL: llvm.func @carried
// CHECK:       ^{{.*}}(%{{.*}}: i64, %{{.*}}: !llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<1 x i64>, !llvm.array<1 x i64>)>):
func.func @carried(%m: memref<4xf32>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %m) -> (memref<4xf32>) {
    scf.yield %acc : memref<4xf32>
  }
  func.return %r : memref<4xf32>
}

// -----

// An uninitialised public global (a `dense_resource` weight) is an external declaration:
// no data in the IR, the JIT binds the symbol.

// CHECK:       llvm.mlir.global external constant @__resource_w_00ff() {{.*}}: !llvm.array<6 x f32>
// CHECK-NOT:   dense
// CHECK-LABEL: llvm.func @resource_read
// CHECK:         llvm.mlir.addressof @__resource_w_00ff
"memref.global"() <{sym_name = "__resource_w_00ff", sym_visibility = "public", type = memref<2x3xf32>, initial_value, constant}> : () -> ()
func.func @resource_read(%i: index) -> f32 {
  %g = memref.get_global @__resource_w_00ff : memref<2x3xf32>
  %v = memref.load %g[%i, %i] : memref<2x3xf32>
  func.return %v : f32
}

// RUN: mlc-opt %s -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-to-llvm | mlc-translate --mlir-to-llvmir | filecheck %s --check-prefix=IR

// A prefetch as the CPU micro-kernel writes it at the loops level
// (`mlc.lowering.support.prefetch`): the buffer's aligned pointer plus a byte offset,
// as a pointer, to `llvm.prefetch`. `convert-to-llvm` lowers the pointer extraction and
// the index arithmetic and keeps the `llvm` ops; the flags reach LLVM IR as the inline
// constants its `immarg`s require, and a memref of f64 scales by 8.

// CHECK-LABEL: llvm.func @prefetch_f64(
// CHECK:         %[[ALIGNED:.+]] = llvm.extractvalue %{{.+}}[1]
// CHECK:         %[[BASE:.+]] = llvm.ptrtoint %[[ALIGNED]] : !llvm.ptr to i64
// CHECK:         %[[BYTES:.+]] = llvm.mul %{{.+}}, %{{.+}} : i64
// CHECK:         %[[AT:.+]] = llvm.add %[[BASE]], %[[BYTES]] : i64
// CHECK:         %[[P:.+]] = llvm.inttoptr %[[AT]] : i64 to !llvm.ptr
// CHECK:         llvm.call_intrinsic "llvm.prefetch.p0"(%[[P]], %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, i32, i32, i32) -> ()

// IR:          define void @"prefetch_f64"(
// IR:            mul i64 %{{.+}}, 8
// IR:            call void @"llvm.prefetch.p0"(ptr %{{.+}}, i32 1, i32 3, i32 1)
// IR:          declare void @"llvm.prefetch.p0"(ptr

func.func @prefetch_f64(%c: memref<?xf64>, %at: index) {
  %base = "memref.extract_aligned_pointer_as_index"(%c) : (memref<?xf64>) -> index
  %size = arith.constant 8 : index
  %bytes = arith.muli %at, %size : index
  %address = arith.addi %base, %bytes : index
  %i = arith.index_cast %address : index to i64
  %p = llvm.inttoptr %i : i64 to !llvm.ptr
  %write = arith.constant 1 : i32
  %locality = arith.constant 3 : i32
  %data = arith.constant 1 : i32
  llvm.call_intrinsic "llvm.prefetch.p0"(%p, %write, %locality, %data) : (!llvm.ptr, i32, i32, i32) -> ()
  func.return
}

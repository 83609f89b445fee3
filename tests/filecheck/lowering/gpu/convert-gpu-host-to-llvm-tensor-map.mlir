// RUN: mlc-opt %s -p convert-gpu-host-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-gpu-host-to-llvm | mlc-opt --verify-roundtrip > /dev/null

// A TMA kernel's tensor map (`tensor_map_host`): the call the contraction pass emits
// before the launch gets a body that encodes the map on the host stack (128 bytes,
// 64-aligned, as CUtensorMap is; rank 2, unit element strides) with
// cuTensorMapEncodeTiled, and copies it to the device buffer the kernel reads it from
// with cuMemcpyHtoDAsync_v2 on the default stream; each call's status is kept. A
// module without such a call gets no stub (convert-gpu-host-to-llvm.mlir).

// CHECK-LABEL: llvm.func @f(
// CHECK:         %[[MAP:.+]] = llvm.call @__mlc_cuda_malloc(
// CHECK:         llvm.call @__mlc_tensor_map(%{{.+}}) : (i64, i64, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> ()
// CHECK:         llvm.call @__mlc_cuda_free(
// CHECK:       llvm.func internal @__mlc_tensor_map(%[[AT:.+]]: i64, %[[TENSOR:.+]]: i64, %[[TYPE:.+]]: i32, %[[INTERLEAVE:.+]]: i32, %[[SWIZZLE:.+]]: i32, %[[L2:.+]]: i32, %[[FILL:.+]]: i32, %[[INNER:.+]]: i64, %[[OUTER:.+]]: i64, %[[STRIDE:.+]]: i64, %[[BOXI:.+]]: i32, %[[BOXO:.+]]: i32)
// CHECK:         %[[HOST:.+]] = llvm.alloca %{{.+}} x i64 {alignment = 64 : i64}
// CHECK:         %[[DIMS:.+]] = llvm.alloca
// CHECK:         llvm.store %[[INNER]]
// CHECK:         llvm.store %[[OUTER]]
// CHECK:         %[[STRIDES:.+]] = llvm.alloca
// CHECK:         llvm.store %[[STRIDE]]
// CHECK:         %[[BOX:.+]] = llvm.alloca
// CHECK:         llvm.store %[[BOXI]]
// CHECK:         llvm.store %[[BOXO]]
// CHECK:         %[[STEPS:.+]] = llvm.alloca
// CHECK:         %[[RANK:.+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:         %[[GLOBAL:.+]] = llvm.inttoptr %[[TENSOR]] : i64 to !llvm.ptr
// CHECK:         %[[RC:.+]] = llvm.call @cuTensorMapEncodeTiled(%[[HOST]], %[[TYPE]], %[[RANK]], %[[GLOBAL]], %[[DIMS]], %[[STRIDES]], %[[BOX]], %[[STEPS]], %[[INTERLEAVE]], %[[SWIZZLE]], %[[L2]], %[[FILL]])
// CHECK:         llvm.mlir.addressof @__mlc_cuda_status
// CHECK:         %[[DEVICE:.+]] = llvm.inttoptr %[[AT]] : i64 to !llvm.ptr
// CHECK:         %[[STREAM:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[BYTES:.+]] = llvm.mlir.constant(128) : i64
// CHECK:         llvm.call @cuMemcpyHtoDAsync_v2(%[[DEVICE]], %[[HOST]], %[[BYTES]], %[[STREAM]])
// CHECK:         llvm.mlir.addressof @__mlc_cuda_status
// CHECK-DAG:   llvm.func @cuTensorMapEncodeTiled(!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-DAG:   llvm.func @cuMemcpyHtoDAsync_v2(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
builtin.module attributes {gpu.container_module} {
  func.func @f(%a: memref<256x200xbf16>) {
    %map = memref.alloc() {alignment = 64 : i64} : memref<16xi64>
    %at = "memref.extract_aligned_pointer_as_index"(%map) : (memref<16xi64>) -> index
    %tensor = "memref.extract_aligned_pointer_as_index"(%a) : (memref<256x200xbf16>) -> index
    %bf16 = arith.constant 9 : i32
    %none = arith.constant 0 : i32
    %swizzle = arith.constant 3 : i32
    %l2 = arith.constant 2 : i32
    %k = arith.constant 200 : i64
    %m = arith.constant 256 : i64
    %stride = arith.constant 400 : i64
    %deep = arith.constant 64 : i32
    %rows = arith.constant 128 : i32
    func.call @__mlc_tensor_map(%at, %tensor, %bf16, %none, %swizzle, %l2, %none, %k, %m, %stride, %deep, %rows) : (index, index, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> ()
    memref.dealloc %map : memref<16xi64>
    func.return
  }
  func.func private @__mlc_tensor_map(index, index, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> ()
}

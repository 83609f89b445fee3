// RUN: mlc-opt %s -p convert-gpu-host-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-gpu-host-to-llvm | mlc-opt --verify-roundtrip > /dev/null

// A TMA kernel's tensor maps (`tensor_map_host`): each call the contraction pass emits
// before a launch calls a stub of its own, with two globals: the tensor address it
// last encoded a map for, and the map's device buffer (set by the runtime when it
// loads the program: the stub allocates nothing). The same address returns the buffer
// at once; another encodes the map on the host stack (128 bytes, 64-aligned, as
// CUtensorMap is; unit element strides) with cuTensorMapEncodeTiled and copies it with
// cuMemcpyHtoDAsync_v2 on the default stream into the buffer. Each driver call's status
// is kept; a refused map is not taken as made. A 3-D map (`@__mlc_tensor_map3d`: a
// batched operand) passes 3 sizes, 2 strides and 3 box sizes, rank 3. The shared
// declarations go.

// CHECK-LABEL: llvm.func @f(
// CHECK:         %[[MAPA:.+]] = llvm.call @__mlc_tensor_map_0(%{{.+}}) : (i64, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> i64
// CHECK:         %[[MAPB:.+]] = llvm.call @__mlc_tensor_map_1(%{{.+}}) : (i64, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> i64
// CHECK:         %[[MAPC:.+]] = llvm.call @__mlc_tensor_map_2(%{{.+}}) : (i64, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i32, i32, i32) -> i64
// CHECK:         llvm.return %[[MAPA]]
// CHECK-NOT:   @__mlc_tensor_map(
// CHECK-NOT:   @__mlc_tensor_map3d(
// CHECK:       llvm.func internal @__mlc_tensor_map_0(%[[TENSOR:.+]]: i64, %[[TYPE:.+]]: i32, %[[INTERLEAVE:.+]]: i32, %[[SWIZZLE:.+]]: i32, %[[L2:.+]]: i32, %[[FILL:.+]]: i32, %[[INNER:.+]]: i64, %[[OUTER:.+]]: i64, %[[STRIDE:.+]]: i64, %[[BOXI:.+]]: i32, %[[BOXO:.+]]: i32) -> i64
// CHECK-NOT:     cuMemAllocAsync
// CHECK:         %[[MAP_SLOT:.+]] = llvm.mlir.addressof @__mlc_tensor_map_0_map
// CHECK:         %[[BUFFER:.+]] = llvm.load %[[MAP_SLOT]] : !llvm.ptr -> i64
// CHECK:         %[[LAST_SLOT:.+]] = llvm.mlir.addressof @__mlc_tensor_map_0_tensor
// CHECK:         %[[LAST:.+]] = llvm.load %[[LAST_SLOT]] : !llvm.ptr -> i64
// CHECK:         %[[SAME:.+]] = llvm.icmp "eq" %[[LAST]], %[[TENSOR]]
// CHECK:         llvm.cond_br %[[SAME]], ^[[DONE:.+]], ^[[WRITE:.+]]
// CHECK:       ^[[WRITE]]:
// CHECK-NOT:     cuMemAllocAsync
// CHECK:         %[[HOST:.+]] = llvm.alloca %{{.+}} x i64 {alignment = 64 : i64}
// CHECK:         %[[RANK:.+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK:         %[[DIMS:.+]] = llvm.alloca
// CHECK:         llvm.store %[[INNER]]
// CHECK:         llvm.store %[[OUTER]]
// CHECK:         %[[STRIDES:.+]] = llvm.alloca
// CHECK:         llvm.store %[[STRIDE]]
// CHECK:         %[[BOX:.+]] = llvm.alloca
// CHECK:         llvm.store %[[BOXI]]
// CHECK:         llvm.store %[[BOXO]]
// CHECK:         %[[STEPS:.+]] = llvm.alloca
// CHECK:         %[[GLOBAL:.+]] = llvm.inttoptr %[[TENSOR]] : i64 to !llvm.ptr
// CHECK:         %[[RC:.+]] = llvm.call @cuTensorMapEncodeTiled(%[[HOST]], %[[TYPE]], %[[RANK]], %[[GLOBAL]], %[[DIMS]], %[[STRIDES]], %[[BOX]], %[[STEPS]], %[[INTERLEAVE]], %[[SWIZZLE]], %[[L2]], %[[FILL]])
// CHECK:         llvm.mlir.addressof @__mlc_cuda_status
// CHECK:         %[[DEVICE:.+]] = llvm.inttoptr %[[BUFFER]] : i64 to !llvm.ptr
// CHECK:         %[[STREAM:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[BYTES:.+]] = llvm.mlir.constant(128) : i64
// CHECK:         llvm.call @cuMemcpyHtoDAsync_v2(%[[DEVICE]], %[[HOST]], %[[BYTES]], %[[STREAM]])
// CHECK:         %[[OK:.+]] = llvm.icmp "eq" %[[RC]]
// CHECK:         %[[MADE_FOR:.+]] = llvm.select %[[OK]], %[[TENSOR]]
// CHECK:         llvm.store %[[MADE_FOR]], %{{.+}} : i64, !llvm.ptr
// CHECK:         llvm.br ^[[DONE]]
// CHECK:       ^[[DONE]]:
// CHECK-NEXT:    llvm.return %[[BUFFER]] : i64
// CHECK:       llvm.func internal @__mlc_tensor_map_1(
// CHECK:       llvm.func internal @__mlc_tensor_map_2(%[[T3:.+]]: i64, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %[[D0:.+]]: i64, %[[D1:.+]]: i64, %[[D2:.+]]: i64, %[[S1:.+]]: i64, %[[S2:.+]]: i64, %[[B0:.+]]: i32, %[[B1:.+]]: i32, %[[B2:.+]]: i32) -> i64
// CHECK:         %[[RANK3:.+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK:         %[[DIMS3:.+]] = llvm.alloca
// CHECK:         llvm.store %[[D0]]
// CHECK:         llvm.store %[[D1]]
// CHECK:         llvm.store %[[D2]]
// CHECK:         %[[STRIDES3:.+]] = llvm.alloca
// CHECK:         llvm.store %[[S1]]
// CHECK:         llvm.store %[[S2]]
// CHECK:         %[[BOX3:.+]] = llvm.alloca
// CHECK:         llvm.store %[[B0]]
// CHECK:         llvm.store %[[B1]]
// CHECK:         llvm.store %[[B2]]
// CHECK:         llvm.call @cuTensorMapEncodeTiled(%{{.+}}, %{{.+}}, %[[RANK3]], %{{.+}}, %[[DIMS3]], %[[STRIDES3]], %[[BOX3]],
// CHECK-DAG:   llvm.mlir.global external @__mlc_tensor_map_0_tensor(0 : i64)
// CHECK-DAG:   llvm.mlir.global external @__mlc_tensor_map_0_map(0 : i64)
// CHECK-DAG:   llvm.mlir.global external @__mlc_tensor_map_1_map(0 : i64)
// CHECK-DAG:   llvm.mlir.global external @__mlc_tensor_map_2_map(0 : i64)
// CHECK-DAG:   llvm.func @cuTensorMapEncodeTiled(!llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// CHECK-DAG:   llvm.func @cuMemcpyHtoDAsync_v2(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
builtin.module attributes {gpu.container_module} {
  func.func @f(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %c: memref<3x200x512xbf16>) -> index {
    %ta = "memref.extract_aligned_pointer_as_index"(%a) : (memref<256x200xbf16>) -> index
    %tb = "memref.extract_aligned_pointer_as_index"(%b) : (memref<200x512xbf16>) -> index
    %tc = "memref.extract_aligned_pointer_as_index"(%c) : (memref<3x200x512xbf16>) -> index
    %bf16 = arith.constant 9 : i32
    %none = arith.constant 0 : i32
    %swizzle = arith.constant 3 : i32
    %l2 = arith.constant 2 : i32
    %k = arith.constant 200 : i64
    %m = arith.constant 256 : i64
    %n = arith.constant 512 : i64
    %batch = arith.constant 3 : i64
    %stride_a = arith.constant 400 : i64
    %stride_b = arith.constant 1024 : i64
    %stride_c = arith.constant 204800 : i64
    %deep = arith.constant 64 : i32
    %rows = arith.constant 128 : i32
    %one = arith.constant 1 : i32
    %ma = func.call @__mlc_tensor_map(%ta, %bf16, %none, %swizzle, %l2, %none, %k, %m, %stride_a, %deep, %rows) : (index, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> index
    %mb = func.call @__mlc_tensor_map(%tb, %bf16, %none, %swizzle, %l2, %none, %n, %k, %stride_b, %deep, %deep) : (index, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> index
    %mc = func.call @__mlc_tensor_map3d(%tc, %bf16, %none, %swizzle, %l2, %none, %n, %k, %batch, %stride_b, %stride_c, %deep, %deep, %one) : (index, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i32, i32, i32) -> index
    func.return %ma : index
  }
  func.func private @__mlc_tensor_map(index, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> index
  func.func private @__mlc_tensor_map3d(index, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i32, i32, i32) -> index
}

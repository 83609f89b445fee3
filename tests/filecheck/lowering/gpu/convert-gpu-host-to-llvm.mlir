// RUN: mlc-opt %s -p convert-gpu-host-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-gpu-host-to-llvm | mlc-opt --verify-roundtrip > /dev/null
// RUN: mlc-opt %s -p convert-gpu-host-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// Host code: allocation through the stream-ordered driver allocator, constants read
// through their device copies, a launch through a stub that calls cuLaunchKernel with
// the expanded descriptor fields, an element read back with cuMemcpyDtoH. The
// gpu.module is left as it was.

// CHECK-LABEL: llvm.func @f(%n: i64) -> f32
// CHECK:         %[[RAW:.+]] = llvm.call @__mlc_cuda_malloc(%{{.+}}) : (i64) -> !llvm.ptr
// CHECK:         %[[SLOT:.+]] = llvm.mlir.addressof @__mlc_device_weights : !llvm.ptr
// CHECK-NEXT:    %[[W:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         llvm.call @__mlc_launch_k(%{{.+}}) : (i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// CHECK:         %[[V:.+]] = llvm.call @__mlc_read_0(%{{.+}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> f32
// CHECK:         llvm.call @__mlc_write_1(%[[V]], %{{.+}}) : (f32, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()
// CHECK:         llvm.call @__mlc_cuda_free(%{{.+}}) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return %[[V]] : f32
// CHECK-NOT:     @malloc
// CHECK:       llvm.func internal @__mlc_launch_k(%{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %[[SHARED:.+]]: i32,
// CHECK:         %[[N:.+]] = llvm.mlir.constant(10) : i64
// CHECK-NEXT:    %[[PARAMS:.+]] = llvm.alloca %[[N]] x !llvm.ptr
// CHECK:         %[[HANDLE_SLOT:.+]] = llvm.mlir.addressof @__mlc_kernel_k : !llvm.ptr
// CHECK-NEXT:    %[[HANDLE:.+]] = llvm.load %[[HANDLE_SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[RC:.+]] = llvm.call @cuLaunchKernel(%[[HANDLE]], {{.*}}, %[[SHARED]], %{{.+}}, %[[PARAMS]], %{{.+}}) : (!llvm.ptr, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK:         llvm.mlir.addressof @__mlc_cuda_status
// CHECK:       llvm.func internal @__mlc_read_0(
// CHECK:         llvm.call @cuMemcpyDtoH_v2(
// A write is an async copy on the default stream (null): it does not wait for the GPU.
// CHECK:       llvm.func internal @__mlc_write_1(
// CHECK:         %[[STREAM:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT:    llvm.call @cuMemcpyHtoDAsync_v2(%{{.+}}, %{{.+}}, %{{.+}}, %[[STREAM]]) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK:       "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK-NEXT:    llvm.func @k() attributes {nvvm.kernel} {
// CHECK-DAG:   llvm.mlir.global external @__mlc_cuda_status(0 : i32)
// CHECK-DAG:   llvm.mlir.global external @__mlc_device_weights(0 : i64)
// CHECK-DAG:   llvm.mlir.global external @__mlc_kernel_k(0 : i64)
// CHECK-DAG:   llvm.func @cuLaunchKernel(!llvm.ptr, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG:   llvm.func internal @__mlc_cuda_malloc(%{{.+}}: i64) -> !llvm.ptr
// CHECK-DAG:   llvm.call @cuMemAllocAsync(
// CHECK-DAG:   llvm.func internal @__mlc_cuda_free(%{{.+}}: !llvm.ptr)
// CHECK-DAG:   llvm.call @cuMemFreeAsync(
// LOC:         llvm.call @__mlc_launch_k{{.*}} loc("h.py":5:1)
builtin.module attributes {gpu.container_module} {
  "memref.global"() <{sym_name = "weights", sym_visibility = "private", type = memref<2xf32>, initial_value = dense<[1.0, 2.0]> : tensor<2xf32>, constant}> : () -> ()
  func.func @f(%n: index) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %m = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
    %w = memref.get_global @weights : memref<2xf32>
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %m, %w) <{kernel = @kernels::@k, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<?xf32>, memref<2xf32>) -> () loc("h.py":5:1)
    %v = memref.load %m[%c0] : memref<?xf32>
    memref.store %v, %m[%c1] : memref<?xf32>
    memref.dealloc %m : memref<?xf32>
    func.return %v : f32
  }
  "gpu.module"() <{sym_name = "kernels"}> ({
    llvm.func @k() attributes {nvvm.kernel} {
      llvm.return
    }
  }) : () -> ()
}

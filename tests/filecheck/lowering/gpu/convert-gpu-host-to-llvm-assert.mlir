// RUN: mlc-opt %s -p convert-gpu-host-to-llvm | filecheck %s

// A failed run-time check's message is a host string: it is read where it is, not
// through a device copy as the constants kernels read. A constant nothing reads (the
// unused get_global of @f) gets no device copy.

// CHECK-LABEL: llvm.func @f(%n: i64)
// CHECK:         %[[M:.+]] = llvm.mlir.addressof @__mlc_assert_message_0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @mlc_assert_failed(%[[M]]) : (!llvm.ptr) -> ()
// CHECK-NOT:   __mlc_device___mlc_assert_message
// CHECK-LABEL: llvm.func @g()
// CHECK:         llvm.mlir.addressof @__mlc_device_weights
// CHECK-DAG:   llvm.mlir.global external @__mlc_device_weights(0 : i64)
// CHECK-NOT:   @__mlc_device_unread
builtin.module attributes {gpu.container_module} {
  "memref.global"() <{sym_name = "unread", sym_visibility = "private", type = memref<2xf32>, initial_value = dense<[3.0, 4.0]> : tensor<2xf32>, constant}> : () -> ()
  "memref.global"() <{sym_name = "weights", sym_visibility = "private", type = memref<2xf32>, initial_value = dense<[1.0, 2.0]> : tensor<2xf32>, constant}> : () -> ()
  func.func @f(%n: index) {
    %c1 = arith.constant 1 : index
    %ok = arith.cmpi eq, %n, %c1 : index
    cf.assert %ok, "n must be 1"
    %w = memref.get_global @unread : memref<2xf32>
    func.return
  }
  func.func @g() -> memref<2xf32> {
    %w = memref.get_global @weights : memref<2xf32>
    func.return %w : memref<2xf32>
  }
}

// RUN: mlc-opt %s --split-input-file -p convert-gpu-to-nvvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-gpu-to-nvvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-gpu-to-nvvm --print-debuginfo | filecheck %s --check-prefix=LOC

// Ids and sizes read NVVM special registers; gpu.barrier is bar.sync; the kernel is
// an llvm.func marked nvvm.kernel whose memref argument is expanded into descriptor
// fields (as host functions pass it); the rest is convert-to-llvm's lowering.

// CHECK:       "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK-NEXT:    llvm.func @k(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %n: i64) attributes {nvvm.kernel} {
// CHECK:           %[[T:.+]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-NEXT:      %[[TI:.+]] = llvm.sext %[[T]] : i32 to i64
// CHECK-NEXT:      %[[B:.+]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.y"() : () -> i32
// CHECK-NEXT:      %[[BI:.+]] = llvm.sext %[[B]] : i32 to i64
// CHECK-NEXT:      llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ntid.z"() : () -> i32
// CHECK-NEXT:      llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.nctaid.x"() : () -> i32
// CHECK:           llvm.getelementptr inbounds %{{.+}}[%[[TI]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// The f32 exp is `llvm.exp.f32` in a kernel (libdevice's `__nv_expf` in the PTX), not
// convert-to-llvm's inline polynomial.
// CHECK:           llvm.call_intrinsic "llvm.exp.f32"
// CHECK-NOT:       llvm.call_intrinsic "llvm.roundeven.f32"
// CHECK:           %[[ZERO:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:      llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%[[ZERO]]) : (i32) -> ()
// CHECK:           llvm.getelementptr inbounds %{{.+}}[%[[BI]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:           llvm.return
// CHECK-NOT:     gpu.func
// CHECK-NOT:     _mlc_invoke
// LOC:           llvm.store {{.*}} loc("k.py":9:2)
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>, index) -> (), kernel}> ({
    ^bb0(%m: memref<?xf32>, %n: index):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %b = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
      %d = "gpu.block_dim"() <{dimension = #gpu<dim z>}> : () -> index
      %g = "gpu.grid_dim"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %m[%t] : memref<?xf32>
      %e = math.exp %x : f32
      "gpu.barrier"() : () -> ()
      memref.store %e, %m[%b] : memref<?xf32> loc("k.py":9:2)
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

// A device function (no `kernel`) stays a plain internal function.

// CHECK:       "gpu.module"() <{sym_name = "lib"}> ({
// CHECK-NEXT:    llvm.func internal @helper(%x: f32) -> f32 {
// CHECK-NOT:       nvvm.kernel
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "lib"}> ({
    "gpu.func"() <{function_type = (f32) -> f32}> ({
    ^bb0(%x: f32):
      "gpu.return"(%x) : (f32) -> ()
    }) {sym_name = "helper"} : () -> ()
  }) : () -> ()
}

// -----

// Shared memory: each `memref.alloca` in address space 3 is an internal global of
// the kernels' module in address space 3, reached through its generic address.

// CHECK:       "gpu.module"() <{sym_name = "tiles"}> ({
// CHECK:         llvm.func @shared(
// CHECK:           llvm.mlir.addressof @__mlc_shared_0 : !llvm.ptr
// CHECK:           llvm.mlir.addressof @__mlc_shared_1 : !llvm.ptr
// CHECK:           llvm.store
// CHECK:           llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK:           llvm.load
// CHECK-NOT:       memref.
// CHECK:         llvm.mlir.global internal @__mlc_shared_0() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<16 x f32>
// CHECK-NEXT:    llvm.mlir.global internal @__mlc_shared_1() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<8 x f32>
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "tiles"}> ({
    "gpu.func"() <{function_type = (memref<?xf32>) -> (), kernel}> ({
    ^bb0(%m: memref<?xf32>):
      %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %a = memref.alloca() : memref<2x8xf32, 3 : i64>
      %b = memref.alloca() : memref<8xf32, 3 : i64>
      %c0 = arith.constant 0 : index
      %x = memref.load %m[%t] : memref<?xf32>
      memref.store %x, %a[%c0, %t] : memref<2x8xf32, 3 : i64>
      memref.store %x, %b[%t] : memref<8xf32, 3 : i64>
      "gpu.barrier"() : () -> ()
      %y = memref.load %a[%c0, %c0] : memref<2x8xf32, 3 : i64>
      memref.store %y, %m[%t] : memref<?xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "shared"} : () -> ()
  }) : () -> ()
}

// -----

// Launch bounds: a known block size becomes `nvvm.maxntid`, `nvvm.minctasm` stays;
// a kernel without them gets neither.

// CHECK:       "gpu.module"() <{sym_name = "bounded"}> ({
// CHECK-NEXT:    llvm.func @big() attributes {nvvm.kernel, nvvm.minctasm = 2 : i32, nvvm.maxntid = array<i32: 256, 1, 1>} {
// CHECK:         llvm.func @free() attributes {nvvm.kernel} {
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "bounded"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      "gpu.return"() : () -> ()
    }) {sym_name = "big", gpu.known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32} : () -> ()
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      "gpu.return"() : () -> ()
    }) {sym_name = "free"} : () -> ()
  }) : () -> ()
}

// -----

// An alloca marked mlc.dynamic_shared is the kernel's dynamic shared memory: an
// external zero-length array in address space 3 (`.extern .shared` in PTX), its bytes
// on the kernel; the other alloca stays a static internal global.

// CHECK:       "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK:         llvm.func @dyn(%{{.*}}: i64) attributes {nvvm.kernel, mlc.dynamic_shared_bytes = 69632 : i32}
// CHECK:           llvm.mlir.addressof @__mlc_dynamic_shared_0 : !llvm.ptr
// CHECK:           llvm.mlir.addressof @__mlc_shared_0 : !llvm.ptr
// CHECK-DAG:     llvm.mlir.global external @__mlc_dynamic_shared_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-DAG:     llvm.mlir.global internal @__mlc_shared_0() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<64 x f32>
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (index) -> (), kernel}> ({
    ^bb0(%i: index):
      %big = memref.alloca() {mlc.dynamic_shared} : memref<34816xf16, 3 : i64>
      %small = memref.alloca() : memref<64xf32, 3 : i64>
      %h = memref.load %big[%i] : memref<34816xf16, 3 : i64>
      %f = arith.extf %h : f16 to f32
      memref.store %f, %small[%i] : memref<64xf32, 3 : i64>
      "gpu.return"() : () -> ()
    }) {sym_name = "dyn"} : () -> ()
  }) : () -> ()
}

// -----

// Register reads, barriers and shared allocas nested in loops and branches, in two
// kernels: each is lowered where it is, and the shared globals are numbered in the
// order of the module (the first kernel's, then the second's).

// CHECK:         llvm.func @first(
// CHECK:           llvm.mlir.addressof @__mlc_shared_0 : !llvm.ptr
// CHECK:           llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.laneid"() : () -> i32
// CHECK:           llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK:         llvm.func @second(
// CHECK:           llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.y"() : () -> i32
// CHECK:           llvm.mlir.addressof @__mlc_shared_1 : !llvm.ptr
// CHECK:           llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK-NOT:     gpu.
// CHECK:         llvm.mlir.global internal @__mlc_shared_0() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
// CHECK-NEXT:    llvm.mlir.global internal @__mlc_shared_1() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<32 x f32>
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<4xf32>) -> (), kernel}> ({
    ^bb0(%m: memref<4xf32>):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      scf.for %i = %c0 to %c4 step %c1 {
        %tile = memref.alloca() : memref<4xf32, 3 : i64>
        %lane = "gpu.lane_id"() : () -> index
        %x = memref.load %m[%i] : memref<4xf32>
        memref.store %x, %tile[%lane] : memref<4xf32, 3 : i64>
        "gpu.barrier"() : () -> ()
        scf.yield
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "first"} : () -> ()
    "gpu.func"() <{function_type = (memref<4xf32>, i1) -> (), kernel}> ({
    ^bb0(%m: memref<4xf32>, %p: i1):
      scf.if %p {
        %t = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
        %tile = memref.alloca() : memref<32xf32, 3 : i64>
        %x = memref.load %m[%t] : memref<4xf32>
        memref.store %x, %tile[%t] : memref<32xf32, 3 : i64>
        "gpu.barrier"() : () -> ()
      }
      "gpu.return"() : () -> ()
    }) {sym_name = "second"} : () -> ()
  }) : () -> ()
}

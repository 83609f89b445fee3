// RUN: mlc-opt %s --split-input-file -p gpu-kernel-outlining | filecheck %s
// RUN: mlc-opt %s --split-input-file -p gpu-kernel-outlining | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p gpu-kernel-outlining --print-debuginfo | filecheck %s --check-prefix=LOC

// Values from outside become kernel arguments in order of first use; constants are
// cloned into the kernel; uses of the launch's block arguments read the ids. The
// constant block size becomes the kernel's `gpu.known_block_size`.

// CHECK:       builtin.module attributes {gpu.container_module} {
// CHECK-LABEL:   func.func @f(%m: memref<?xf32>, %n: index, %s: f32)
// CHECK:           "gpu.launch_func"(%n, %c1, %c1, %c64, %c1, %c1, %s, %m) <{kernel = @kernels::@f_kernel_0, {{.*}}}> : (index, index, index, index, index, index, f32, memref<?xf32>) -> ()
// CHECK-NEXT:      func.return
// CHECK:         "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK-NEXT:      "gpu.func"() <{function_type = (f32, memref<?xf32>) -> (), kernel}> ({
// CHECK-NEXT:      ^{{.+}}(%[[S:.+]]: f32, %[[M:.+]]: memref<?xf32>):
// CHECK-NEXT:        %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:        %[[BX:.+]] = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:        %[[TX:.+]] = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:        %[[SX:.+]] = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
// CHECK-NEXT:        %[[A:.+]] = arith.muli %[[BX]], %[[SX]] : index
// CHECK-NEXT:        %[[I:.+]] = arith.addi %[[A]], %[[TX]] : index
// CHECK-NEXT:        %[[T:.+]] = arith.mulf %[[S]], %[[TWO]] : f32
// CHECK-NEXT:        memref.store %[[T]], %[[M]][%[[I]]] : memref<?xf32>
// CHECK-NEXT:        "gpu.return"() : () -> ()
// CHECK-NEXT:      }) {sym_name = "f_kernel_0", gpu.known_block_size = array<i32: 64, 1, 1>} : () -> ()
// LOC:           "gpu.launch_func"{{.*}} loc("k.py":3:1)
// LOC:           "gpu.block_id"{{.*}} loc("k.py":3:1)
func.func @f(%m: memref<?xf32>, %n: index, %s: f32) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  "gpu.launch"(%n, %c1, %c1, %c64, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    %a = arith.muli %bx, %sx : index
    %i = arith.addi %a, %tx : index
    %t = arith.mulf %s, %two : f32
    memref.store %t, %m[%i] : memref<?xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> () loc("k.py":3:1)
  func.return
}

// -----

// Two launches in one function give two kernels with fresh names; a second function's
// kernels join the same gpu.module.

// CHECK-LABEL:   func.func @g(%m: memref<4xf32>)
// CHECK:           "gpu.launch_func"({{.*}}) <{kernel = @kernels::@g_kernel_0
// CHECK:           "gpu.launch_func"({{.*}}) <{kernel = @kernels::@g_kernel_1
// CHECK-LABEL:   func.func @h(%m: memref<4xf32>)
// CHECK:           "gpu.launch_func"({{.*}}) <{kernel = @kernels::@h_kernel_0
// CHECK:         "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK:           {sym_name = "g_kernel_0", gpu.known_block_size = array<i32: {{.+}}>}
// CHECK:           {sym_name = "g_kernel_1", gpu.known_block_size = array<i32: {{.+}}>}
// CHECK:           {sym_name = "h_kernel_0", gpu.known_block_size = array<i32: {{.+}}>}
// CHECK-NOT:     "gpu.module"
func.func @g(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %v = arith.constant 1.0 : f32
  "gpu.launch"(%c1, %c1, %c1, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    memref.store %v, %m[%tx] : memref<4xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  "gpu.launch"(%c1, %c1, %c1, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    memref.store %v, %m[%bx] : memref<4xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
func.func @h(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %v = arith.constant 1.0 : f32
  "gpu.launch"(%c1, %c1, %c1, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    memref.store %v, %m[%gz] : memref<4xf32>
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// -----

// Launch bounds: `nvvm.*` attributes of the launch go to the kernel; a block size
// that is not a constant gives no `gpu.known_block_size`.

// CHECK-LABEL: func.func @bounds
// CHECK:         }) {sym_name = "bounds_kernel_0", gpu.known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32} : () -> ()
// CHECK:         }) {sym_name = "bounds_kernel_1"} : () -> ()
func.func @bounds(%m: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  "gpu.launch"(%c1, %c1, %c1, %c256, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    "gpu.terminator"() : () -> ()
  }) {nvvm.minctasm = 2 : i32} : (index, index, index, index, index, index) -> ()
  "gpu.launch"(%c1, %c1, %c1, %n, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// -----

// A launch's dynamic shared memory size goes to its launch_func.

// CHECK-LABEL: func.func @dynamic_shared
// CHECK:         %[[BYTES:.*]] = arith.constant 69632 : i32
// CHECK:         "gpu.launch_func"(%c1, %c1, %c1, %c128, %c1, %c1, %[[BYTES]]) <{kernel = @kernels::@dynamic_shared_kernel_0, {{.*}}}> : (index, index, index, index, index, index, i32) -> ()
func.func @dynamic_shared() {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %bytes = arith.constant 69632 : i32
  "gpu.launch"(%c1, %c1, %c1, %c128, %c1, %c1, %bytes) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index, i32) -> ()
  func.return
}

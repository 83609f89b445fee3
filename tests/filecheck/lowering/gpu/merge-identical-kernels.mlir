// RUN: mlc-opt %s --split-input-file -p merge-identical-kernels | filecheck %s
// RUN: mlc-opt %s --split-input-file -p merge-identical-kernels --print-debuginfo | filecheck %s --check-prefix=LOC

// Kernels equal up to their names (and SSA names) are one kernel: every launch of a
// copy, in any function, launches the first; the copies are erased. Each launch keeps
// its location.

// CHECK-LABEL:   func.func @f(
// CHECK:           "gpu.launch_func"({{.*}}%a) <{kernel = @kernels::@f_kernel_0,
// CHECK:           "gpu.launch_func"({{.*}}%b) <{kernel = @kernels::@f_kernel_0,
// CHECK-LABEL:   func.func @g(
// CHECK:           "gpu.launch_func"({{.*}}%c) <{kernel = @kernels::@f_kernel_0,
// CHECK:         "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK:           {sym_name = "f_kernel_0", gpu.known_block_size = array<i32: 64, 1, 1>}
// CHECK-NOT:       sym_name
// CHECK:         }) : () -> ()

// LOC:           "gpu.launch_func"{{.*}} loc("k.py":1:1)
// LOC:           "gpu.launch_func"{{.*}} loc("k.py":2:1)
// LOC:           "gpu.launch_func"{{.*}} loc("k.py":3:1)
builtin.module attributes {gpu.container_module} {
  func.func @f(%a: memref<64xf32>, %b: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @kernels::@f_kernel_0, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> () loc("k.py":1:1)
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %b) <{kernel = @kernels::@f_kernel_1, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> () loc("k.py":2:1)
    func.return
  }
  func.func @g(%c: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %c) <{kernel = @kernels::@g_kernel_0, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> () loc("k.py":3:1)
    func.return
  }
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      %two = arith.constant 2.000000e+00 : f32
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf32>
      %t = arith.mulf %x, %two : f32
      memref.store %t, %0[%1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "f_kernel_0", gpu.known_block_size = array<i32: 64, 1, 1>} : () -> ()
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%arg: memref<64xf32>):
      %c2 = arith.constant 2.000000e+00 : f32
      %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %v = memref.load %arg[%tid] : memref<64xf32>
      %w = arith.mulf %v, %c2 : f32
      memref.store %w, %arg[%tid] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "f_kernel_1", gpu.known_block_size = array<i32: 64, 1, 1>} : () -> ()
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      %two = arith.constant 2.000000e+00 : f32
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf32>
      %t = arith.mulf %x, %two : f32
      memref.store %t, %0[%1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "g_kernel_0", gpu.known_block_size = array<i32: 64, 1, 1>} : () -> ()
  }) : () -> ()
}

// -----

// Kernels that differ in a constant, in an attribute (the launch bound) or in a type
// stay apart, and so do their launches.

// CHECK-LABEL:   func.func @apart(
// CHECK:           <{kernel = @kernels::@k_base,
// CHECK:           <{kernel = @kernels::@k_constant,
// CHECK:           <{kernel = @kernels::@k_bound,
// CHECK:           <{kernel = @kernels::@k_type,
// CHECK:         "gpu.module"() <{sym_name = "kernels"}> ({
// CHECK-DAG:       sym_name = "k_base"
// CHECK-DAG:       sym_name = "k_constant"
// CHECK-DAG:       sym_name = "k_bound"
// CHECK-DAG:       sym_name = "k_type"
builtin.module attributes {gpu.container_module} {
  func.func @apart(%a: memref<64xf32>, %h: memref<64xf16>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @kernels::@k_base, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> ()
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @kernels::@k_constant, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> ()
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @kernels::@k_bound, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> ()
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %h) <{kernel = @kernels::@k_type, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf16>) -> ()
    func.return
  }
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      %two = arith.constant 2.000000e+00 : f32
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf32>
      %t = arith.mulf %x, %two : f32
      memref.store %t, %0[%1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k_base", gpu.known_block_size = array<i32: 64, 1, 1>} : () -> ()
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      %two = arith.constant 3.000000e+00 : f32
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf32>
      %t = arith.mulf %x, %two : f32
      memref.store %t, %0[%1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k_constant", gpu.known_block_size = array<i32: 64, 1, 1>} : () -> ()
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      %two = arith.constant 2.000000e+00 : f32
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf32>
      %t = arith.mulf %x, %two : f32
      memref.store %t, %0[%1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k_bound", gpu.known_block_size = array<i32: 32, 1, 1>} : () -> ()
    "gpu.func"() <{function_type = (memref<64xf16>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf16>):
      %two = arith.constant 2.000000e+00 : f16
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf16>
      %t = arith.mulf %x, %two : f16
      memref.store %t, %0[%1] : memref<64xf16>
      "gpu.return"() : () -> ()
    }) {sym_name = "k_type", gpu.known_block_size = array<i32: 64, 1, 1>} : () -> ()
  }) : () -> ()
}

// -----

// Launches of one kernel, and a module without gpu.module, are left as they are.

// CHECK-LABEL:   func.func @host_only(
// CHECK-NEXT:      func.return
func.func @host_only(%a: memref<4xf32>) {
  func.return
}

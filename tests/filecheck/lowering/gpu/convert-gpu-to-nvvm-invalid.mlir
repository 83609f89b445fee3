// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-gpu-to-nvvm

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<4xindex>) -> (), kernel}> ({
    ^bb0(%m: memref<4xindex>):
      // expected-error @+1 {{'gpu.global_id' is not supported in kernels by convert-gpu-to-nvvm}}
      %i = "gpu.global_id"() <{dimension = #gpu<dim x>}> : () -> index
      memref.store %i, %m[%i] : memref<4xindex>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (index) -> (), kernel}> ({
    ^bb0(%n: index):
      // expected-error @+1 {{shared memory (address space 3) must have a static shape}}
      %a = memref.alloca(%n) : memref<?xf32, 3 : i64>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

// -----

builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = () -> (), kernel}> ({
      %a = memref.alloca() {mlc.dynamic_shared} : memref<64xf16, 3 : i64>
      // expected-error @+1 {{a kernel has at most one dynamic shared-memory alloca}}
      %b = memref.alloca() {mlc.dynamic_shared} : memref<64xf16, 3 : i64>
      "gpu.return"() : () -> ()
    }) {sym_name = "k"} : () -> ()
  }) : () -> ()
}

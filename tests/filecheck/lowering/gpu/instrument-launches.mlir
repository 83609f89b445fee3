// RUN: mlc-opt %s --split-input-file -p instrument-launches | filecheck %s
// RUN: mlc-opt %s --split-input-file -p instrument-launches --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Each kernel launch of the host code, at the top of a function or inside a model's
// loop, is put between calls of the launch timers with its id; the module lists the
// launches, the kernel each starts and their source ops in @__mlc_profile_kernels.
// The kernels themselves are left alone. With debug info, the inserted ops take the
// launch's location.

// CHECK-LABEL: llvm.mlir.global external constant @__mlc_profile_kernels
// CHECK-SAME:    \22id\22:0,\22function\22:\22f\22,\22kind\22:\22gpu.launch_func @kernels::@k0\22,\22sources\22:[\22conv1\22,\22relu1\22]
// CHECK-SAME:    \22id\22:1,\22function\22:\22f\22,\22kind\22:\22gpu.launch_func @kernels::@k1\22,\22sources\22:[\22lstm\22]
// CHECK-SAME:    \22id\22:2,\22function\22:\22g\22,\22kind\22:\22gpu.launch_func @kernels::@k0\22,\22sources\22:[\22model.py:9\22]
// CHECK-DAG:   func.func private @mlc_profile_launch_begin(i64)
// CHECK-DAG:   func.func private @mlc_profile_launch_end(i64)
// CHECK-LABEL: func.func @f
// CHECK:         %[[ID0:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    func.call @mlc_profile_launch_begin(%[[ID0]]) : (i64) -> ()
// CHECK-NEXT:    "gpu.launch_func"{{.*}}kernel = @kernels::@k0
// CHECK-NEXT:    func.call @mlc_profile_launch_end(%[[ID0]]) : (i64) -> ()
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %[[ID1:.+]] = arith.constant 1 : i64
// CHECK-NEXT:      func.call @mlc_profile_launch_begin(%[[ID1]])
// CHECK-NEXT:      "gpu.launch_func"{{.*}}kernel = @kernels::@k1
// CHECK-NEXT:      func.call @mlc_profile_launch_end(%[[ID1]])
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @g
// CHECK:         func.call @mlc_profile_launch_begin
// CHECK-NEXT:    "gpu.launch_func"
// CHECK-NEXT:    func.call @mlc_profile_launch_end
// CHECK:       "gpu.module"() <{sym_name = "kernels"}>
// CHECK-NOT:     mlc_profile

// LOC-LABEL: func.func @f
// LOC:         func.call @mlc_profile_launch_begin(%{{.*}}) : (i64) -> () loc(fused["conv1"("m.onnx":0:0), "relu1"("m.onnx":0:0)])
// LOC:         func.call @mlc_profile_launch_end(%{{.*}}) : (i64) -> () loc(fused["conv1"("m.onnx":0:0), "relu1"("m.onnx":0:0)])
// LOC:         func.call @mlc_profile_launch_begin(%{{.*}}) : (i64) -> () loc("lstm"("m.onnx":0:0))
builtin.module attributes {gpu.container_module} {
  func.func @f(%a: memref<64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @kernels::@k0, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> () loc(fused["conv1"("m.onnx":0:0), "relu1"("m.onnx":0:0)])
    scf.for %i = %c0 to %c8 step %c1 {
      "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @kernels::@k1, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> () loc("lstm"("m.onnx":0:0))
    }
    func.return
  }
  func.func @g(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a) <{kernel = @kernels::@k0, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> () loc("model.py":9:3)
    func.return
  }
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf32>
      %t = arith.addf %x, %x : f32
      memref.store %t, %0[%1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k0"} : () -> ()
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      %1 = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
      %x = memref.load %0[%1] : memref<64xf32>
      %t = arith.mulf %x, %x : f32
      memref.store %t, %0[%1] : memref<64xf32>
      "gpu.return"() : () -> ()
    }) {sym_name = "k1"} : () -> ()
  }) : () -> ()
}

// -----

// A host function that launches nothing gets no timers; the table is empty.

// CHECK-LABEL: llvm.mlir.global external constant @__mlc_profile_kernels("[]\00")
// CHECK-LABEL: func.func @scalars
// CHECK-NOT:     func.call
// CHECK:         func.return
func.func @scalars(%x: index) -> index {
  %y = arith.addi %x, %x : index
  func.return %y : index
}

// -----

// A function that `outline-contractions` made (`mlc.kernel`) launches one layer's
// kernel for each of its callers: each call is timed, with the call's location, so that
// the two layers keep their own times and names; the launch inside it is not.

// CHECK-LABEL: llvm.mlir.global external constant @__mlc_profile_kernels
// CHECK-SAME:    \22id\22:0,\22function\22:\22f\22,\22kind\22:\22func.call @f_kernel0\22,\22sources\22:[\22conv1\22]
// CHECK-SAME:    \22id\22:1,\22function\22:\22f\22,\22kind\22:\22func.call @f_kernel0\22,\22sources\22:[\22conv2\22]
// CHECK-NOT:     \22id\22:2
// CHECK-LABEL: func.func @f
// CHECK:         %[[ID0:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    func.call @mlc_profile_launch_begin(%[[ID0]])
// CHECK-NEXT:    func.call @f_kernel0(%a)
// CHECK-NEXT:    func.call @mlc_profile_launch_end(%[[ID0]])
// CHECK:         %[[ID1:.+]] = arith.constant 1 : i64
// CHECK-NEXT:    func.call @mlc_profile_launch_begin(%[[ID1]])
// CHECK-NEXT:    func.call @f_kernel0(%b)
// CHECK-NEXT:    func.call @mlc_profile_launch_end(%[[ID1]])
// CHECK-LABEL: func.func private @f_kernel0
// CHECK-NOT:     mlc_profile
// CHECK:         "gpu.launch_func"
// CHECK-NOT:     mlc_profile
// CHECK:         func.return

// LOC-LABEL: func.func @f
// LOC:         func.call @mlc_profile_launch_begin(%{{.*}}) : (i64) -> () loc("conv1"("m.onnx":0:0))
// LOC:         func.call @mlc_profile_launch_begin(%{{.*}}) : (i64) -> () loc("conv2"("m.onnx":0:0))
builtin.module attributes {gpu.container_module} {
  func.func @f(%a: memref<64xf32>, %b: memref<64xf32>) {
    func.call @f_kernel0(%a) : (memref<64xf32>) -> () loc("conv1"("m.onnx":0:0))
    func.call @f_kernel0(%b) : (memref<64xf32>) -> () loc("conv2"("m.onnx":0:0))
    func.return
  }
  func.func private @f_kernel0(%x: memref<64xf32>) attributes {mlc.kernel} {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %x) <{kernel = @kernels::@k0, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<64xf32>) -> () loc("conv1"("m.onnx":0:0))
    func.return
  }
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<64xf32>) -> (), kernel}> ({
    ^bb0(%0: memref<64xf32>):
      "gpu.return"() : () -> ()
    }) {sym_name = "k0"} : () -> ()
  }) : () -> ()
}

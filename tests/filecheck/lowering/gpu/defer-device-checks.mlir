// RUN: mlc-opt %s -p defer-device-checks | filecheck %s

// A check of a value the device computed (the host's `memref.load` of a kernel's
// result) moves after the launches, with the load, the arithmetic that feeds the
// `cf.assert`, and the buffer's dealloc; the launches run without waiting for it.

// CHECK-LABEL: func.func @gather
// CHECK:         "gpu.launch_func"({{.*}}kernel = @kernels::@worst
// CHECK-NEXT:    %[[C:.+]] = arith.constant 63 : i64
// CHECK-NEXT:    "gpu.launch_func"({{.*}}kernel = @kernels::@gather
// CHECK-NEXT:    %[[I:.+]] = memref.load %{{.+}}[] : memref<i64>
// CHECK-NEXT:    %[[K:.+]] = arith.minsi %[[I]], %[[C]] : i64
// CHECK-NEXT:    %[[OK:.+]] = arith.cmpi eq, %[[I]], %[[K]] : i64
// CHECK-NEXT:    cf.assert %[[OK]], "'ml.gather' op index {} is out of range [-64, 64) of data dim 0" {mlc.reports_value}
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<i64>
// CHECK-NEXT:    func.return

// Two checks keep their order; two loads of one buffer share its dealloc, placed once.
// CHECK-LABEL: func.func @two
// CHECK:         "gpu.launch_func"({{.*}}kernel = @kernels::@gather
// CHECK-NEXT:    memref.load %{{.+}}[%{{.+}}] : memref<2xi64>
// CHECK-NEXT:    memref.load %{{.+}}[%{{.+}}] : memref<2xi64>
// CHECK-NEXT:    arith.cmpi eq
// CHECK-NEXT:    cf.assert {{.*}}"first"
// CHECK-NEXT:    arith.cmpi eq
// CHECK-NEXT:    cf.assert {{.*}}"second"
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    func.return

// A value that sizes a buffer or a launch stays where it is: the host needs it there.
// CHECK-LABEL: func.func @count
// CHECK:         memref.load
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    memref.alloc(
// CHECK:         "gpu.launch_func"({{.*}}kernel = @kernels::@gather

// A buffer a later launch writes again is read where it is.
// CHECK-LABEL: func.func @rewritten
// CHECK:         memref.load
// CHECK-NEXT:    arith.cmpi
// CHECK-NEXT:    cf.assert
// CHECK-NEXT:    "gpu.launch_func"({{.*}}kernel = @kernels::@worst

// A function with more than one return (its block is not the function's end) is left alone.
// CHECK-LABEL: func.func @branches
// CHECK:         memref.load
// CHECK-NEXT:    arith.cmpi
// CHECK-NEXT:    cf.assert
// CHECK-NEXT:    cf.cond_br
builtin.module attributes {gpu.container_module} {
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{function_type = (memref<i64>) -> ()}> ({
    ^bb0(%arg0 : memref<i64>):
      "gpu.return"() : () -> ()
    }) {sym_name = "worst", gpu.kernel} : () -> ()
    "gpu.func"() <{function_type = () -> ()}> ({
      "gpu.return"() : () -> ()
    }) {sym_name = "gather", gpu.kernel} : () -> ()
  }) : () -> ()
  func.func @gather() {
    %c1 = arith.constant 1 : index
    %w = memref.alloc() : memref<i64>
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %w) <{kernel = @kernels::@worst, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<i64>) -> ()
    %i = memref.load %w[] : memref<i64>
    memref.dealloc %w : memref<i64>
    %c = arith.constant 63 : i64
    %k = arith.minsi %i, %c : i64
    %ok = arith.cmpi eq, %i, %k : i64
    cf.assert %ok, "'ml.gather' op index {} is out of range [-64, 64) of data dim 0" {mlc.reports_value}
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1) <{kernel = @kernels::@gather, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>}> : (index, index, index, index, index, index) -> ()
    func.return
  }
  func.func @two(%a : i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %w = memref.alloc() : memref<2xi64>
    %v = memref.collapse_shape %w [[0 : i64]] : memref<2xi64> into memref<2xi64>
    %i = memref.load %v[%c0] : memref<2xi64>
    %j = memref.load %w[%c1] : memref<2xi64>
    memref.dealloc %w : memref<2xi64>
    %ok = arith.cmpi eq, %i, %a : i64
    cf.assert %ok, "first"
    %ok2 = arith.cmpi eq, %j, %a : i64
    cf.assert %ok2, "second"
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1) <{kernel = @kernels::@gather, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>}> : (index, index, index, index, index, index) -> ()
    func.return
  }
  func.func @count() -> memref<?xf32> {
    %c1 = arith.constant 1 : index
    %w = memref.alloc() : memref<i64>
    %n = memref.load %w[] : memref<i64>
    %s = arith.index_cast %n : i64 to index
    %r = memref.alloc(%s) : memref<?xf32>
    %ok = arith.cmpi sge, %n, %n : i64
    cf.assert %ok, "never"
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1) <{kernel = @kernels::@gather, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>}> : (index, index, index, index, index, index) -> ()
    memref.dealloc %w : memref<i64>
    func.return %r : memref<?xf32>
  }
  func.func @rewritten(%a : i64) {
    %c1 = arith.constant 1 : index
    %w = memref.alloc() : memref<i64>
    %i = memref.load %w[] : memref<i64>
    %ok = arith.cmpi eq, %i, %a : i64
    cf.assert %ok, "first"
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1, %w) <{kernel = @kernels::@worst, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<i64>) -> ()
    memref.dealloc %w : memref<i64>
    func.return
  }
  func.func @branches(%a : i64, %b : i1) {
    %w = memref.alloc() : memref<i64>
    %i = memref.load %w[] : memref<i64>
    %ok = arith.cmpi eq, %i, %a : i64
    cf.assert %ok, "first"
    cf.cond_br %b, ^bb1, ^bb2
  ^bb1:
    func.return
  ^bb2:
    func.return
  }
}

// RUN: mlc-opt %s --split-input-file -p instrument-kernels | filecheck %s
// RUN: mlc-opt %s --split-input-file -p instrument-kernels --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// Each kernel at the top of a function (a parallel loop, a loop nest without results, a
// linalg op, a copy) is put between calls of the timers with its id; the module lists
// the kernels and their source ops in @__mlc_profile_kernels. With debug info, the inserted ops take
// the kernel's location. (mlc-opt gives the ops written without a location their
// `file:line`, which the sources list too.)

// CHECK-LABEL: llvm.mlir.global external constant @__mlc_profile_kernels
// CHECK-SAME:    \22id\22:0,\22function\22:\22kernels\22,\22kind\22:\22scf.parallel\22,\22sources\22:[\22conv1\22,\22relu1\22,
// CHECK-SAME:    \22id\22:1,\22function\22:\22kernels\22,\22kind\22:\22memref.copy\22,\22sources\22:[\22model.py:7\22]
// CHECK-SAME:    \22id\22:2,\22function\22:\22kernels\22,\22kind\22:\22scf.for\22,\22sources\22:[{{.*}}\22pool1\22
// CHECK-DAG:   func.func private @mlc_profile_begin(i64)
// CHECK-DAG:   func.func private @mlc_profile_end(i64)
// CHECK-LABEL: func.func @kernels
// CHECK:         %[[ID0:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    func.call @mlc_profile_begin(%[[ID0]]) : (i64) -> ()
// CHECK-NEXT:    "scf.parallel"
// CHECK:         }) : (index, index, index) -> ()
// CHECK-NEXT:    func.call @mlc_profile_end(%[[ID0]]) : (i64) -> ()
// CHECK-NEXT:    %[[ID1:.+]] = arith.constant 1 : i64
// CHECK-NEXT:    func.call @mlc_profile_begin(%[[ID1]])
// CHECK-NEXT:    "memref.copy"
// CHECK-NEXT:    func.call @mlc_profile_end(%[[ID1]])
// CHECK-NEXT:    %[[ID2:.+]] = arith.constant 2 : i64
// CHECK-NEXT:    func.call @mlc_profile_begin(%[[ID2]])
// CHECK-NEXT:    scf.for
// CHECK:         }
// CHECK-NEXT:    func.call @mlc_profile_end(%[[ID2]])
// CHECK-NEXT:    func.return

// LOC-LABEL: func.func @kernels
// LOC:         func.call @mlc_profile_begin(%{{.*}}) : (i64) -> () loc(fused["conv1"("m.onnx":0:0), "relu1"("m.onnx":0:0)])
// LOC:         func.call @mlc_profile_end(%{{.*}}) : (i64) -> () loc(fused["conv1"("m.onnx":0:0), "relu1"("m.onnx":0:0)])
// LOC:         func.call @mlc_profile_begin(%{{.*}}) : (i64) -> () loc("model.py":7:3)
func.func @kernels(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %b[%i] : memref<8xf32>
    scf.reduce
  }) : (index, index, index) -> () loc(fused["conv1"("m.onnx":0:0), "relu1"("m.onnx":0:0)])
  "memref.copy"(%a, %b) : (memref<8xf32>, memref<8xf32>) -> () loc("model.py":7:3)
  // xDSL's loops are unknown: the kernel's sources are its body's.
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %b[%i] : memref<8xf32> loc("pool1"("m.onnx":0:0))
    memref.store %v, %a[%i] : memref<8xf32>
  }
  func.return
}

// -----

// A loop that carries values is a model's loop, not a kernel: the kernels inside it are
// timed, each run adding to its kernel's total; so are those inside an scf.if. Views,
// allocations and calls of other functions are not kernels.

// CHECK-LABEL: func.func @control_flow
// CHECK:         memref.alloc
// CHECK-NEXT:    memref.subview
// CHECK-NEXT:    func.call @helper
// CHECK-NEXT:    %{{.*}} = scf.for
// CHECK-NEXT:      %[[ID0:.+]] = arith.constant 0 : i64
// CHECK-NEXT:      func.call @mlc_profile_begin(%[[ID0]])
// CHECK-NEXT:      "memref.copy"
// CHECK-NEXT:      func.call @mlc_profile_end(%[[ID0]])
// CHECK:         scf.if
// CHECK-NEXT:      %[[ID1:.+]] = arith.constant 1 : i64
// CHECK-NEXT:      func.call @mlc_profile_begin(%[[ID1]])
// CHECK-NEXT:      "memref.copy"
// CHECK-NEXT:      func.call @mlc_profile_end(%[[ID1]])
// CHECK-LABEL: func.func private @helper
// CHECK-NOT:     func.call @mlc_profile
// CHECK:         func.return
func.func @control_flow(%a: memref<8xf32>, %n: index, %flag: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<8xf32>
  %v = memref.subview %t[0] [4] [1] : memref<8xf32> to memref<4xf32>
  func.call @helper() : () -> ()
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    "memref.copy"(%a, %t) : (memref<8xf32>, memref<8xf32>) -> ()
    scf.yield %acc : f32
  }
  scf.if %flag {
    "memref.copy"(%t, %a) : (memref<8xf32>, memref<8xf32>) -> ()
  }
  memref.dealloc %t : memref<8xf32>
  func.return %s : f32
}
func.func private @helper() {
  func.return
}

// -----

// A kernel that `outline-kernels` moved into a function of its own (`mlc.kernel`) is
// timed at each call, with the call's source; its body is not instrumented. A call of
// any other function is not timed.

// CHECK-LABEL: llvm.mlir.global external constant @__mlc_profile_kernels
// CHECK-SAME:    \22id\22:0,\22function\22:\22layers\22,\22kind\22:\22func.call\22,\22sources\22:[\22layer1\22]
// CHECK-SAME:    \22id\22:1,\22function\22:\22layers\22,\22kind\22:\22func.call\22,\22sources\22:[\22layer2\22]
// CHECK-NOT:     \22id\22:2
// CHECK-LABEL: func.func @layers
// CHECK:         func.call @mlc_profile_begin(%{{.+}})
// CHECK-NEXT:    func.call @layers_kernel0(%{{.+}}) : (memref<8xf32>) -> ()
// CHECK-NEXT:    func.call @mlc_profile_end(%{{.+}})
// CHECK:         func.call @mlc_profile_begin(%{{.+}})
// CHECK-NEXT:    func.call @layers_kernel0(%{{.+}}) : (memref<8xf32>) -> ()
// CHECK-NEXT:    func.call @mlc_profile_end(%{{.+}})
// CHECK-NEXT:    func.call @helper(%{{.+}}) : (memref<8xf32>) -> ()
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @layers_kernel0
// CHECK-NOT:     mlc_profile
// CHECK:         func.return
func.func @layers(%a: memref<8xf32>, %b: memref<8xf32>) {
  func.call @layers_kernel0(%a) : (memref<8xf32>) -> () loc("layer1")
  func.call @layers_kernel0(%b) : (memref<8xf32>) -> () loc("layer2")
  func.call @helper(%a) : (memref<8xf32>) -> () loc("layer3")
  func.return
}
func.func private @layers_kernel0(%x: memref<8xf32>) attributes {mlc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  func.return
}
func.func private @helper(%x: memref<8xf32>) {
  func.return
}

// -----

// A function called only from inside kernels (a matmul's B packer, called in its
// parallel loop) is part of those kernels: its own loops are not timed, which would count
// their time twice, on the pool's threads at once. A function also called outside any
// kernel keeps its kernels.

// CHECK-LABEL: llvm.mlir.global external constant @__mlc_profile_kernels
// CHECK-SAME:    \22id\22:0,\22function\22:\22matmul\22,\22kind\22:\22scf.parallel\22
// CHECK-SAME:    \22id\22:1,\22function\22:\22fill_rows\22,\22kind\22:\22scf.for\22
// CHECK-NOT:     \22id\22:2
// CHECK-LABEL: func.func @matmul
// CHECK:         func.call @mlc_profile_begin
// CHECK-NEXT:    "scf.parallel"
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index):
// CHECK-NEXT:      func.call @pack_panel
// CHECK:         func.call @mlc_profile_end
// CHECK-NEXT:    func.call @fill_rows
// CHECK-LABEL: func.func private @pack_panel
// CHECK-NOT:     mlc_profile
// CHECK:         func.return
// CHECK-LABEL: func.func private @fill_rows
// CHECK:         func.call @mlc_profile_begin
func.func @matmul(%b: memref<8x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%p: index):
    func.call @pack_panel(%b, %p) : (memref<8x8xf32>, index) -> ()
    func.call @fill_rows(%b) : (memref<8x8xf32>) -> ()
    scf.reduce
  }) : (index, index, index) -> ()
  func.call @fill_rows(%b) : (memref<8x8xf32>) -> ()
  func.return
}
func.func private @pack_panel(%b: memref<8x8xf32>, %p: index) attributes {no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c8 step %c1 {
    memref.store %z, %b[%k, %p] : memref<8x8xf32>
  }
  func.return
}
func.func private @fill_rows(%b: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 1.0 : f32
  scf.for %k = %c0 to %c8 step %c1 {
    memref.store %z, %b[%k, %c0] : memref<8x8xf32>
  }
  func.return
}

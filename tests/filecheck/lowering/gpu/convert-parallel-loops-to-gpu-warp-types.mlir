// RUN: mlc-opt %s --split-input-file -p 'convert-parallel-loops-to-gpu{vector-lanes=false}' | filecheck %s

// Row reductions of integers and f64 are shared by a warp too: an i64 sum shuffles
// its two 32-bit halves at each of the five butterfly steps (ten i32 shuffles).

// CHECK-LABEL: func.func @sum_i64(%x: memref<?x300xi64>, %out: memref<?xi64>, %m: index)
// CHECK:         "gpu.launch"
// CHECK:           %[[LOW:.+]] = arith.trunci %[[PART:.+]] : i64 to i32
// CHECK-NEXT:      %[[LOW16:.+]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"(%{{.+}}, %[[LOW]], %{{.+}}, %{{.+}})
// CHECK:           %[[HIGH:.+]] = arith.shrui %[[PART]], %{{.+}} : i64
// CHECK-NEXT:      %[[HIGH32:.+]] = arith.trunci %[[HIGH]] : i64 to i32
// CHECK-NEXT:      %[[HIGH16:.+]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"(%{{.+}}, %[[HIGH32]], %{{.+}}, %{{.+}})
// CHECK-NEXT:      %[[UP:.+]] = arith.extui %[[HIGH16]] : i32 to i64
// CHECK-NEXT:      %[[SHIFTED:.+]] = arith.shli %[[UP]], %{{.+}} : i64
// CHECK-NEXT:      %[[DOWN:.+]] = arith.extui %[[LOW16]] : i32 to i64
// CHECK-NEXT:      %[[THEIRS:.+]] = arith.ori %[[DOWN]], %[[SHIFTED]] : i64
// CHECK-NEXT:      arith.addi %[[PART]], %[[THEIRS]] : i64
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %{{.+}}, %out[%{{.+}}] : memref<?xi64>
func.func @sum_i64(%x: memref<?x300xi64>, %out: memref<?xi64>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0 : i64
    %s = scf.for %j = %c0 to %c300 step %c1 iter_args(%a = %zero) -> (i64) {
      %v = memref.load %x[%i, %j] : memref<?x300xi64>
      %n = arith.addi %v, %a : i64
      scf.yield %n : i64
    }
    memref.store %s, %out[%i] : memref<?xi64>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// An i32 signed max starting from a loaded value: lane 0 starts from it, the other
// lanes from the identity, i32's least value; one i32 shuffle a step.

// CHECK-LABEL: func.func @max_i32
// CHECK:         %[[START:.+]] = memref.load %out
// CHECK:         %[[LEAST:.+]] = arith.constant -2147483648 : i32
// CHECK-NEXT:    %[[INIT:.+]] = arith.select %{{.+}}, %[[START]], %[[LEAST]] : i32
// CHECK-COUNT-5: llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"
// CHECK-NOT:     llvm.call_intrinsic
func.func @max_i32(%x: memref<8x100xi32>, %out: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %init = memref.load %out[%i] : memref<8xi32>
    %s = scf.for %j = %c0 to %c100 step %c1 iter_args(%a = %init) -> (i32) {
      %v = memref.load %x[%i, %j] : memref<8x100xi32>
      %n = arith.maxsi %v, %a : i32
      scf.yield %n : i32
    }
    memref.store %s, %out[%i] : memref<8xi32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// An f64 max shuffles its bits as two 32-bit halves; its identity is -inf.

// CHECK-LABEL: func.func @max_f64
// CHECK:         arith.constant 0xfff0000000000000 : f64
// CHECK:         %[[BITS:.+]] = arith.bitcast %{{.+}} : f64 to i64
// CHECK-NEXT:    arith.trunci %[[BITS]] : i64 to i32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"
// CHECK:         %[[BACK:.+]] = arith.bitcast %{{.+}} : i64 to f64
// CHECK-NEXT:    arith.maximumf %{{.+}}, %[[BACK]] : f64
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"
func.func @max_f64(%x: memref<7x?xf64>, %out: memref<7xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  "scf.parallel"(%c0, %c7, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %init = memref.load %out[%i] : memref<7xf64>
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%a = %init) -> (f64) {
      %v = memref.load %x[%i, %j] : memref<7x?xf64>
      %m = arith.maximumf %v, %a : f64
      scf.yield %m : f64
    }
    memref.store %s, %out[%i] : memref<7xf64>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// An i1 reduction (an `any`) is not shared: a thread a row, no shuffle.

// CHECK-LABEL: func.func @any_i1
// CHECK-NOT:     llvm.nvvm.shfl
func.func @any_i1(%x: memref<4x100xi1>, %out: memref<4xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c100 = arith.constant 100 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %false = arith.constant false
    %s = scf.for %j = %c0 to %c100 step %c1 iter_args(%a = %false) -> (i1) {
      %v = memref.load %x[%i, %j] : memref<4x100xi1>
      %n = arith.maxui %v, %a : i1
      scf.yield %n : i1
    }
    memref.store %s, %out[%i] : memref<4xi1>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A select by key (a gather's index check: the index farthest out of range, key
// `i ^ (i >> 63)`) of a 1-D run-time count: a warp shares it, every lane from the
// loop's own start (no identity), and two lanes merge by the same rule, the key chain
// cloned for each side: the other lane's key compared with its own (`sgt`), then select.

// CHECK-LABEL: func.func @farthest_index(%ids: memref<?xi64>, %out: memref<i64>, %n: index)
// CHECK:         "gpu.launch"
// CHECK-NOT:       arith.select %{{.+}}, %zero, %{{.+}} : i64
// CHECK:           %w = scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (i64) {
// CHECK:           }
// CHECK:           %[[THEIRS:.+]] = arith.ori
// CHECK-NEXT:      %[[MS:.+]] = arith.shrsi %w, %c63 : i64
// CHECK-NEXT:      %[[MK:.+]] = arith.xori %w, %[[MS]] : i64
// CHECK-NEXT:      %[[TS:.+]] = arith.shrsi %[[THEIRS]], %c63 : i64
// CHECK-NEXT:      %[[TK:.+]] = arith.xori %[[THEIRS]], %[[TS]] : i64
// CHECK-NEXT:      %[[WINS:.+]] = arith.cmpi sgt, %[[TK]], %[[MK]] : i64
// CHECK-NEXT:      arith.select %[[WINS]], %[[THEIRS]], %w : i64
// CHECK-COUNT-8:   llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %{{.+}}, %out[] : memref<i64>
func.func @farthest_index(%ids: memref<?xi64>, %out: memref<i64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0 : i64
    %c63 = arith.constant 63 : i64
    %w = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
      %v = memref.load %ids[%k] : memref<?xi64>
      %vs = arith.shrsi %v, %c63 : i64
      %vk = arith.xori %v, %vs : i64
      %as = arith.shrsi %acc, %c63 : i64
      %ak = arith.xori %acc, %as : i64
      %far = arith.cmpi sgt, %vk, %ak : i64
      %next = arith.select %far, %v, %acc : i64
      scf.yield %next : i64
    }
    memref.store %w, %out[] : memref<i64>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Not selects by key a warp can share: the element's key computed otherwise than the
// running value's (62 against 63), and the running value's key also stored.

// CHECK-LABEL: func.func @keys_differ
// CHECK-NOT:     llvm.nvvm.shfl
// CHECK-LABEL: func.func @key_stored
// CHECK-NOT:     llvm.nvvm.shfl
func.func @keys_differ(%ids: memref<?xi64>, %out: memref<i64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0 : i64
    %c62 = arith.constant 62 : i64
    %c63 = arith.constant 63 : i64
    %w = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
      %v = memref.load %ids[%k] : memref<?xi64>
      %vs = arith.shrsi %v, %c62 : i64
      %vk = arith.xori %v, %vs : i64
      %as = arith.shrsi %acc, %c63 : i64
      %ak = arith.xori %acc, %as : i64
      %far = arith.cmpi sgt, %vk, %ak : i64
      %next = arith.select %far, %v, %acc : i64
      scf.yield %next : i64
    }
    memref.store %w, %out[] : memref<i64>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
func.func @key_stored(%ids: memref<?xi64>, %out: memref<i64>, %keys: memref<?xi64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %c1, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0 : i64
    %c63 = arith.constant 63 : i64
    %w = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
      %v = memref.load %ids[%k] : memref<?xi64>
      %vs = arith.shrsi %v, %c63 : i64
      %vk = arith.xori %v, %vs : i64
      %as = arith.shrsi %acc, %c63 : i64
      %ak = arith.xori %acc, %as : i64
      memref.store %ak, %keys[%k] : memref<?xi64>
      %far = arith.cmpi sgt, %vk, %ak : i64
      %next = arith.select %far, %v, %acc : i64
      scf.yield %next : i64
    }
    memref.store %w, %out[] : memref<i64>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A bf16 sum stays on a thread a row (its carry is widened to f32 when lowered): shared
// by a warp, as a reduction or as a scan, its partial sums would be rounded to bf16 at
// every step. A bf16 max is exact, and is shared.

// CHECK-LABEL: func.func @sum_bf16
// CHECK:         "gpu.launch"
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:           scf.for {{.*}} -> (bf16)
// CHECK-NOT:       llvm.call_intrinsic
// CHECK:         func.return
// CHECK-LABEL: func.func @max_bf16
// CHECK:         "gpu.launch"
// CHECK-COUNT-5:   llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.i32"
func.func @sum_bf16(%x: memref<?x300xbf16>, %out: memref<?xbf16>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0.000000e+00 : bf16
    %s = scf.for %j = %c0 to %c300 step %c1 iter_args(%a = %zero) -> (bf16) {
      %v = memref.load %x[%i, %j] : memref<?x300xbf16>
      %n = arith.addf %a, %v : bf16
      scf.yield %n : bf16
    }
    memref.store %s, %out[%i] : memref<?xbf16>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
func.func @max_bf16(%x: memref<?x300xbf16>, %out: memref<?xbf16>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %lowest = arith.constant 0xFF80 : bf16
    %s = scf.for %j = %c0 to %c300 step %c1 iter_args(%a = %lowest) -> (bf16) {
      %v = memref.load %x[%i, %j] : memref<?x300xbf16>
      %n = arith.maximumf %a, %v : bf16
      scf.yield %n : bf16
    }
    memref.store %s, %out[%i] : memref<?xbf16>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

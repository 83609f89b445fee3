// RUN: mlc-opt %s --split-input-file -p convert-parallel-loops-to-gpu | filecheck %s

// A row scan (ml.cumsum's running total in iter_args, each step's sum stored) takes a
// warp a row: the host launches 32 threads a row; the warp walks the row in passes of
// 32 chunks (a static row of 100: 4 elements a lane, one pass), each lane sums its chunk,
// a Kogge-Stone scan of five shfl.sync.up steps combines the lanes' sums, the lane
// scans its chunk again from the total of the lanes below (one more shfl.sync.up, lane 0
// the carry alone), the pass's total comes from lane 31 (shfl.sync.idx) and lane 0
// alone stores the row's total. Not a reduction: no butterfly.

// CHECK-LABEL: func.func @inclusive_rows(%x: memref<4x100xf32>, %out: memref<4x100xf32>, %acc: memref<4x1xf32>)
// CHECK:         %[[WARP:.+]] = arith.constant 32 : index
// CHECK:         %[[WORKERS:.+]] = arith.muli %{{.+}}, %[[WARP]] : index
// CHECK:         "gpu.launch"
// CHECK:           %[[LANE:.+]] = arith.remui %{{.+}}, %{{.+}} : index
// CHECK:           %i = arith.addi
// CHECK:           %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK:           %[[CHUNK:.+]] = arith.constant 4 : index
// CHECK:           %[[TOTAL:.+]] = scf.for %[[BASE:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[CARRY:.+]] = %{{.+}}) -> (f32) {
// CHECK:             %[[START:.+]] = arith.addi %[[BASE]], %{{.+}} : index
// CHECK:             %[[END:.+]] = arith.minsi
// CHECK:             %[[PART:.+]] = scf.for %{{.+}} = %[[START]] to %[[END]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32) {
// CHECK-NOT:           memref.store
// CHECK:               scf.yield
// CHECK-NEXT:        }
// CHECK:             llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.f32"(%{{.+}}, %[[PART]], %{{.+}}, %{{.+}})
// CHECK-COUNT-4:     llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.f32"
// CHECK:             %[[BELOW:.+]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.f32"
// CHECK-NEXT:        %[[LOWER:.+]] = arith.select %[[FIRST]], %{{.+}}, %[[BELOW]] : f32
// CHECK-NEXT:        %[[PREFIX:.+]] = arith.addf %[[CARRY]], %[[LOWER]] : f32
// CHECK-NEXT:        scf.for %[[J:.+]] = %[[START]] to %[[END]] step %{{.+}} iter_args(%{{.+}} = %[[PREFIX]]) -> (f32) {
// CHECK:               memref.store %{{.+}}, %out[%i, %[[J]]] : memref<4x100xf32>
// CHECK:             }
// CHECK:             %[[LAST:.+]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.idx.f32"
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addf %[[CARRY]], %[[LAST]] : f32
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.if %[[FIRST]] {
// CHECK-NEXT:        memref.store %[[TOTAL]], %acc[%i, %{{.+}}] : memref<4x1xf32>
// CHECK-NOT:     shfl.sync.bfly
func.func @inclusive_rows(%x: memref<4x100xf32>, %out: memref<4x100xf32>, %acc: memref<4x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c100 = arith.constant 100 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0.000000e+00 : f32
    %total = scf.for %j = %c0 to %c100 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<4x100xf32>
      %n = arith.addf %a, %v : f32
      memref.store %n, %out[%i, %j] : memref<4x100xf32>
      scf.yield %n : f32
    }
    memref.store %total, %acc[%i, %c0] : memref<4x1xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// An exclusive i64 scan of a dynamic row: each shuffle moves the two 32-bit halves; the
// lane's chunk is ceil(n / 32) clamped to [1, 8], computed at run time.

// CHECK-LABEL: func.func @exclusive_i64(%x: memref<?x?xi64>, %out: memref<?x?xi64>, %m: index, %n: index)
// CHECK:         "gpu.launch"
// CHECK:           %[[COUNT:.+]] = arith.divsi %{{.+}}, %{{.+}} : index
// CHECK:           %[[PER_LANE:.+]] = arith.divsi %{{.+}}, %{{.+}} : index
// CHECK:           %[[CLAMPED:.+]] = arith.minsi %[[PER_LANE]], %{{.+}} : index
// CHECK:           %[[CHUNK:.+]] = arith.maxsi %[[CLAMPED]], %{{.+}} : index
// CHECK:           scf.for
// CHECK:             %[[PART:.+]] = scf.for
// CHECK:             %[[LOW:.+]] = arith.trunci %[[PART]] : i64 to i32
// CHECK-NEXT:        llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.i32"(%{{.+}}, %[[LOW]],
// CHECK:             %[[HIGH:.+]] = arith.shrui %[[PART]], %{{.+}} : i64
// CHECK-NEXT:        %[[HIGH32:.+]] = arith.trunci %[[HIGH]] : i64 to i32
// CHECK-NEXT:        llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.i32"(%{{.+}}, %[[HIGH32]],
// CHECK-COUNT-10:    llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.i32"
// CHECK-COUNT-2:     llvm.call_intrinsic "llvm.nvvm.shfl.sync.idx.i32"
// CHECK-NOT:         llvm.call_intrinsic
func.func @exclusive_i64(%x: memref<?x?xi64>, %out: memref<?x?xi64>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0 : i64
    %total = scf.for %j = %c0 to %n step %c1 iter_args(%a = %zero) -> (i64) {
      %v = memref.load %x[%i, %j] : memref<?x?xi64>
      %s = arith.addi %a, %v : i64
      memref.store %a, %out[%i, %j] : memref<?x?xi64>
      scf.yield %s : i64
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// An f64 scan shuffles its bits as an i64, two 32-bit halves.

// CHECK-LABEL: func.func @f64_rows
// CHECK:         %[[BITS:.+]] = arith.bitcast %{{.+}} : f64 to i64
// CHECK-NEXT:    arith.trunci %[[BITS]] : i64 to i32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.i32"
// CHECK:         arith.bitcast %{{.+}} : i64 to f64
func.func @f64_rows(%x: memref<3x50xf64>, %out: memref<3x50xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c50 = arith.constant 50 : index
  "scf.parallel"(%c0, %c3, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0.000000e+00 : f64
    %total = scf.for %j = %c0 to %c50 step %c1 iter_args(%a = %zero) -> (f64) {
      %v = memref.load %x[%i, %j] : memref<3x50xf64>
      %s = arith.addf %a, %v : f64
      memref.store %s, %out[%i, %j] : memref<3x50xf64>
      scf.yield %s : f64
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// Not scans a warp can split: a step whose element depends on the running total (a
// recurrence), and a running product. Each stays a thread a row: no shuffles.

// CHECK-LABEL: func.func @recurrence
// CHECK-NOT:     llvm.nvvm.shfl
// CHECK:         func.func @product
// CHECK-NOT:     llvm.nvvm.shfl
func.func @recurrence(%x: memref<4x64xf32>, %out: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %zero = arith.constant 0.000000e+00 : f32
    %total = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      %w = arith.mulf %v, %a : f32
      %s = arith.addf %a, %w : f32
      memref.store %s, %out[%i, %j] : memref<4x64xf32>
      scf.yield %s : f32
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
func.func @product(%x: memref<4x64xf32>, %out: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %one = arith.constant 1.000000e+00 : f32
    %total = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %one) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      %s = arith.mulf %a, %v : f32
      memref.store %s, %out[%i, %j] : memref<4x64xf32>
      scf.yield %s : f32
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

// A scan down the columns (the loop's index in the first index): with many columns
// (8192) a thread a column, whose neighbours read neighbouring elements; with a few
// (static, at most 4096: here 3) a warp a column all the same.

// CHECK-LABEL: func.func @down_many_columns
// CHECK-NOT:     llvm.nvvm.shfl
// CHECK-LABEL: func.func @down_few_columns
// CHECK:         llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.f32"
func.func @down_many_columns(%x: memref<64x8192xf32>, %out: memref<64x8192xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c8192 = arith.constant 8192 : index
  "scf.parallel"(%c0, %c8192, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %zero = arith.constant 0.000000e+00 : f32
    %total = scf.for %i = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<64x8192xf32>
      %n = arith.addf %a, %v : f32
      memref.store %n, %out[%i, %j] : memref<64x8192xf32>
      scf.yield %n : f32
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
func.func @down_few_columns(%x: memref<4000x3xf32>, %out: memref<4000x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4000 = arith.constant 4000 : index
  "scf.parallel"(%c0, %c3, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %zero = arith.constant 0.000000e+00 : f32
    %total = scf.for %i = %c0 to %c4000 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%i, %j] : memref<4000x3xf32>
      %n = arith.addf %a, %v : f32
      memref.store %n, %out[%i, %j] : memref<4000x3xf32>
      scf.yield %n : f32
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// RUN: mlc-opt %s --split-input-file -p convert-parallel-loops-to-gpu | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-parallel-loops-to-gpu | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-parallel-loops-to-gpu --print-debuginfo | filecheck %s --check-prefix=LOC

// An elementwise loop: each thread takes four consecutive iterations of the last dim
// (the grid counts ceil(n / 4) per row). Where the four fit in the row and every
// contiguous buffer is 16-byte aligned with rows of a multiple of 4 floats, the
// loads and the store are vector<4xf32> accesses with alignment 16, and the body runs
// once per lane; the row's bias (which ignores the last index) is read once.
// Otherwise each lane runs the scalar body under its own bound check.

// CHECK-LABEL: func.func @bias_add(%x: memref<?x?xf32>, %bias: memref<?xf32>, %out: memref<?x?xf32>, %m: index, %n: index)
// CHECK:         %[[FOUR:.+]] = arith.constant 4 : index
// CHECK:         %[[QUADS:.+]] = arith.divui %{{.+}}, %[[FOUR]] : index
// CHECK:         %[[TOTAL:.+]] = arith.muli %{{.+}}, %[[QUADS]] : index
// CHECK:         "gpu.launch"
// CHECK:           scf.if
// CHECK:             arith.remui %{{.+}}, %[[QUADS]] : index
// CHECK:             %[[L4:.+]] = arith.constant 4 : index
// CHECK-NEXT:        %[[J0:.+]] = arith.muli %{{.+}}, %[[L4]] : index
// CHECK:             %[[END:.+]] = arith.addi %[[J0]], %{{.+}} : index
// CHECK:             %[[FITS:.+]] = arith.cmpi ule, %[[END]], %{{.+}} : index
// CHECK:             "memref.extract_aligned_pointer_as_index"(%x)
// CHECK:             "memref.extract_aligned_pointer_as_index"(%out)
// CHECK-NOT:         "memref.extract_aligned_pointer_as_index"(%bias)
// CHECK:             scf.if %{{.+}} {
// CHECK:               %[[V:.+]] = vector.load %x[%{{.+}}, %[[J0]]] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-COUNT-4:       vector.extract %[[V]]
// CHECK-NEXT:          %[[B:.+]] = memref.load %bias[%{{.+}}] : memref<?xf32>
// CHECK-COUNT-4:       arith.addf %{{.+}}, %[[B]] : f32
// CHECK:               vector.broadcast
// CHECK-COUNT-3:       vector.insert
// CHECK-NEXT:          vector.store %{{.+}}, %out[%{{.+}}, %[[J0]]] {alignment = 16 : i64} : memref<?x?xf32>, vector<4xf32>
// CHECK-NEXT:        } else {
// CHECK-COUNT-4:       arith.cmpi ult, %{{.+}}, %{{.+}} : index
// CHECK-NOT:           vector.
// CHECK:             }
// LOC:           vector.load {{.*}} loc("bias.py":2:1)
// LOC:           arith.addf {{.*}} loc("bias.py":3:1)
// LOC:           vector.store {{.*}} loc("bias.py":2:1)
func.func @bias_add(%x: memref<?x?xf32>, %bias: memref<?xf32>, %out: memref<?x?xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %c0, %m, %n, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %b = memref.load %bias[%i] : memref<?xf32>
    %s = arith.addf %v, %b : f32 loc("bias.py":3:1)
    memref.store %s, %out[%i, %j] : memref<?x?xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> () loc("bias.py":2:1)
  func.return
}

// -----

// Left one iteration per thread: f64 buffers, a transposed read (the last index in
// another position), a loop whose last dim starts at 1, and a body with a loop.

// CHECK-LABEL: func.func @scalar_only
// CHECK-NOT:     vector.
// CHECK-NOT:     extract_aligned_pointer
func.func @scalar_only(%a: memref<?xf64>, %t: memref<?x?xf32>, %o: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %a[%i] : memref<?xf64>
    memref.store %v, %a[%i] : memref<?xf64>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %n, %n, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %t[%j, %i] : memref<?x?xf32>
    memref.store %v, %o[%i, %j] : memref<?x?xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  "scf.parallel"(%c1, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %o[%c0, %i] : memref<?x?xf32>
    memref.store %v, %o[%c0, %i] : memref<?x?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
      scf.yield %k : index
    }
    %f = arith.index_cast %s : index to i64
    %v = arith.sitofp %f : i64 to f32
    memref.store %v, %o[%c0, %i] : memref<?x?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

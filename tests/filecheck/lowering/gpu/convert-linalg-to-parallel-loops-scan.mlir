// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops | mlc-opt --split-input-file --verify-roundtrip > /dev/null

// A scan generic (ml.cumsum's: the running total at a map that ignores the reduction
// dim, the sums at one that reads it) carries its total in iter_args from its fill's
// constant (the fill goes), stores each step's sum inside the loop (the total before
// the element: exclusive) and the total once after.

// CHECK-LABEL: func.func @exclusive_scan(%x: memref<?x?xi64>) -> memref<?x?xi64>
// CHECK:         %[[ACC:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x1xi64>
// CHECK-NOT:     "scf.parallel"
// CHECK:         %[[OUT:.+]] = memref.alloc
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^{{.+}}(%[[I:.+]]: index):
// CHECK:           %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK:           %[[TOTAL:.+]] = scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[ZERO]]) -> (i64) {
// CHECK-NEXT:        %[[X:.+]] = memref.load %x[%[[I]], %[[J]]] : memref<?x?xi64>
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addi %[[A]], %[[X]] : i64
// CHECK-NEXT:        memref.store %[[A]], %[[OUT]][%[[I]], %[[J]]] : memref<?x?xi64>
// CHECK-NEXT:        scf.yield %[[NEXT]] : i64
// CHECK-NEXT:      }
// CHECK:           memref.store %[[TOTAL]], %[[ACC]][%[[I]], %{{.+}}] : memref<?x1xi64>
// CHECK-NEXT:      scf.reduce
// CHECK-NOT:     "scf.parallel"
func.func @exclusive_scan(%x: memref<?x?xi64>) -> memref<?x?xi64> {
  %0 = arith.constant 0 : index
  %1 = memref.dim %x, %0 : memref<?x?xi64>
  %2 = memref.alloc(%1) {alignment = 64 : i64} : memref<?x1xi64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%2 : memref<?x1xi64>) {
  ^bb0(%3: i64):
    %4 = arith.constant 0 : i64
    linalg.yield %4 : i64
  }
  %5 = arith.constant 1 : index
  %6 = memref.dim %x, %5 : memref<?x?xi64>
  %7 = memref.alloc(%1, %6) {alignment = 64 : i64} : memref<?x?xi64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x?xi64>) outs(%2, %7 : memref<?x1xi64>, memref<?x?xi64>) {
  ^bb0(%8: i64, %9: i64, %10: i64):
    %11 = arith.addi %9, %8 : i64
    linalg.yield %11, %9 : i64, i64
  }
  memref.dealloc %2 : memref<?x1xi64>
  func.return %7 : memref<?x?xi64>
}

// -----

// The scan axis first (axis 0 of a 2-D input): the parallel loop takes the columns, the
// scan walks down one. Without a fill before it, the total starts from a load of its
// buffer. A step output the body reads is loaded each step.

// CHECK-LABEL: func.func @scan_down_columns(%x: memref<5x3xf32>, %acc: memref<1x3xf32>, %out: memref<5x3xf32>)
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^{{.+}}(%[[J:.+]]: index):
// CHECK:           %[[START:.+]] = memref.load %acc[%{{.+}}, %[[J]]] : memref<1x3xf32>
// CHECK:           %[[TOTAL:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[START]]) -> (f32) {
// CHECK-NEXT:        %[[X:.+]] = memref.load %x[%[[I]], %[[J]]] : memref<5x3xf32>
// CHECK-NEXT:        %[[OLD:.+]] = memref.load %out[%[[I]], %[[J]]] : memref<5x3xf32>
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addf %[[A]], %[[X]] : f32
// CHECK-NEXT:        %[[KEPT:.+]] = arith.maximumf %[[NEXT]], %[[OLD]] : f32
// CHECK-NEXT:        memref.store %[[KEPT]], %out[%[[I]], %[[J]]] : memref<5x3xf32>
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK:           memref.store %[[TOTAL]], %acc[%{{.+}}, %[[J]]] : memref<1x3xf32>
func.func @scan_down_columns(%x: memref<5x3xf32>, %acc: memref<1x3xf32>, %out: memref<5x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (0, d0)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<5x3xf32>) outs(%acc, %out : memref<1x3xf32>, memref<5x3xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %n = arith.addf %t, %a : f32
    %m = arith.maximumf %n, %o : f32
    linalg.yield %n, %m : f32, f32
  }
  func.return
}

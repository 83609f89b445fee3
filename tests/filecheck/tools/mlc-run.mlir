// RUN: mlc-run %s --random --seed 7 | filecheck %s
// RUN: mlc-run %s --entry scale --random --seed 7 --dim 5 --repeat 3 | filecheck %s --check-prefix=DYN
// RUN: mlc-run %s --entry scale --random --shape x=2x3 --shape 1=3 | filecheck %s --check-prefix=SHAPE
// RUN: mlc-run %s --entry scale --random --seed 7 --dim 5 --specialize --repeat 2 | filecheck %s --check-prefix=SPEC
// RUN: rm -f %t.npz && mlc-run %s --random --save %t.npz && test -s %t.npz

// `main` runs by default; one line per result, then the compile and run times.
// CHECK:      result0: shape=(2, 3) dtype=float32 sum={{.+}} first=[{{.+}}, ...]
// CHECK-NEXT: result1: shape=(2, 3) dtype=bool sum={{[0-6]}} first=[{{(True|False), }}{{.+}}]
// CHECK-NEXT: compile: {{[0-9.]+}} ms
// CHECK-NEXT: run: {{[0-9.]+}} ms (median of 1)
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  %0 = ml.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ml.cmp "gt", %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xi1>
}

// A dynamic dim takes --dim's size, or --shape gives the whole shape (by name or position).
// DYN:        result0: shape=(5, 3) dtype=int32
// DYN:        run: {{[0-9.]+}} ms (median of 3)
// SHAPE:      result0: shape=(2, 3) dtype=int32
// --specialize: the same results, from a build for the inputs' shapes (here 5x3 and 3).
// SPEC:       result0: shape=(5, 3) dtype=int32
// SPEC:       run: {{[0-9.]+}} ms (median of 2)
// SPEC-NEXT:  specialize: 2 of 2 runs on a static build
func.func @scale(%x: tensor<?x3xi32>, %k: tensor<3xi32>) -> tensor<?x3xi32> {
  %0 = ml.mul %x, %k : (tensor<?x3xi32>, tensor<3xi32>) -> tensor<?x3xi32>
  func.return %0 : tensor<?x3xi32>
}

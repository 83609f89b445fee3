// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=1}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=1 shared-micro-kernels=false}' \
// RUN:   | filecheck %s --check-prefix=INLINE

// Two matmuls of different sizes, one reading A transposed, N = 10 ending inside a
// panel, the second after a zero fill: both call the one micro-kernel function of
// their kind (f32, MR x NR = 2 x 8, 4 lanes, A read in place), defined once before the
// function (`no_inline`: LLVM keeps one copy). It takes A, the panels and C as flat
// buffers with offsets and strides, the rows and columns left, and whether to add to C: the FMA loop, then the store
// or add of each row below M, whole vectors for a full tile, masked ones at N's edge.
// The first matmul always adds (`sge` of k0 and 0); the second stores its first K
// block (`ne`: its C held zeros, the fill is dropped).

// CHECK:       func.func private @mlc_micro_kernel_f32_2x8v4(%[[A:.+]]: memref<?xf32>, %[[AOFF:.+]]: index, %[[AROW:.+]]: index, %[[AK:.+]]: index, %[[ROWS:.+]]: index, %[[P:.+]]: memref<?xf32>, %[[POFF:.+]]: index, %[[DEPTH:.+]]: index, %[[C:.+]]: memref<?xf32>, %[[COFF:.+]]: index, %[[CROW:.+]]: index, %[[COLUMNS:.+]]: index, %[[ADDS:.+]]: i1) attributes {no_inline} {
// CHECK:         scf.for %{{.+}} = %{{.+}} to %[[DEPTH]] step %{{.+}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK-COUNT-2:   vector.load %[[P]][%{{.+}}] : memref<?xf32>, vector<4xf32>
// CHECK:           memref.load %[[A]][%{{.+}}] : memref<?xf32>
// CHECK-COUNT-2:   vector.fma
// CHECK:         scf.if %[[ADDS]] {
// CHECK:           arith.cmpi sle, %{{.+}}, %[[COLUMNS]] : index
// CHECK:             arith.cmpi slt, %{{.+}}, %[[ROWS]] : index
// CHECK:               vector.load %[[C]]
// CHECK:               arith.addf
// CHECK:               vector.store {{.*}}, %[[C]]
// CHECK:             vector.create_mask
// CHECK:               vector.maskedload %[[C]]
// CHECK:               vector.maskedstore %[[C]]
// CHECK:         } else {
// CHECK-NOT:       vector.load %[[C]]
// CHECK:           vector.store {{.*}}, %[[C]]
// CHECK:           vector.maskedstore %[[C]]
// CHECK:         func.return
// CHECK-NOT:   func.func private @mlc_micro_kernel
// CHECK-LABEL: func.func @two_sizes
// CHECK-NOT:     vector.fma
// CHECK:         %[[AF:.+]] = "memref.cast"(%{{.+}}) : (memref<128xf32>) -> memref<?xf32>
// CHECK:         "scf.parallel"
// CHECK:           %[[FIRST:.+]] = arith.cmpi sge, %{{.+}}, %{{.+}} : index
// CHECK:           func.call @mlc_micro_kernel_f32_2x8v4(%[[AF]], {{.*}}, %[[FIRST]])
// CHECK-NOT:     linalg.generic
// CHECK:         %[[XF:.+]] = "memref.cast"(%{{.+}}) : (memref<80xf32>) -> memref<?xf32>
// CHECK:         "scf.parallel"
// CHECK:           %[[LATER:.+]] = arith.cmpi ne, %{{.+}}, %{{.+}} : index
// CHECK:           func.call @mlc_micro_kernel_f32_2x8v4(%[[XF]], {{.*}}, %[[LATER]])
// CHECK-NOT:     vector.fma

// INLINE-NOT:  func.func private @mlc_micro_kernel
// INLINE-LABEL: func.func @two_sizes
// INLINE-NOT:    func.call
// INLINE:        vector.fma
// INLINE-NOT:    func.call
// INLINE:        vector.fma
// INLINE-NOT:    func.call

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#at = affine_map<(d0, d1, d2) -> (d1, d0)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @two_sizes(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>, %x: memref<16x5xf32>, %w: memref<16x10xf32>, %y: memref<5x10xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%y : memref<5x10xf32>) {
  ^bb0(%z: f32):
    %zero = arith.constant 0.0 : f32
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<16x5xf32>, memref<16x10xf32>) outs(%y : memref<5x10xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Another element type is another kind: f64 gets its own function.

// CHECK:       func.func private @mlc_micro_kernel_f64_2x8v4(%{{.+}}: memref<?xf64>,
// CHECK:         vector.fma {{.*}} : vector<4xf64>
// CHECK-LABEL: func.func @f64
// CHECK:         func.call @mlc_micro_kernel_f64_2x8v4(

func.func @f64(%a: memref<3x5xf64>, %b: memref<5x8xf64>, %c: memref<3x8xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<3x5xf64>, memref<5x8xf64>) outs(%c : memref<3x8xf64>) {
  ^bb0(%p: f64, %q: f64, %r: f64):
    %m = arith.mulf %p, %q : f64
    %s = arith.addf %r, %m : f64
    linalg.yield %s : f64
  }
  func.return
}

// -----

// C a strided view (a subview of a wider buffer): not one flat buffer of its own
// rows, so the kernel keeps its micro-kernel inline and defines no such function.

// CHECK-NOT:   func.func private @mlc_micro_kernel
// CHECK-LABEL: func.func @strided_c
// CHECK-NOT:     func.call @mlc_micro_kernel
// CHECK:         vector.fma
// CHECK-NOT:     func.call @mlc_micro_kernel

func.func @strided_c(%a: memref<4x6xf32>, %b: memref<6x8xf32>, %wide: memref<4x16xf32>) {
  %c = memref.subview %wide[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<4x6xf32>, memref<6x8xf32>) outs(%c : memref<4x8xf32, strided<[16, 1], offset: 8>>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

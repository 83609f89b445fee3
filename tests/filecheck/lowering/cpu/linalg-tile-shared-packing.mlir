// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=1}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=1 shared-micro-kernels=false}' \
// RUN:   | filecheck %s --check-prefix=INLINE

// Three matmuls: B read along its rows with N = 32 (whole panels) and N = 10 (the last
// panel ends inside), and B read transposed (`x @ v.T`). The first two call the one
// packing function of their kind (f32 panels of NR = 8, 4 lanes, rows), which takes
// B as a flat buffer with its offset and k stride, the panels' buffer and batch, the
// panels to pack and K and N: whole panels a vector at a time, then, decided at run
// time, the last panel's masked copy. The transposed one calls its own kind (`_t`,
// which takes B's column stride too). Both are `no_inline`.

// CHECK:       func.func private @mlc_pack_b_f32_8v4(%[[B:.+]]: memref<?xf32>, %[[OFF:.+]]: index, %[[KS:.+]]: index, %[[P:.+]]: memref<?x?x?x8xf32>, %[[T:.+]]: index, %[[P0:.+]]: index, %[[PEND:.+]]: index, %[[K:.+]]: index, %[[N:.+]]: index) attributes {no_inline} {
// CHECK:         scf.for %{{.+}} = %{{.+}} to %[[K]]
// CHECK:           vector.load %[[B]][%{{.+}}] : memref<?xf32>, vector<4xf32>
// CHECK:           vector.store %{{.+}}, %[[P]][%[[T]], {{.*}}] : memref<?x?x?x8xf32>, vector<4xf32>
// CHECK:         scf.if
// CHECK:             vector.maskedload %[[B]]
// CHECK:         func.return
// CHECK:       func.func private @mlc_micro_kernel_f32_2x8v4(
// CHECK:       func.func private @mlc_pack_b_f32_8v4_t(%{{.+}}: memref<?xf32>, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: memref<?x?x?x8xf32>, {{.*}}) attributes {no_inline} {
// CHECK-LABEL: func.func @three_gemms
// CHECK:         %[[BF:.+]] = "memref.cast"(%{{.+}}) : (memref<512xf32>) -> memref<?xf32>
// CHECK:           func.call @mlc_pack_b_f32_8v4(%[[BF]],
// CHECK:         %[[WF:.+]] = "memref.cast"(%{{.+}}) : (memref<160xf32>) -> memref<?xf32>
// CHECK:           func.call @mlc_pack_b_f32_8v4(%[[WF]],
// CHECK:         %[[VF:.+]] = "memref.cast"(%{{.+}}) : (memref<192xf32>) -> memref<?xf32>
// CHECK:           func.call @mlc_pack_b_f32_8v4_t(%[[VF]],
// CHECK:         func.return

// Without shared functions, each matmul packs its B in place.

// INLINE-NOT:  func.func private
// INLINE-LABEL: func.func @three_gemms
// INLINE-NOT:    func.call
// INLINE:        vector.maskedload
// INLINE-NOT:    func.call

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#bt = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @three_gemms(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>, %x: memref<8x16xf32>, %w: memref<16x10xf32>, %y: memref<8x10xf32>, %v: memref<12x16xf32>, %z: memref<8x12xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<8x16xf32>, memref<16x10xf32>) outs(%y : memref<8x10xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %v : memref<8x16xf32>, memref<12x16xf32>) outs(%z : memref<8x12xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// B a strided view (a subview of a wider buffer): not one flat buffer, so its panels
// are packed in place; the micro-kernel is still shared.

// CHECK-NOT:   func.func private @mlc_pack_b
// CHECK-LABEL: func.func @strided_b
// CHECK-NOT:     func.call @mlc_pack_b
// CHECK:         vector.load %{{.+}} : memref<6x8xf32, strided<[16, 1], offset: 8>>, vector<4xf32>
// CHECK:         func.call @mlc_micro_kernel_f32_2x8v4(

func.func @strided_b(%a: memref<4x6xf32>, %wide: memref<6x16xf32>, %c: memref<4x8xf32>) {
  %b = memref.subview %wide[0, 8] [6, 8] [1, 1] : memref<6x16xf32> to memref<6x8xf32, strided<[16, 1], offset: 8>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<4x6xf32>, memref<6x8xf32, strided<[16, 1], offset: 8>>) outs(%c : memref<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

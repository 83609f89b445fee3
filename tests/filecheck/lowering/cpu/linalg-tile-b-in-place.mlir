// RUN: env MLC_NUM_THREADS=2 mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,16,24 vector-length=4}' | filecheck %s
// RUN: env MLC_NUM_THREADS=2 mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,16,24 vector-length=4 shared-micro-kernels=false}' \
// RUN:   | filecheck %s --check-prefix=INLINE

// A small-M matmul whose B is an argument (a training step's weights, new every call):
// B is not packed, the micro-kernel reads each panel from B itself, its k rows N = 256
// apart (`tiling_model.reads_b_in_place`). The shared micro-kernel of that kind (`_bk`)
// takes the stride of B's k as an argument after the depth, and prefetches into L2
// the row of B some rows ahead at each step. M = 16 fits one block of A (MC = 24):
// the two tasks take all rows and half of the 32 panels each, so each thread reads
// its own columns of B.

// CHECK:       func.func private @mlc_micro_kernel_f32_2x8v4_bk(%{{.+}}: memref<?xf32>, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %[[B:.+]]: memref<?xf32>, %[[BOFF:.+]]: index, %[[DEPTH:.+]]: index, %[[BK:.+]]: index, %{{.+}}: memref<?xf32>, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: i1) attributes {no_inline} {
// CHECK:         scf.for %[[K:.+]] = %{{.+}} to %[[DEPTH]] step %{{.+}} iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK:           %[[TWO:.+]] = arith.constant 2 : i32
// CHECK-NEXT:      %{{.+}} = arith.constant 1 : i32
// CHECK-NEXT:      llvm.call_intrinsic "llvm.prefetch.p0"(%{{.+}}, %{{.+}}, %[[TWO]], %{{.+}})
// CHECK:           %[[ROW:.+]] = arith.muli %[[K]], %[[BK]] : index
// CHECK-NEXT:      %[[AT:.+]] = arith.addi %[[BOFF]], %[[ROW]] : index
// CHECK-NEXT:      %[[V:.+]] = arith.addi %[[AT]], %{{.+}} : index
// CHECK-NEXT:      vector.load %[[B]][%[[V]]] : memref<?xf32>, vector<4xf32>
// CHECK-COUNT-4:   vector.fma
// CHECK:         func.return

// CHECK-LABEL: func.func @step_weights
// CHECK-SAME:    (%{{.+}}: memref<16x256xf32>, %[[W:[a-zA-Z0-9_]+]]: memref<256x256xf32>,
// CHECK-NOT:     memref.alloc
// CHECK:         %[[WF:.+]] = "memref.cast"(%{{.+}}) : (memref<65536xf32>) -> memref<?xf32>
// CHECK:         %[[PANELS:.+]] = arith.ceildivsi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[LAST_ROW:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[ROWS:.+]] = arith.constant 16 : index
// CHECK-NEXT:    %[[GROUPS:.+]] = arith.constant 2 : index
// CHECK:         "scf.parallel"
// CHECK-NOT:       memref.alloc
// CHECK:           func.call @mlc_micro_kernel_f32_2x8v4_bk({{.*}}, %[[WF]], {{.*}})
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return

// INLINE-LABEL: func.func @step_weights
// INLINE-SAME:    (%{{.+}}: memref<16x256xf32>, %[[W:[a-zA-Z0-9_]+]]: memref<256x256xf32>,
// INLINE-NOT:     memref.alloc
// INLINE:         scf.for {{.*}} iter_args
// INLINE:           vector.load %[[W]][%{{.+}}, %{{.+}}] : memref<256x256xf32>, vector<4xf32>
// INLINE:           vector.fma

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @step_weights(%x: memref<16x256xf32>, %w: memref<256x256xf32>, %y: memref<16x256xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<16x256xf32>, memref<256x256xf32>) outs(%y : memref<16x256xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Where B is packed as before: read transposed (B[j, k], its panel's rows would be
// columns of B), more rows than `IN_PLACE_B_ROWS` (272), N ending inside a panel
// (250: the last panel would read past B's rows), and a B too small for its copy to
// matter (16 x 64 x 64).

// CHECK-LABEL: func.func @packed
// CHECK-COUNT-4: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK-NOT:     _bk
// CHECK:         func.return

// INLINE-LABEL: func.func @packed
// INLINE-COUNT-4: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#bt = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @packed(%x: memref<16x256xf32>, %wt: memref<256x256xf32>, %y: memref<16x256xf32>,
                  %xl: memref<272x256xf32>, %w: memref<256x256xf32>, %yl: memref<272x256xf32>,
                  %wr: memref<256x250xf32>, %yr: memref<16x250xf32>,
                  %xs: memref<16x64xf32>, %ws: memref<64x64xf32>, %ys: memref<16x64xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %wt : memref<16x256xf32>, memref<256x256xf32>) outs(%y : memref<16x256xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xl, %w : memref<272x256xf32>, memref<256x256xf32>) outs(%yl : memref<272x256xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %wr : memref<16x256xf32>, memref<256x250xf32>) outs(%yr : memref<16x250xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<16x64xf32>, memref<64x64xf32>) outs(%ys : memref<16x64xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// B a view of a wider matrix (rows 512 apart): not one flat buffer the shared kernels
// take, so the kernel is built inline, reading the view in place through its layout.

// CHECK-LABEL: func.func @view_of_b
// CHECK-SAME:    %[[W:[a-zA-Z0-9_]+]]: memref<256x256xf32, strided<[512, 1], offset: ?>>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     func.call
// CHECK:         vector.load %[[W]][%{{.+}}, %{{.+}}] : memref<256x256xf32, strided<[512, 1], offset: ?>>, vector<4xf32>
// CHECK:         vector.fma

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @view_of_b(%x: memref<16x256xf32>, %w: memref<256x256xf32, strided<[512, 1], offset: ?>>, %y: memref<16x256xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<16x256xf32>, memref<256x256xf32, strided<[512, 1], offset: ?>>) outs(%y : memref<16x256xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

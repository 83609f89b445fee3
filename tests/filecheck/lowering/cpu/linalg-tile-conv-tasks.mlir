// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' | filecheck %s

// A convolution whose output channels fit one block of A (M = 4 <= MC = 4): each task
// packs the B panels it reads into a buffer of its own, inside the parallel loop, and
// frees it when its GEMM is done. A task is all rows of C (M rounded up to MR) and a
// group of one image's panels: one group where the batch (dynamic here) is a multiple
// of the threads, else one per thread (at most the panels) where an image is worth
// TASK_FLOPS a thread.

// CHECK-LABEL: func.func @conv_tasks
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<?x2x6x10xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[C:.+]] = memref.collapse_shape {{.*}} into memref<?x4x32xf32>
// CHECK:         memref.dim %[[C]], %{{.+}} : memref<?x4x32xf32>
// CHECK:         %[[REM:.+]] = arith.remsi %{{.+}}, %[[THREADS:.+]] : index
// CHECK:         %[[UNEVEN:.+]] = arith.cmpi ne, %[[REM]], %{{.+}} : index
// CHECK:         %[[WORTH:.+]] = arith.cmpi sge, %{{.+}}, %[[THREADS]] : index
// CHECK:         %[[SPLIT:.+]] = arith.andi %[[UNEVEN]], %[[WORTH]] : i1
// CHECK:         %[[MOST:.+]] = arith.minsi %[[THREADS]], %{{.+}} : index
// CHECK:         arith.select %[[SPLIT]], %[[MOST]], %{{.+}} : index
// CHECK-NOT:     memref.alloc
// CHECK:         "scf.parallel"
// CHECK:           arith.muli
// CHECK:           arith.minsi
// CHECK:           %[[P0:.+]] = arith.muli
// CHECK:           %[[END:.+]] = arith.minsi
// CHECK:           %[[COUNT:.+]] = arith.maxsi
// CHECK:           %[[P:.+]] = memref.alloc(%{{.+}}, %[[COUNT]], %{{.+}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:           scf.for %[[Q:.+]] = %[[P0]] to %[[END]] step
// CHECK:             arith.subi %[[Q]], %[[P0]] : index
// CHECK:             vector.load %[[X]]
// CHECK:             vector.store {{.*}}, %[[P]]
// CHECK:           scf.for
// CHECK:             vector.load %[[P]]
// CHECK:             vector.fma
// CHECK:           memref.dealloc %[[P]]
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
func.func @conv_tasks(%x: memref<?x2x6x10xf32>, %w: memref<4x2x3x3xf32>, %y: memref<?x4x4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<?x2x6x10xf32>, memref<4x2x3x3xf32>) outs(%y : memref<?x4x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// More output channels than a block of A (M = 6 > MC = 4): the row blocks would each
// pack the same panels, so the batch's panels are packed once, up front, in parallel,
// and freed after the GEMM's parallel loop.

// CHECK-LABEL: func.func @conv_many_channels
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         "scf.parallel"
// CHECK:           vector.store {{.*}}, %[[P]]
// CHECK:         "scf.parallel"
// CHECK-NOT:       memref.alloc
// CHECK:           vector.fma
// CHECK-NOT:       memref.dealloc %[[P]]
// CHECK:         }) : (index, index, index) -> ()
// CHECK-NEXT:    memref.dealloc %[[P]]
func.func @conv_many_channels(%x: memref<?x2x6x10xf32>, %w: memref<6x2x3x3xf32>, %y: memref<?x6x4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<?x2x6x10xf32>, memref<6x2x3x3xf32>) outs(%y : memref<?x6x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// RUN: env MLC_NUM_THREADS=2 mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,16,12 vector-length=4 shared-micro-kernels=false}' | filecheck %s

// An LSTM-like step: C = A @ B (10 x 256, two tasks of 16 panels of 8 columns: 128
// columns each), then a generic reading C through blocks of W = 64 columns (four gates
// of 16 units, `C[i, p * 64 + k * 16 + u]`) and updating a state in place. Each task
// runs the generic on its own blocks, p in [p0 * 8 / 64, ceil(min(p_end * 8, 256) / 64)),
// once its panels are final: one parallel loop. The state's view, made after the
// matmul, is made before it (as are C's, made there too). The first parallel loop packs B.

// CHECK-LABEL: func.func @gates_in_the_tasks
// CHECK:         %[[E:.+]] = memref.expand_shape %[[C:[^ ]+]]
// CHECK:         %[[I:.+]] = memref.subview %[[E]][0, 0, 0, 0] [10, 4, 1, 16]
// CHECK:         %[[F:.+]] = memref.subview %[[E]][0, 0, 2, 0] [10, 4, 1, 16]
// CHECK:         "scf.parallel"
// CHECK:           scf.reduce
// CHECK:         "scf.parallel"
// CHECK:             vector.fma
// CHECK:           %[[W:.+]] = arith.constant 64 : index
// CHECK:           %[[FIRST:.+]] = arith.divsi %{{.+}}, %[[W]] : index
// CHECK:           %[[LAST:.+]] = arith.ceildivsi %{{.+}}, %[[W]] : index
// CHECK:           %[[SIZE:.+]] = arith.subi %[[LAST]], %[[FIRST]] : index
// CHECK:           memref.subview %[[I]][0, %[[FIRST]], 0, 0] [10, %[[SIZE]], 1, 16]
// CHECK:           linalg.generic
// CHECK:             arith.mulf
// CHECK:           scf.reduce
// CHECK-NOT:     scf.parallel
// CHECK:         memref.dealloc %[[C]]
// CHECK-NEXT:    func.return

func.func @gates_in_the_tasks(%a: memref<10x512xf32>, %b: memref<512x256xf32>, %s: memref<10x64xf32>) {
  %c = memref.alloc() : memref<10x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<10x512xf32>, memref<512x256xf32>) outs(%c : memref<10x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %z, %p : f32
    linalg.yield %q : f32
  }
  %e = memref.expand_shape %c [[0], [1, 2, 3]] output_shape [10, 4, 4, 16] : memref<10x256xf32> into memref<10x4x4x16xf32>
  %i = memref.subview %e[0, 0, 0, 0] [10, 4, 1, 16] [1, 1, 1, 1] : memref<10x4x4x16xf32> to memref<10x4x1x16xf32, strided<[256, 64, 16, 1]>>
  %f = memref.subview %e[0, 0, 2, 0] [10, 4, 1, 16] [1, 1, 1, 1] : memref<10x4x4x16xf32> to memref<10x4x1x16xf32, strided<[256, 64, 16, 1], offset: 32>>
  %st = memref.expand_shape %s [[0], [1, 2, 3]] output_shape [10, 4, 1, 16] : memref<10x64xf32> into memref<10x4x1x16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%i, %f, %st : memref<10x4x1x16xf32, strided<[256, 64, 16, 1]>>, memref<10x4x1x16xf32, strided<[256, 64, 16, 1], offset: 32>>, memref<10x4x1x16xf32>) outs(%st : memref<10x4x1x16xf32>) {
  ^bb0(%gi: f32, %gf: f32, %old: f32, %o: f32):
    %m = arith.mulf %gf, %old : f32
    %n = arith.addf %m, %gi : f32
    linalg.yield %n : f32
  }
  memref.dealloc %c : memref<10x256xf32>
  func.return
}

// -----

// A block of W = 256 columns is more than a task's 128: the generic stays after the
// matmul (too small to split here).

// CHECK-LABEL: func.func @blocks_wider_than_a_task
// CHECK:           vector.fma
// CHECK:           scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NOT:     linalg.generic
// CHECK:         memref.dealloc
// CHECK:         linalg.generic
// CHECK:         memref.dealloc %c

func.func @blocks_wider_than_a_task(%a: memref<10x512xf32>, %b: memref<512x256xf32>, %s: memref<10x64xf32>) {
  %c = memref.alloc() : memref<10x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<10x512xf32>, memref<512x256xf32>) outs(%c : memref<10x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %z, %p : f32
    linalg.yield %q : f32
  }
  %e = memref.expand_shape %c [[0], [1, 2, 3]] output_shape [10, 1, 4, 64] : memref<10x256xf32> into memref<10x1x4x64xf32>
  %i = memref.subview %e[0, 0, 0, 0] [10, 1, 1, 64] [1, 1, 1, 1] : memref<10x1x4x64xf32> to memref<10x1x1x64xf32, strided<[256, 256, 64, 1]>>
  %st = memref.expand_shape %s [[0], [1, 2, 3]] output_shape [10, 1, 1, 64] : memref<10x64xf32> into memref<10x1x1x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%i : memref<10x1x1x64xf32, strided<[256, 256, 64, 1]>>) outs(%st : memref<10x1x1x64xf32>) {
  ^bb0(%gi: f32, %o: f32):
    %n = arith.mulf %gi, %gi : f32
    linalg.yield %n : f32
  }
  memref.dealloc %c : memref<10x256xf32>
  func.return
}

// -----

// The generic writes A, which the other task may still be reading: it stays after.

// CHECK-LABEL: func.func @writes_a
// CHECK:           vector.fma
// CHECK:           scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NOT:     linalg.generic
// CHECK:         memref.dealloc
// CHECK:         linalg.generic
// CHECK:         memref.dealloc %c

func.func @writes_a(%a: memref<10x256xf32>, %b: memref<256x256xf32>) {
  %c = memref.alloc() : memref<10x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<10x256xf32>, memref<256x256xf32>) outs(%c : memref<10x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %z, %p : f32
    linalg.yield %q : f32
  }
  %e = memref.expand_shape %c [[0], [1, 2]] output_shape [10, 4, 64] : memref<10x256xf32> into memref<10x4x64xf32>
  %ea = memref.expand_shape %a [[0], [1, 2]] output_shape [10, 4, 64] : memref<10x256xf32> into memref<10x4x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : memref<10x4x64xf32>) outs(%ea : memref<10x4x64xf32>) {
  ^bb0(%g: f32, %o: f32):
    %n = arith.mulf %g, %g : f32
    linalg.yield %n : f32
  }
  memref.dealloc %c : memref<10x256xf32>
  func.return
}

// -----

// An op with effects between the matmul and the generic: nothing moves.

// CHECK-LABEL: func.func @store_between
// CHECK:           vector.fma
// CHECK:           scf.reduce
// CHECK-NEXT:    }) : (index, index, index) -> ()
// CHECK-NOT:     linalg.generic
// CHECK:         memref.store %v
// CHECK:         linalg.generic
// CHECK:         memref.dealloc %c

func.func @store_between(%a: memref<10x512xf32>, %b: memref<512x256xf32>, %s: memref<10x4x64xf32>, %v: f32) {
  %c = memref.alloc() : memref<10x256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<10x512xf32>, memref<512x256xf32>) outs(%c : memref<10x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %z, %p : f32
    linalg.yield %q : f32
  }
  %zero = arith.constant 0 : index
  memref.store %v, %s[%zero, %zero, %zero] : memref<10x4x64xf32>
  %e = memref.expand_shape %c [[0], [1, 2]] output_shape [10, 4, 64] : memref<10x256xf32> into memref<10x4x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : memref<10x4x64xf32>) outs(%s : memref<10x4x64xf32>) {
  ^bb0(%g: f32, %o: f32):
    %n = arith.mulf %g, %g : f32
    linalg.yield %n : f32
  }
  memref.dealloc %c : memref<10x256xf32>
  func.return
}

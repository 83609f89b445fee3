// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A matmul in a loop whose B (an argument, as an LSTM's recurrent weights given at run
// time) does not change in it: B's panels are packed once, before the loop, read by
// the kernel on every step, and freed after the loop. The loop nest inside keeps its
// micro-kernel and packs nothing.

// CHECK-LABEL: func.func @recurrent
// CHECK-SAME:    (%[[H:[a-zA-Z0-9_]+]]: memref<4x16xf32>, %[[R:[a-zA-Z0-9_]+]]: memref<16x32xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<4x32xf32>, %[[T:[a-zA-Z0-9_]+]]: index)
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         vector.load %[[R]]
// CHECK:         vector.store {{.*}}, %[[P]]
// CHECK:         scf.for %{{.+}} = %c0 to %[[T]] step %c1 {
// CHECK-NOT:       memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK-NOT:       vector.load %[[R]]
// CHECK:           vector.load %[[P]]
// CHECK:           vector.fma
// CHECK:         memref.dealloc %[[P]]
// CHECK-NEXT:    func.return

// LOC-LABEL: func.func @recurrent
// LOC:         memref.alloc({{.*}}) {{.*}} loc("lstm.py":7:9)
// LOC:         memref.dealloc {{.*}} loc("lstm.py":7:9)
func.func @recurrent(%h: memref<4x16xf32>, %r: memref<16x32xf32>, %y: memref<4x32xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %t step %c1 {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<4x16xf32>, memref<16x32xf32>) outs(%y : memref<4x32xf32>) {
    ^bb0(%x: f32, %w: f32, %z: f32):
      %p = arith.mulf %x, %w : f32
      %s = arith.addf %z, %p : f32
      linalg.yield %s : f32
    } loc("lstm.py":7:9)
  }
  func.return
}

// -----

// Two loops around the matmul, B read (transposed, `h @ R^T`) through a view made
// outside both: the packing leaves both loops.

// CHECK-LABEL: func.func @nested_transposed
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         scf.for %{{.+}} = %c0 to %{{.+}} step %c1 {
// CHECK-NEXT:      scf.for %{{.+}} = %c0 to %{{.+}} step %c1 {
// CHECK-NOT:       memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:             vector.load %[[P]]
// CHECK:         memref.dealloc %[[P]]
func.func @nested_transposed(%h: memref<4x16xf32>, %r: memref<1x32x16xf32>, %y: memref<4x32xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rt = memref.collapse_shape %r [[0, 1], [2]] : memref<1x32x16xf32> into memref<32x16xf32>
  scf.for %i = %c0 to %t step %c1 {
    scf.for %j = %c0 to %t step %c1 {
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %rt : memref<4x16xf32>, memref<32x16xf32>) outs(%y : memref<4x32xf32>) {
      ^bb0(%x: f32, %w: f32, %z: f32):
        %p = arith.mulf %x, %w : f32
        %s = arith.addf %z, %p : f32
        linalg.yield %s : f32
      }
    }
  }
  func.return
}

// -----

// B changes in the loop: written by a generic (through a view), carried as an
// iteration argument, or made in the loop. Each kernel packs B where it is.

// CHECK-LABEL: func.func @variant
// CHECK-NOT:     memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         scf.for %{{.+}} = %c0 to %{{.+}} step %c1 {
// CHECK:           memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         scf.for %{{.+}} = %c0 to %{{.+}} step %c1 iter_args
// CHECK:           memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         scf.for %{{.+}} = %c0 to %{{.+}} step %c1 {
// CHECK:           memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK:           memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
func.func @variant(%h: memref<4x16xf32>, %r: memref<16x32xf32>, %y: memref<4x32xf32>, %t: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rv = memref.subview %r[0, 0] [16, 32] [1, 1] : memref<16x32xf32> to memref<16x32xf32, strided<[32, 1]>>
  scf.for %i = %c0 to %t step %c1 {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<4x16xf32>, memref<16x32xf32>) outs(%y : memref<4x32xf32>) {
    ^bb0(%x: f32, %w: f32, %z: f32):
      %p = arith.mulf %x, %w : f32
      %s = arith.addf %z, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%rv : memref<16x32xf32, strided<[32, 1]>>) {
    ^bb0(%o: f32):
      %n = arith.negf %o : f32
      linalg.yield %n : f32
    }
  }
  %last = scf.for %i = %c0 to %t step %c1 iter_args(%b = %r) -> (memref<16x32xf32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %b : memref<4x16xf32>, memref<16x32xf32>) outs(%y : memref<4x32xf32>) {
    ^bb0(%x: f32, %w: f32, %z: f32):
      %p = arith.mulf %x, %w : f32
      %s = arith.addf %z, %p : f32
      linalg.yield %s : f32
    }
    scf.yield %b : memref<16x32xf32>
  }
  scf.for %i = %c0 to %t step %c1 {
    %fresh = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %fresh : memref<4x16xf32>, memref<16x32xf32>) outs(%y : memref<4x32xf32>) {
    ^bb0(%x: f32, %w: f32, %z: f32):
      %p = arith.mulf %x, %w : f32
      %s = arith.addf %z, %p : f32
      linalg.yield %s : f32
    }
    memref.dealloc %fresh : memref<16x32xf32>
  }
  func.return
}

// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=2}' | filecheck %s

// A generic without a kernel of its own is split into blocks of its outermost parallel
// loop. Where that loop's extent is dynamic (a model's batch), the block size is read at
// run time and the generic is there once, in the loop's body: a batch of 1 is one block,
// which `convert-to-llvm`'s call site runs on the caller (one iteration), so there is no
// unsplit copy to lower and compile a second time.

// CHECK-LABEL: func.func @dynamic_batch
// CHECK:         %[[N:.+]] = memref.dim %{{.+}}, %{{.+}} : memref<?x64x7x7xf32>
// CHECK:         %[[HALF:.+]] = arith.ceildivsi %[[N]], %{{.+}} : index
// CHECK-NEXT:    %[[BLOCK:.+]] = arith.maxsi %[[HALF]], %{{.+}} : index
// CHECK-NOT:     scf.if
// CHECK-NEXT:    "scf.parallel"(%{{.+}}, %[[N]], %[[BLOCK]])
// CHECK:           memref.subview
// CHECK:           linalg.generic {{.*}} ins(%{{.+}} : memref<?x64x7x7xf32, strided<[3136, 49, 7, 1], offset: ?>>)
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @dynamic_batch(%x: memref<?x64x7x7xf32>, %y: memref<?x64x7x7xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<?x64x7x7xf32>) outs(%y : memref<?x64x7x7xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  }
  func.return
}

// -----

// A static extent is split at compile time: no test at run time.

// CHECK-LABEL: func.func @static_rows
// CHECK-NOT:     scf.if
// CHECK:         "scf.parallel"
// CHECK-NOT:     scf.if
func.func @static_rows(%x: memref<256x512xf32>, %y: memref<256x512xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<256x512xf32>) outs(%y : memref<256x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %z : f32
    linalg.yield %r : f32
  }
  func.return
}

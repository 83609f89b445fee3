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

// -----

// A body that reads `linalg.index` (a broadcast of sizes known at run time: each operand
// row at `i * stride`, the stride 0 for a broadcast operand) is split too; in a block,
// index 0 counts from the block's start, so it gets the start added. Index 1 (not split)
// stays as it is.

// CHECK-LABEL: func.func @runtime_broadcast
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^bb0(%[[START:.+]]: index):
// CHECK:           linalg.generic
// CHECK:             %[[I:.+]] = linalg.index 0 : index
// CHECK-NEXT:        %[[ROW:.+]] = arith.addi %[[I]], %[[START]] : index
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[ROW]], %{{.+}} : index
// CHECK-NEXT:        %[[J:.+]] = linalg.index 1 : index
// CHECK-NEXT:        %{{.+}} = memref.load %{{.+}}[%[[AT]], %[[J]]] : memref<?x512xf32>
// CHECK-NOT:         arith.addi %[[J]]
// CHECK:             linalg.yield
func.func @runtime_broadcast(%x: memref<?x512xf32>, %w: memref<?x1xf32>, %y: memref<?x512xf32>, %sx: index, %sw: index) {
  %c0 = arith.constant 0 : index
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%y : memref<?x512xf32>) {
  ^bb0(%b: f32):
    %i = linalg.index 0 : index
    %ri = arith.muli %i, %sx : index
    %j = linalg.index 1 : index
    %a = memref.load %x[%ri, %j] : memref<?x512xf32>
    %i2 = linalg.index 0 : index
    %wi = arith.muli %i2, %sw : index
    %v = memref.load %w[%wi, %c0] : memref<?x1xf32>
    %r = arith.mulf %a, %v : f32
    linalg.yield %r : f32
  }
  func.return
}

// -----

// A body that reads `linalg.index` and stores into another buffer stays whole: where its
// indices make it write is not known, and blocks could race.

// CHECK-LABEL: func.func @index_and_store
// CHECK-NOT:     scf.parallel
// CHECK:         linalg.generic
// CHECK:           memref.store
// CHECK-NOT:     scf.parallel
// CHECK:         func.return
func.func @index_and_store(%x: memref<?x512xf32>, %y: memref<?x512xf32>, %seen: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x512xf32>) outs(%y : memref<?x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %j = linalg.index 1 : index
    memref.store %a, %seen[%j] : memref<512xf32>
    linalg.yield %a : f32
  }
  func.return
}

// RUN: mlc-opt %s --split-input-file -p bufferize | filecheck %s

// A generic that updates a row of the loop-carried tensor and inserts it back where it
// came from (a scatter-add of rows): the generic writes the row's view of the carried
// buffer, with no temporary and no copy back.

// CHECK-LABEL: func.func @row_update_in_place
// CHECK:         scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (memref<8x16xf32>) {
// CHECK-NEXT:      %[[I:.+]] = memref.load
// CHECK-NEXT:      %[[P:.+]] = arith.index_cast %[[I]]
// CHECK-NEXT:      %[[ROW:.+]] = memref.subview %[[ACC]][%[[P]], 0] [1, 16] [1, 1]
// CHECK-NEXT:      %[[UPD:.+]] = memref.subview %{{.+}}[%{{.+}}, 0] [1, 16] [1, 1]
// CHECK-NEXT:      linalg.generic {{.+}} ins(%[[UPD]] : {{.+}}) outs(%[[ROW]] : memref<1x16xf32, strided<[16, 1], offset: ?>>)
// CHECK:           arith.addf
// CHECK:         }
// CHECK-NEXT:      scf.yield %[[ACC]] : memref<8x16xf32>
// CHECK-NEXT:    }
func.func @row_update_in_place(%x: tensor<8x16xf32>, %i: tensor<?xi64>, %u: tensor<?x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %i, %c0 : tensor<?xi64>
  %e = tensor.empty() : tensor<8x16xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<8x16xf32>) {
    %k = tensor.extract %i[%t] : tensor<?xi64>
    %p = arith.index_cast %k : i64 to index
    %row = tensor.extract_slice %acc[%p, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %upd = tensor.extract_slice %u[%t, 0] [1, 16] [1, 1] : tensor<?x16xf32> to tensor<1x16xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%upd : tensor<1x16xf32>) outs(%row : tensor<1x16xf32>) {
    ^bb0(%v: f32, %a: f32):
      %s = arith.addf %a, %v : f32
      linalg.yield %s : f32
    } -> tensor<1x16xf32>
    %back = tensor.insert_slice %new into %acc[%p, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<8x16xf32>
    scf.yield %back : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// The generic also reads another row of the same tensor: writing its row in place could
// change what it reads (the rows may be one), so it works on a copy.

// CHECK-LABEL: func.func @reads_another_row
// CHECK:         scf.for
// CHECK:           %[[TMP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
// CHECK:           linalg.generic {{.+}} outs(%[[TMP]] : memref<1x16xf32>)
// CHECK:           linalg.generic {{.+}} outs(%[[TMP]] : memref<1x16xf32>)
// CHECK:           linalg.generic {{.+}} ins(%[[TMP]] : memref<1x16xf32>)
func.func @reads_another_row(%x: tensor<8x16xf32>, %i: tensor<?xi64>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %i, %c0 : tensor<?xi64>
  %e = tensor.empty() : tensor<8x16xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<8x16xf32>) {
    %k = tensor.extract %i[%t] : tensor<?xi64>
    %p = arith.index_cast %k : i64 to index
    %row = tensor.extract_slice %acc[%p, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %other = tensor.extract_slice %acc[%t, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%other : tensor<1x16xf32>) outs(%row : tensor<1x16xf32>) {
    ^bb0(%v: f32, %a: f32):
      %s = arith.addf %a, %v : f32
      linalg.yield %s : f32
    } -> tensor<1x16xf32>
    %back = tensor.insert_slice %new into %acc[%p, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<8x16xf32>
    scf.yield %back : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// Inserted somewhere else than where the slice came from: the old row must stay as it
// was, so the generic writes a new buffer and the insert copies it.

// CHECK-LABEL: func.func @inserted_elsewhere
// CHECK:         scf.for
// CHECK:           %[[TMP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
// CHECK:           linalg.generic {{.+}} ins(%[[TMP]] : memref<1x16xf32>)
func.func @inserted_elsewhere(%x: tensor<8x16xf32>, %i: tensor<?xi64>, %u: tensor<?x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %i, %c0 : tensor<?xi64>
  %e = tensor.empty() : tensor<8x16xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<8x16xf32>) {
    %k = tensor.extract %i[%t] : tensor<?xi64>
    %p = arith.index_cast %k : i64 to index
    %row = tensor.extract_slice %acc[%p, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %upd = tensor.extract_slice %u[%t, 0] [1, 16] [1, 1] : tensor<?x16xf32> to tensor<1x16xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%upd : tensor<1x16xf32>) outs(%row : tensor<1x16xf32>) {
    ^bb0(%v: f32, %a: f32):
      %s = arith.addf %a, %v : f32
      linalg.yield %s : f32
    } -> tensor<1x16xf32>
    %back = tensor.insert_slice %new into %acc[%t, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<8x16xf32>
    scf.yield %back : tensor<8x16xf32>
  }
  func.return %r : tensor<8x16xf32>
}

// -----

// The tensor is read between the generic and the insert (the old row's first element):
// it must still hold the old row there.

// CHECK-LABEL: func.func @read_before_insert
// CHECK:         scf.for
// CHECK:           %[[TMP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
// CHECK:           linalg.generic {{.+}} outs(%[[TMP]] : memref<1x16xf32>)
func.func @read_before_insert(%x: tensor<8x16xf32>, %i: tensor<?xi64>, %u: tensor<?x16xf32>) -> (tensor<8x16xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %i, %c0 : tensor<?xi64>
  %e = tensor.empty() : tensor<8x16xf32>
  %init = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<8x16xf32>
  %r:2 = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %init, %sum = %z) -> (tensor<8x16xf32>, f32) {
    %k = tensor.extract %i[%t] : tensor<?xi64>
    %p = arith.index_cast %k : i64 to index
    %row = tensor.extract_slice %acc[%p, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<1x16xf32>
    %upd = tensor.extract_slice %u[%t, 0] [1, 16] [1, 1] : tensor<?x16xf32> to tensor<1x16xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%upd : tensor<1x16xf32>) outs(%row : tensor<1x16xf32>) {
    ^bb0(%v: f32, %a: f32):
      %s = arith.addf %a, %v : f32
      linalg.yield %s : f32
    } -> tensor<1x16xf32>
    %old = tensor.extract %acc[%p, %c0] : tensor<8x16xf32>
    %sum2 = arith.addf %sum, %old : f32
    %back = tensor.insert_slice %new into %acc[%p, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<8x16xf32>
    scf.yield %back, %sum2 : tensor<8x16xf32>, f32
  }
  func.return %r#0, %r#1 : tensor<8x16xf32>, f32
}

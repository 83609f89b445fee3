// RUN: mlc-opt %s --split-input-file -p linalg-fuse-elementwise | filecheck %s

// A generic on tensors whose result nothing reads is erased with the pure ops only it
// read; a size read from it is read from its init (or from an expand_shape's output
// shape) first, so a check of the size keeps no kernel alive.

// CHECK-LABEL: func.func @unread
// CHECK-SAME:    (%[[X:.+]]: tensor<?xi64>, %[[N:.+]]: index)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK-NEXT:    %[[C:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D:.+]] = tensor.dim %[[E]], %[[C]] : tensor<?xi64>
// CHECK-NEXT:    %[[OK:.+]] = arith.cmpi eq, %[[D]], %[[N]] : index
// CHECK-NEXT:    cf.assert %[[OK]], "size"
// CHECK-NEXT:    func.return %[[X]] : tensor<?xi64>
func.func @unread(%x: tensor<?xi64>, %n: index) -> tensor<?xi64> {
  %e = tensor.empty(%n) : tensor<?xi64>
  %ones = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e : tensor<?xi64>) {
  ^bb0(%o: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<?xi64>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %ones, %c0 : tensor<?xi64>
  %ok = arith.cmpi eq, %d, %n : index
  cf.assert %ok, "size"
  func.return %x : tensor<?xi64>
}

// -----

// An expand_shape's dynamic dim is its output shape's: the generic before it goes too.

// CHECK-LABEL: func.func @through_expand
// CHECK-SAME:    (%[[X:.+]]: tensor<?xi64>, %[[N:.+]]: index)
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[OK:.+]] = arith.cmpi eq, %[[N]], %[[N]] : index
// CHECK-NEXT:    cf.assert %[[OK]], "size"
func.func @through_expand(%x: tensor<?xi64>, %n: index) -> tensor<?xi64> {
  %e = tensor.empty(%n) : tensor<?xi64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xi64>) outs(%e : tensor<?xi64>) {
  ^bb0(%a: i64, %o: i64):
    %s = arith.addi %a, %a : i64
    linalg.yield %s : i64
  } -> tensor<?xi64>
  %row = tensor.expand_shape %y [[0, 1]] output_shape [1, %n] : tensor<?xi64> into tensor<1x?xi64>
  %c1 = arith.constant 1 : index
  %d = tensor.dim %row, %c1 : tensor<1x?xi64>
  %ok = arith.cmpi eq, %d, %n : index
  cf.assert %ok, "size"
  func.return %x : tensor<?xi64>
}

// -----

// Read results stay; a generic on buffers writes memory and stays though unread.

// CHECK-LABEL: func.func @kept
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}} : memref<4xi64>)
func.func @kept(%x: tensor<4xi64>, %m: memref<4xi64>) -> tensor<4xi64> {
  %e = tensor.empty() : tensor<4xi64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%a: i64, %o: i64):
    %s = arith.muli %a, %a : i64
    linalg.yield %s : i64
  } -> tensor<4xi64>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%m : memref<4xi64>) {
  ^bb0(%o: i64):
    %z = arith.constant 0 : i64
    linalg.yield %z : i64
  }
  func.return %y : tensor<4xi64>
}

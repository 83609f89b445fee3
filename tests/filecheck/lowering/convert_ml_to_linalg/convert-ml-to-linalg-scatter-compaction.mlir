// RUN: mlc-opt %s -p 'convert-ml-to-linalg{scatter-group-pairs=-1 scatter-atomic=true}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-ml-to-linalg' | filecheck %s --check-prefix=CPU

// With `scatter-atomic`, the scatter NonZero's import compacts a mask with (the column
// of a set element is its mask's exclusive cumsum, of a clear one the count N) is one
// loop of writes: no winners' table, no reduction over the indices; the host checks
// N against the data's dim. Another spare column, an inclusive cumsum or a reduction
// keeps the general form.

// CHECK-LABEL: func.func @compaction
// CHECK-SAME:    (%[[M:.+]]: tensor<?xi1>, %[[U:.+]]: tensor<2x?xi64>, %[[N:.+]]: i64)
// CHECK:         %[[C:.+]] = arith.constant 1 : index
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_elements' op index {} is out of range [-n, n) (n its size) of data dim 1"
// CHECK-NOT:     arith.constant -1 : i64
// CHECK:         scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (tensor<2x?xi64>) {
// CHECK:           %[[COL:.+]] = arith.remui %[[T]]
// CHECK:           %[[ROW:.+]] = arith.divui %[[T]]
// CHECK:           %[[SET:.+]] = tensor.extract %[[M]][%[[COL]]] : tensor<?xi1>
// CHECK:           %[[RANK:.+]] = tensor.extract %{{.+}}[%[[COL]]] : tensor<?xi64>
// CHECK:           %[[AT:.+]] = arith.select %[[SET]], %[[RANK]], %[[N]] : i64
// CHECK:           %[[COLI:.+]] = arith.index_cast %[[AT]] : i64 to index
// CHECK:           %[[ATI:.+]] = arith.minui %[[COLI]], %{{.+}} : index
// CHECK:           %[[UPD:.+]] = tensor.extract %[[U]][%[[ROW]], %[[COL]]]
// CHECK:           %[[LAST:.+]] = arith.cmpi eq
// CHECK:           %[[STAYS:.+]] = arith.ori %[[SET]], %[[LAST]] : i1
// CHECK:           %[[OLD:.+]] = tensor.extract %[[ACC]][%[[ROW]], %[[ATI]]]
// CHECK:           %[[NEW:.+]] = arith.select %[[STAYS]], %[[UPD]], %[[OLD]] : i64
// CHECK:           tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %[[ATI]]]
// CHECK:         } {mlc.atomic_updates}
// CHECK-NOT:     mlc.atomic_updates
// CPU-LABEL:   func.func @compaction
// CPU-NOT:       mlc.atomic_updates
// CPU-LABEL:   func.func @other_spare
func.func @compaction(%m: tensor<?xi1>, %u: tensor<2x?xi64>, %n: i64) -> tensor<2x?xi64> {
  %shape = tensor.from_elements %n : tensor<1xi64>
  %mask = ml.reshape %m, %shape : (tensor<?xi1>, tensor<1xi64>) -> tensor<?xi1>
  %flat = ml.cast %mask : (tensor<?xi1>) -> tensor<?xi64>
  %c = ml.cumsum %flat {axis = 0 : i64, exclusive = true} : (tensor<?xi64>) -> tensor<?xi64>
  %spare = tensor.from_elements %n : tensor<i64>
  %s = ml.select %mask, %c, %spare : (tensor<?xi1>, tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %one = arith.constant 1 : i64
  %row_shape = tensor.from_elements %one, %n : tensor<2xi64>
  %row = ml.reshape %s, %row_shape : (tensor<?xi64>, tensor<2xi64>) -> tensor<1x?xi64>
  %two = arith.constant 2 : i64
  %wide = tensor.from_elements %two, %n : tensor<2xi64>
  %i = ml.broadcast_to %row, %wide : (tensor<1x?xi64>, tensor<2xi64>) -> tensor<2x?xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  %n1 = arith.addi %n, %one : i64
  %out_shape = tensor.from_elements %two, %n1 : tensor<2xi64>
  %data = ml.broadcast_to %zero, %out_shape : (tensor<i64>, tensor<2xi64>) -> tensor<2x?xi64>
  %r = ml.scatter_elements %data, %i, %u {axis = 1 : i64} : (tensor<2x?xi64>, tensor<2x?xi64>, tensor<2x?xi64>) -> tensor<2x?xi64>
  func.return %r : tensor<2x?xi64>
}

// The clear elements go to column 3, which a set element may take too: general form.
// CHECK-LABEL: func.func @other_spare
// CHECK:         arith.constant -1 : i64
// CHECK:         arith.maxsi
// CHECK:         } {mlc.atomic_updates}
// CHECK:         } {mlc.atomic_updates}
func.func @other_spare(%m: tensor<8xi1>, %u: tensor<1x8xi64>) -> tensor<1x9xi64> {
  %flat = ml.cast %m : (tensor<8xi1>) -> tensor<8xi64>
  %c = ml.cumsum %flat {axis = 0 : i64, exclusive = true} : (tensor<8xi64>) -> tensor<8xi64>
  %spare = arith.constant dense<3> : tensor<i64>
  %s = ml.select %m, %c, %spare : (tensor<8xi1>, tensor<8xi64>, tensor<i64>) -> tensor<8xi64>
  %i = ml.reshape %s : (tensor<8xi64>) -> tensor<1x8xi64>
  %data = arith.constant dense<0> : tensor<1x9xi64>
  %r = ml.scatter_elements %data, %i, %u {axis = 1 : i64} : (tensor<1x9xi64>, tensor<1x8xi64>, tensor<1x8xi64>) -> tensor<1x9xi64>
  func.return %r : tensor<1x9xi64>
}

// An inclusive cumsum may repeat a column: general form.
// CHECK-LABEL: func.func @inclusive
// CHECK:         arith.maxsi
// CHECK:         } {mlc.atomic_updates}
func.func @inclusive(%m: tensor<8xi1>, %u: tensor<1x8xi64>) -> tensor<1x9xi64> {
  %flat = ml.cast %m : (tensor<8xi1>) -> tensor<8xi64>
  %c = ml.cumsum %flat {axis = 0 : i64} : (tensor<8xi64>) -> tensor<8xi64>
  %spare = arith.constant dense<8> : tensor<i64>
  %s = ml.select %m, %c, %spare : (tensor<8xi1>, tensor<8xi64>, tensor<i64>) -> tensor<8xi64>
  %i = ml.reshape %s : (tensor<8xi64>) -> tensor<1x8xi64>
  %data = arith.constant dense<0> : tensor<1x9xi64>
  %r = ml.scatter_elements %data, %i, %u {axis = 1 : i64} : (tensor<1x9xi64>, tensor<1x8xi64>, tensor<1x8xi64>) -> tensor<1x9xi64>
  func.return %r : tensor<1x9xi64>
}

// A static mask whose spare is its count (8): one loop.
// CHECK-LABEL: func.func @static_compaction
// CHECK-NOT:     arith.constant -1 : i64
// CHECK:         } {mlc.atomic_updates}
// CHECK-NOT:     mlc.atomic_updates
func.func @static_compaction(%m: tensor<8xi1>, %u: tensor<1x8xi64>) -> tensor<1x9xi64> {
  %flat = ml.cast %m : (tensor<8xi1>) -> tensor<8xi64>
  %c = ml.cumsum %flat {axis = 0 : i64, exclusive = true} : (tensor<8xi64>) -> tensor<8xi64>
  %spare = arith.constant dense<8> : tensor<i64>
  %s = ml.select %m, %c, %spare : (tensor<8xi1>, tensor<8xi64>, tensor<i64>) -> tensor<8xi64>
  %i = ml.reshape %s : (tensor<8xi64>) -> tensor<1x8xi64>
  %data = arith.constant dense<0> : tensor<1x9xi64>
  %r = ml.scatter_elements %data, %i, %u {axis = 1 : i64} : (tensor<1x9xi64>, tensor<1x8xi64>, tensor<1x8xi64>) -> tensor<1x9xi64>
  func.return %r : tensor<1x9xi64>
}

// A reduction combines into the spare column: the atomic add, after the index check.
// CHECK-LABEL: func.func @reduction_add
// CHECK:         cf.assert %{{.+}}, "'ml.scatter_elements' op index {} is out of range [-9, 9) of data dim 1"
// CHECK:         arith.addi
// CHECK:         } {mlc.atomic_updates}
func.func @reduction_add(%m: tensor<8xi1>, %u: tensor<1x8xi64>) -> tensor<1x9xi64> {
  %flat = ml.cast %m : (tensor<8xi1>) -> tensor<8xi64>
  %c = ml.cumsum %flat {axis = 0 : i64, exclusive = true} : (tensor<8xi64>) -> tensor<8xi64>
  %spare = arith.constant dense<8> : tensor<i64>
  %s = ml.select %m, %c, %spare : (tensor<8xi1>, tensor<8xi64>, tensor<i64>) -> tensor<8xi64>
  %i = ml.reshape %s : (tensor<8xi64>) -> tensor<1x8xi64>
  %data = arith.constant dense<0> : tensor<1x9xi64>
  %r = ml.scatter_elements %data, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<1x9xi64>, tensor<1x8xi64>, tensor<1x8xi64>) -> tensor<1x9xi64>
  func.return %r : tensor<1x9xi64>
}

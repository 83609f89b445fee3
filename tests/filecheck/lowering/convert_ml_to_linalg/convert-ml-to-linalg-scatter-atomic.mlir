// RUN: mlc-opt %s -p 'convert-ml-to-linalg{scatter-group-pairs=-1 scatter-atomic=true}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-ml-to-linalg{scatter-group-pairs=-1 scatter-atomic=true}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// `scatter-atomic` (the GPU pipeline's): a scatter whose reduction an atomic applies
// becomes a loop over its update elements, marked `mlc.atomic_updates`; `none` takes two
// (the highest update number of each destination, then the winners' writes); `mul` and
// 16-bit sums keep the walk over the result.

// CHECK-LABEL: func.func @nd_add
// CHECK:         %[[N:.+]] = arith.muli
// CHECK:         scf.for %[[T:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[ACC:.+]] = %x) -> (tensor<6x4xf32>) {
// CHECK:           %[[COL:.+]] = arith.remui %[[T]]
// CHECK:           %[[TUPLE:.+]] = arith.divui %[[T]]
// CHECK:           %[[ROW:.+]] = arith.minui
// CHECK:           %[[U:.+]] = tensor.extract %u[%[[TUPLE]], %[[COL]]]
// CHECK:           %[[OLD:.+]] = tensor.extract %[[ACC]][%[[ROW]], %[[COL]]]
// CHECK:           %[[NEW:.+]] = arith.addf %[[OLD]], %[[U]] : f32
// CHECK:           %[[NEXT:.+]] = tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %[[COL]]]
// CHECK:           scf.yield %[[NEXT]]
// CHECK:         } {mlc.atomic_updates}
// LOC-LABEL:   func.func @nd_add
// LOC:           } {mlc.atomic_updates} loc("nd_add")
func.func @nd_add(%x: tensor<6x4xf32>, %i: tensor<?x1xi64>, %u: tensor<?x4xf32>) -> tensor<6x4xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<6x4xf32>, tensor<?x1xi64>, tensor<?x4xf32>) -> tensor<6x4xf32> loc("nd_add")
  func.return %s : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @elements_max_i32
// CHECK:         scf.for
// CHECK:           arith.maxsi %{{.+}}, %{{.+}} : i32
// CHECK:         } {mlc.atomic_updates}
func.func @elements_max_i32(%x: tensor<5x?xi32>, %i: tensor<5x?xi64>, %u: tensor<5x?xi32>) -> tensor<5x?xi32> {
  %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "max"} : (tensor<5x?xi32>, tensor<5x?xi64>, tensor<5x?xi32>) -> tensor<5x?xi32>
  func.return %s : tensor<5x?xi32>
}

// CHECK-LABEL: func.func @elements_none
// CHECK:         %[[MINUS:.+]] = arith.constant -1 : i64
// CHECK:         %[[WON:.+]] = scf.for %[[T:.+]] = {{.+}} iter_args(%[[W:.+]] = %{{.+}}) -> (tensor<5x7xi64>) {
// CHECK:           %[[NUMBER:.+]] = arith.index_cast %[[T]] : index to i64
// CHECK:           arith.maxsi %{{.+}}, %[[NUMBER]] : i64
// CHECK:         } {mlc.atomic_updates}
// CHECK:         scf.for %[[S:.+]] = {{.+}} iter_args(%{{.+}} = %x) -> (tensor<5x7xf64>) {
// CHECK:           %[[WINNER:.+]] = tensor.extract %[[WON]]
// CHECK:           %[[HIT:.+]] = arith.cmpi eq, %[[WINNER]], %{{.+}} : i64
// CHECK:           arith.select %[[HIT]], %{{.+}}, %{{.+}} : f64
// CHECK:         } {mlc.atomic_updates}
func.func @elements_none(%x: tensor<5x7xf64>, %i: tensor<3x7xi64>, %u: tensor<3x7xf64>) -> tensor<5x7xf64> {
  %s = ml.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<5x7xf64>, tensor<3x7xi64>, tensor<3x7xf64>) -> tensor<5x7xf64>
  func.return %s : tensor<5x7xf64>
}

// CHECK-LABEL: func.func @nd_mul_walks
// CHECK-NOT:     mlc.atomic_updates
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-LABEL: func.func @nd_add_f16_walks
// CHECK-NOT:     mlc.atomic_updates
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]
func.func @nd_mul_walks(%x: tensor<6x4xf32>, %i: tensor<3x1xi64>, %u: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "mul"} : (tensor<6x4xf32>, tensor<3x1xi64>, tensor<3x4xf32>) -> tensor<6x4xf32>
  func.return %s : tensor<6x4xf32>
}

func.func @nd_add_f16_walks(%x: tensor<6x4xf16>, %i: tensor<3x1xi64>, %u: tensor<3x4xf16>) -> tensor<6x4xf16> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<6x4xf16>, tensor<3x1xi64>, tensor<3x4xf16>) -> tensor<6x4xf16>
  func.return %s : tensor<6x4xf16>
}

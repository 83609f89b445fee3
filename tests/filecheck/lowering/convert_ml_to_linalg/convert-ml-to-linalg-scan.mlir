// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// argmax: a -inf fill and a zero index fill, then one reduction generic carrying
// (value, index); a greater element, or a NaN over a number, takes the place.

// CHECK-LABEL: func.func @argmax_f32
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>)
// CHECK:         %[[V:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<4xf32>)
// CHECK:           arith.constant 0xff800000 : f32
// CHECK:         %[[I:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<4xi64>)
// CHECK:           arith.constant 0 : i64
// CHECK:         %{{.+}}, %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]] : tensor<4x8xf32>) outs(%[[V]], %[[I]] : tensor<4xf32>, tensor<4xi64>)
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: f32, %[[BEST:.+]]: f32, %[[AT:.+]]: i64):
// CHECK-NEXT:      %[[K:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[K64:.+]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:      %[[GT:.+]] = arith.cmpf ogt, %[[IN]], %[[BEST]] : f32
// CHECK-NEXT:      %[[NAN:.+]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK-NEXT:      %[[NUM:.+]] = arith.cmpf ord, %[[BEST]], %[[BEST]] : f32
// CHECK-NEXT:      %[[FIRST_NAN:.+]] = arith.andi %[[NAN]], %[[NUM]] : i1
// CHECK-NEXT:      %[[TAKE:.+]] = arith.ori %[[GT]], %[[FIRST_NAN]] : i1
// CHECK-NEXT:      %[[NV:.+]] = arith.select %[[TAKE]], %[[IN]], %[[BEST]] : f32
// CHECK-NEXT:      %[[NI:.+]] = arith.select %[[TAKE]], %[[K64]], %[[AT]] : i64
// CHECK-NEXT:      linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK:         func.return %[[R]]

// LOC-LABEL:   func.func @argmax_f32
// LOC:           linalg.index 1 : index loc("m.py":4:2)
func.func @argmax_f32(%x: tensor<4x8xf32>) -> tensor<4xi64> {
  %0 = ml.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xi64> loc("m.py":4:2)
  func.return %0 : tensor<4xi64>
}

// -----

// argmin of integers with select_last_index: an i32 max fill, `sle` keeps the last of
// equal elements; keepdims reads the size-1 dim at index 0, a dynamic kept dim comes
// from tensor.dim.

// CHECK-LABEL: func.func @argmin_last_i32
// CHECK:           arith.constant 2147483647 : i32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      outs(%{{.+}}, %{{.+}} : tensor<?x1xi32>, tensor<?x1xi64>)
// CHECK:           arith.cmpi sle
// CHECK-NOT:       arith.cmpf
// CHECK:           linalg.yield
func.func @argmin_last_i32(%x: tensor<?x8xi32>) -> tensor<?x1xi64> {
  %0 = ml.argmin %x {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<?x8xi32>) -> tensor<?x1xi64>
  func.return %0 : tensor<?x1xi64>
}

// -----

// cumsum: a zero-filled running sum at the keepdims map and the result at the identity
// map, the scan loop a `reduction` iterator; inclusive yields the new sum twice.

// CHECK-LABEL: func.func @cumsum_inclusive
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x6xf32>)
// CHECK:         %[[Z:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<?x1xf32>)
// CHECK:           arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<?x6xf32>
// CHECK-NEXT:    %{{.+}}, %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]] : tensor<?x6xf32>) outs(%[[Z]], %[[E]] : tensor<?x1xf32>, tensor<?x6xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: f32, %[[ACC:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[NEXT:.+]] = arith.addf %[[ACC]], %[[IN]]
// CHECK-NEXT:      linalg.yield %[[NEXT]], %[[NEXT]] : f32, f32
// CHECK:         func.return %[[S]]

// LOC-LABEL:   func.func @cumsum_inclusive
// LOC:           arith.addf {{.*}} loc("c.py":9:1)
func.func @cumsum_inclusive(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %0 = ml.cumsum %x {axis = 1 : i64} : (tensor<?x6xf32>) -> tensor<?x6xf32> loc("c.py":9:1)
  func.return %0 : tensor<?x6xf32>
}

// -----

// Exclusive yields the sum before the element; reverse flips the axis before and after
// the scan, reading `x` with tensor.extract at `size - 1 - i`.

// CHECK-LABEL: func.func @cumsum_exclusive_reverse
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<5xi64>)
// CHECK:         %[[F:.+]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK:           %[[I:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[LAST:.+]] = arith.constant 4 : index
// CHECK-NEXT:      %[[J:.+]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK-NEXT:      tensor.extract %[[X]][%[[J]]] : tensor<5xi64>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[F]] : tensor<5xi64>)
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: i64, %[[ACC:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT:      %[[NEXT:.+]] = arith.addi %[[ACC]], %[[IN]] : i64
// CHECK-NEXT:      linalg.yield %[[NEXT]], %[[ACC]] : i64, i64
// CHECK:         %[[R:.+]] = linalg.generic
// CHECK:           tensor.extract
// CHECK:         func.return %[[R]]
func.func @cumsum_exclusive_reverse(%x: tensor<5xi64>) -> tensor<5xi64> {
  %0 = ml.cumsum %x {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<5xi64>) -> tensor<5xi64>
  func.return %0 : tensor<5xi64>
}

// -----

// An integer scan's total is the sum of its input along its axis: a reduce_sum of the
// same input over that axis alone, after the cumsum, becomes the scan's first result
// (NonZero's count of its positions), collapsed without the axis (a view), or as it is
// with keepdims. No reduction generic is left.

// CHECK-LABEL: func.func @cumsum_total_is_the_sum
// CHECK:         %[[TOTAL:[0-9]+]], %[[SUMS:[0-9]+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK:         %[[ROWS:[0-9]+]] = tensor.collapse_shape %[[TOTAL]] {{\[\[}}0 : i64, 1 : i64]] : tensor<?x1xi32> into tensor<?xi32>
// CHECK-NOT:     linalg.generic
// CHECK:         func.return %[[SUMS]], %[[ROWS]], %[[TOTAL]]
func.func @cumsum_total_is_the_sum(%x: tensor<?x9xi32>) -> (tensor<?x9xi32>, tensor<?xi32>, tensor<?x1xi32>) {
  %0 = ml.cumsum %x {axis = 1 : i64, exclusive = true} : (tensor<?x9xi32>) -> tensor<?x9xi32>
  %1 = ml.reduce_sum %x {axes = array<i64: -1>, keepdims = false} : (tensor<?x9xi32>) -> tensor<?xi32>
  %2 = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<?x9xi32>) -> tensor<?x1xi32>
  func.return %0, %1, %2 : tensor<?x9xi32>, tensor<?xi32>, tensor<?x1xi32>
}

// -----

// The axis first: its size-1 dim joins the next. A 1-D scan's total collapses to rank 0.

// CHECK-LABEL: func.func @cumsum_total_axis_zero
// CHECK:         %[[TOTAL:[0-9]+]], %{{[0-9]+}} = linalg.generic
// CHECK:         tensor.collapse_shape %[[TOTAL]] {{\[\[}}0 : i64, 1 : i64]] : tensor<1x4xi64> into tensor<4xi64>
// CHECK-LABEL: func.func @cumsum_total_one_dim
// CHECK:         %[[TOTAL:[0-9]+]], %{{[0-9]+}} = linalg.generic
// CHECK:         tensor.collapse_shape %[[TOTAL]] [] : tensor<1xi64> into tensor<i64>
func.func @cumsum_total_axis_zero(%x: tensor<3x4xi64>) -> (tensor<3x4xi64>, tensor<4xi64>) {
  %0 = ml.cumsum %x {axis = 0 : i64} : (tensor<3x4xi64>) -> tensor<3x4xi64>
  %1 = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<3x4xi64>) -> tensor<4xi64>
  func.return %0, %1 : tensor<3x4xi64>, tensor<4xi64>
}
func.func @cumsum_total_one_dim(%x: tensor<?xi64>) -> (tensor<?xi64>, tensor<i64>) {
  %0 = ml.cumsum %x {axis = 0 : i64, reverse = true} : (tensor<?xi64>) -> tensor<?xi64>
  %1 = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<?xi64>) -> tensor<i64>
  func.return %0, %1 : tensor<?xi64>, tensor<i64>
}

// -----

// Sums the scan does not give stay reductions: over another axis, before the cumsum,
// and of floats (a scan's total rounds in another order than a reduction's).

// CHECK-LABEL: func.func @sums_kept
// CHECK-COUNT-2: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]}
// CHECK-NOT:     tensor.collapse_shape
// CHECK-LABEL: func.func @float_sum_kept
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<3x4xf32>) outs(%{{.+}}, %{{.+}} :
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<3x4xf32>) outs(%{{.+}} :
// CHECK-NOT:     tensor.collapse_shape
func.func @sums_kept(%x: tensor<3x4xi64>) -> (tensor<4xi64>, tensor<3x4xi64>, tensor<4xi64>) {
  %0 = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<3x4xi64>) -> tensor<4xi64>
  %1 = ml.cumsum %x {axis = 1 : i64} : (tensor<3x4xi64>) -> tensor<3x4xi64>
  %2 = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<3x4xi64>) -> tensor<4xi64>
  func.return %0, %1, %2 : tensor<4xi64>, tensor<3x4xi64>, tensor<4xi64>
}
func.func @float_sum_kept(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xf32>) {
  %0 = ml.cumsum %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<3xf32>
  func.return %0, %1 : tensor<3x4xf32>, tensor<3xf32>
}

// -----

// A cumsum of a broadcast integer constant is a count, no scan: element i of an
// exclusive reverse cumsum of 3s is 3 * (n - 1 - i).

// CHECK-LABEL: func.func @cumsum_of_a_constant_counts
// CHECK-NOT:     "reduction"
// CHECK:         %[[N:.+]] = tensor.dim
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK:           %[[I:.+]] = linalg.index 0 : index
// CHECK:           %[[AFTER:.+]] = arith.subi %[[N]], %[[I]] : index
// CHECK:           %[[COUNT:.+]] = arith.subi %[[AFTER]], %{{.+}} : index
// CHECK:           %[[C:.+]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK:           %[[STEP:.+]] = arith.constant 3 : i64
// CHECK:           %[[V:.+]] = arith.muli %[[C]], %[[STEP]] : i64
// CHECK:           linalg.yield %[[V]] : i64
// CHECK-NOT:     "reduction"
// LOC-LABEL:   func.func @cumsum_of_a_constant_counts
// LOC:           linalg.index 0 : index loc("count")
func.func @cumsum_of_a_constant_counts(%n: tensor<1xi64>) -> tensor<?xi64> {
  %three = arith.constant dense<3> : tensor<i64>
  %b = ml.broadcast_to %three, %n : (tensor<i64>, tensor<1xi64>) -> tensor<?xi64>
  %s = ml.cumsum %b {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<?xi64>) -> tensor<?xi64> loc("count")
  func.return %s : tensor<?xi64>
}

// -----

// A float one keeps the scan (c * i rounds otherwise than the running sum).

// CHECK-LABEL: func.func @cumsum_of_a_float_constant_scans
// CHECK:         iterator_types = ["reduction"]
func.func @cumsum_of_a_float_constant_scans(%n: tensor<1xi64>) -> tensor<?xf32> {
  %c = arith.constant dense<0.1> : tensor<f32>
  %b = ml.broadcast_to %c, %n : (tensor<f32>, tensor<1xi64>) -> tensor<?xf32>
  %s = ml.cumsum %b {axis = 0 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}

// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A transpose is a copy generic whose input map is the inverse permutation; the
// dynamic result dim is sized by tensor.dim of the operand dim it comes from.

// CHECK-LABEL: func.func @transpose_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x?x4xf32>)
// CHECK:         %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[D1:.+]] = tensor.dim %[[X]], %[[C1]] : tensor<2x?x4xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty(%[[D1]]) : tensor<4x2x?xf32>
// CHECK-NEXT:    %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[X]] : tensor<2x?x4xf32>) outs(%[[E]] : tensor<4x2x?xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      linalg.yield %[[A]] : f32
// CHECK:         func.return %[[R]]

// LOC-LABEL:   func.func @transpose_dynamic
// LOC:           tensor.dim {{.*}} loc("model.py":3:4)
// LOC:           tensor.empty{{.*}} loc("model.py":3:4)
// LOC:           linalg.yield {{.*}} loc("model.py":3:4)
// LOC:           } -> tensor<4x2x?xf32> loc("model.py":3:4)
func.func @transpose_dynamic(%x: tensor<2x?x4xf32>) -> tensor<4x2x?xf32> {
  %0 = ml.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x?x4xf32>) -> tensor<4x2x?xf32> loc("model.py":3:4)
  func.return %0 : tensor<4x2x?xf32>
}

// -----

// broadcast_to: a static size-1 dim reads index 0 and missing leading dims are
// dropped; dynamic result dims come from the shape operand, and a dynamic operand dim
// facing one may be 1: it is checked and read at a run-time stride (see
// convert-ml-to-linalg-broadcast.mlir).

// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3x1xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<?x1xf32>, %[[S:[a-zA-Z0-9_]+]]: tensor<3xi64>)
// CHECK:         %[[E0:.+]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:      ins(%[[X]] : tensor<3x1xf32>) outs(%[[E0]] : tensor<2x3x4xf32>)
// CHECK:         %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[S0:.+]] = tensor.extract %[[S]][%[[C0]]] : tensor<3xi64>
// CHECK-NEXT:    %[[N0:.+]] = arith.index_cast %[[S0]] : i64 to index
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[S1:.+]] = tensor.extract %[[S]][%[[C1]]] : tensor<3xi64>
// CHECK-NEXT:    %[[N1:.+]] = arith.index_cast %[[S1]] : i64 to index
// CHECK:         cf.assert
// CHECK-NEXT:    %[[E1:.+]] = tensor.empty(%[[N0]], %[[N1]]) : tensor<?x?x5xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK-SAME:      outs(%[[E1]] : tensor<?x?x5xf32>)
// CHECK:           tensor.extract %[[Y]]
func.func @broadcast_to(%x: tensor<3x1xf32>, %y: tensor<?x1xf32>, %s: tensor<3xi64>) -> (tensor<2x3x4xf32>, tensor<?x?x5xf32>) {
  %0 = ml.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = ml.broadcast_to %y, %s : (tensor<?x1xf32>, tensor<3xi64>) -> tensor<?x?x5xf32>
  func.return %0, %1 : tensor<2x3x4xf32>, tensor<?x?x5xf32>
}

// -----

// A static reshape collapses to 1-D and expands to the result; the same shape is
// the operand itself.

// CHECK-LABEL: func.func @reshape_static
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0 : i64, 1 : i64, 2 : i64]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK-NEXT:    %[[R:.+]] = tensor.expand_shape %[[F]] {{\[}}[0 : i64, 1 : i64]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
// CHECK-NEXT:    func.return %[[R]], %[[X]]
func.func @reshape_static(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x3x4xf32>) {
  %0 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0, %1 : tensor<6x4xf32>, tensor<2x3x4xf32>
}

// -----

// A dynamic result dim comes from the shape operand; should it hold -1, it is the
// element count over the product of the other entries.

// CHECK-LABEL: func.func @reshape_shape_operand
// CHECK-SAME:    (%[[Y:[a-zA-Z0-9_]+]]: tensor<?x4xf32>, %[[S:[a-zA-Z0-9_]+]]: tensor<2xi64>)
// CHECK-NEXT:    %[[F:.+]] = tensor.collapse_shape %[[Y]] {{\[}}[0 : i64, 1 : i64]] : tensor<?x4xf32> into tensor<?xf32>
// CHECK:         %[[S0:.+]] = tensor.extract %[[S]][%{{.+}}] : tensor<2xi64>
// CHECK-NEXT:    %[[N0:.+]] = arith.index_cast %[[S0]] : i64 to index
// CHECK:         %[[D0:.+]] = tensor.dim %[[Y]], %{{.+}} : tensor<?x4xf32>
// CHECK-NEXT:    %[[C4:.+]] = arith.constant 4 : index
// CHECK-NEXT:    %[[COUNT:.+]] = arith.muli %[[D0]], %[[C4]] : index
// CHECK-NEXT:    %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[PROD:.+]] = arith.muli %[[N0]], %[[C2]] : index
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[NEG:.+]] = arith.subi %[[ZERO]], %[[PROD]] : index
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[DIV:.+]] = arith.maxsi %[[NEG]], %[[ONE]] : index
// CHECK-NEXT:    %[[INF:.+]] = arith.floordivsi %[[COUNT]], %[[DIV]] : index
// CHECK-NEXT:    %[[M1:.+]] = arith.constant -1 : index
// CHECK-NEXT:    %[[IS:.+]] = arith.cmpi eq, %[[N0]], %[[M1]] : index
// CHECK-NEXT:    %[[SIZE:.+]] = arith.select %[[IS]], %[[INF]], %[[N0]] : index
// CHECK-NEXT:    %[[R:.+]] = tensor.expand_shape %[[F]] {{\[}}[0 : i64, 1 : i64]] output_shape [%[[SIZE]], 2] : tensor<?xf32> into tensor<?x2xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @reshape_shape_operand(%y: tensor<?x4xf32>, %s: tensor<2xi64>) -> tensor<?x2xf32> {
  %0 = ml.reshape %y, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  func.return %0 : tensor<?x2xf32>
}

// -----

// A shape built from scalars gives its entries from them, not read back from the
// tensor (on the GPU a buffer the host would write and read through device memory).
// CHECK-LABEL: func.func @reshape_shape_of_scalars
// CHECK-SAME:    (%[[Y:[a-zA-Z0-9_]+]]: tensor<?x4xf32>, %[[N:[a-zA-Z0-9_]+]]: i64)
// CHECK-NOT:     tensor.extract
// CHECK:         %[[N0:.+]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NOT:     tensor.extract
// CHECK:         tensor.expand_shape {{.*}} output_shape [%{{.+}}, 2] : tensor<?xf32> into tensor<?x2xf32>
func.func @reshape_shape_of_scalars(%y: tensor<?x4xf32>, %n: i64) -> tensor<?x2xf32> {
  %two = arith.constant 2 : i64
  %s = tensor.from_elements %n, %two : tensor<2xi64>
  %0 = ml.reshape %y, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  func.return %0 : tensor<?x2xf32>
}

// -----

// expand_shape wants a static 1-D source exactly when its result is static, so a
// dynamic source reshaped to a static result is copied into the static 1-D type.

// CHECK-LABEL: func.func @reshape_dynamic_to_static
// CHECK:         %[[F:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0 : i64, 1 : i64]] : tensor<?x4xf32> into tensor<?xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<16xf32>
// CHECK-NEXT:    %[[C:.+]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK-SAME:      ins(%[[F]] : tensor<?xf32>) outs(%[[E]] : tensor<16xf32>)
// CHECK:         tensor.expand_shape %[[C]] {{\[}}[0 : i64, 1 : i64]] output_shape [2, 8] : tensor<16xf32> into tensor<2x8xf32>
func.func @reshape_dynamic_to_static(%y: tensor<?x4xf32>) -> tensor<2x8xf32> {
  %0 = ml.reshape %y : (tensor<?x4xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

// Rank-0 on either side: a copy generic that reads or writes at index 0.

// CHECK-LABEL: func.func @reshape_rank0
// CHECK:         tensor.empty() : tensor<f32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<() -> (0, 0)>, affine_map<() -> ()>], iterator_types = []}
// CHECK:         tensor.empty() : tensor<1x1x1xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
func.func @reshape_rank0(%z: tensor<1x1xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<1x1x1xf32>) {
  %0 = ml.reshape %z : (tensor<1x1xf32>) -> tensor<f32>
  %1 = ml.reshape %s : (tensor<f32>) -> tensor<1x1x1xf32>
  func.return %0, %1 : tensor<f32>, tensor<1x1x1xf32>
}

// -----

// concat: one insert_slice per input at the running offset along the axis (a
// negative axis counts from the end); dynamic offsets and sizes use tensor.dim.

// CHECK-LABEL: func.func @concat_dynamic
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x?xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x5xf32>)
// CHECK:         %[[DA:.+]] = tensor.dim %[[A]], %{{.+}} : tensor<2x?xf32>
// CHECK-NEXT:    %[[C5:.+]] = arith.constant 5 : index
// CHECK-NEXT:    %[[O2:.+]] = arith.addi %[[DA]], %[[C5]] : index
// CHECK-NEXT:    %[[N:.+]] = arith.addi %[[O2]], %[[DA]] : index
// CHECK-NEXT:    %[[E:.+]] = tensor.empty(%[[N]]) : tensor<2x?xf32>
// CHECK-NEXT:    %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, %[[DA]]] [1, 1] : tensor<2x?xf32> into tensor<2x?xf32>
// CHECK-NEXT:    %[[I1:.+]] = tensor.insert_slice %[[B]] into %[[I0]][0, %[[DA]]] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x?xf32>
// CHECK-NEXT:    %[[I2:.+]] = tensor.insert_slice %[[A]] into %[[I1]][0, %[[O2]]] [2, %[[DA]]] [1, 1] : tensor<2x?xf32> into tensor<2x?xf32>
// CHECK-NEXT:    func.return %[[I2]]
func.func @concat_dynamic(%a: tensor<2x?xf32>, %b: tensor<2x5xf32>) -> tensor<2x?xf32> {
  %0 = ml.concat %a, %b, %a {axis = -1 : i64} : (tensor<2x?xf32>, tensor<2x5xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  func.return %0 : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func.func @concat_static
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<5x3xi64>
// CHECK-NEXT:    %[[I0:.+]] = tensor.insert_slice %{{.+}} into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xi64> into tensor<5x3xi64>
// CHECK-NEXT:    tensor.insert_slice %{{.+}} into %[[I0]][2, 0] [3, 3] [1, 1] : tensor<3x3xi64> into tensor<5x3xi64>
func.func @concat_static(%a: tensor<2x3xi64>, %b: tensor<3x3xi64>) -> tensor<5x3xi64> {
  %0 = ml.concat %a, %b {axis = 0 : i64} : (tensor<2x3xi64>, tensor<3x3xi64>) -> tensor<5x3xi64>
  func.return %0 : tensor<5x3xi64>
}

// -----

// Positive steps: one extract_slice. Static dims clamp at compile time (end -1
// of 6 is 5; start -10 clamps to 0); a dynamic dim clamps with minsi/maxsi, except
// that the end value "to the very end" (int64 max) is the dim itself.

// CHECK-LABEL: func.func @slice_positive_steps
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<6x?xf32>)
// CHECK:         %[[D:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<6x?xf32>
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[FIRST:.+]] = arith.minsi %[[C1]], %[[D]] : index
// CHECK-NEXT:    %[[SPAN:.+]] = arith.subi %[[D]], %[[FIRST]] : index
// CHECK-NEXT:    %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[POS:.+]] = arith.maxsi %[[SPAN]], %[[C0]] : index
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[M1:.+]] = arith.subi %[[POS]], %[[ONE]] : index
// CHECK-NEXT:    %[[TWO:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[Q:.+]] = arith.floordivsi %[[M1]], %[[TWO]] : index
// CHECK-NEXT:    %[[ONE2:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LEN:.+]] = arith.addi %[[Q]], %[[ONE2]] : index
// CHECK-NEXT:    %[[R:.+]] = tensor.extract_slice %[[X]][0, %[[FIRST]]] [2, %[[LEN]]] [3, 2] : tensor<6x?xf32> to tensor<2x?xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @slice_positive_steps(%x: tensor<6x?xf32>) -> tensor<2x?xf32> {
  %0 = ml.slice %x {starts = array<i64: -10, 1>, ends = array<i64: -1, 9223372036854775807>, steps = array<i64: 3, 2>} : (tensor<6x?xf32>) -> tensor<2x?xf32>
  func.return %0 : tensor<2x?xf32>
}

// -----

// A negative step: a generic over the result reads x[first + i * step] with
// tensor.extract; x[::-1] on a dim of 4 starts at 3, and the end value "to the very
// beginning" (int64 min) clamps to -1 without arithmetic.

// CHECK-LABEL: func.func @slice_negative_steps
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x?xf32>)
// CHECK:         %[[D:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<4x?xf32>
// CHECK-NEXT:    %[[CM1:.+]] = arith.constant -1 : index
// CHECK-NEXT:    %[[DM1:.+]] = arith.addi %[[D]], %[[CM1]] : index
// CHECK-NEXT:    %[[CM1B:.+]] = arith.constant -1 : index
// CHECK-NEXT:    %[[FIRST:.+]] = arith.maxsi %[[DM1]], %[[CM1B]] : index
// CHECK-NEXT:    %[[CM1C:.+]] = arith.constant -1 : index
// CHECK-NEXT:    %[[SPAN:.+]] = arith.subi %[[FIRST]], %[[CM1C]] : index
// CHECK:         %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<4x?xf32>
// CHECK-NEXT:    %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<4x?xf32>)
// CHECK-NEXT:    ^bb0(%{{.+}}: f32):
// CHECK-NEXT:      %[[I0:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[S0:.+]] = arith.constant -1 : index
// CHECK-NEXT:      %[[T0:.+]] = arith.muli %[[I0]], %[[S0]] : index
// CHECK-NEXT:      %[[F0:.+]] = arith.constant 3 : index
// CHECK-NEXT:      %[[P0:.+]] = arith.addi %[[T0]], %[[F0]] : index
// CHECK-NEXT:      %[[I1:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[S1:.+]] = arith.constant -2 : index
// CHECK-NEXT:      %[[T1:.+]] = arith.muli %[[I1]], %[[S1]] : index
// CHECK-NEXT:      %[[P1:.+]] = arith.addi %[[T1]], %[[FIRST]] : index
// CHECK-NEXT:      %[[V:.+]] = tensor.extract %[[X]][%[[P0]], %[[P1]]] : tensor<4x?xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         func.return %[[R]]
func.func @slice_negative_steps(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = ml.slice %x {starts = array<i64: -1, -1>, ends = array<i64: -9223372036854775808, -9223372036854775808>, steps = array<i64: -1, -2>} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  func.return %0 : tensor<4x?xf32>
}

// -----

// gather on a negative axis: a check of the indices first (the farthest out of range,
// per row, then over the rows; reported by the assert), then the gather generic with
// the indices on the index loops; a negative index wraps by the (dynamic) axis size
// and is clamped into [0, max(n - 1, 0)] so that the read stays in bounds.

// CHECK-LABEL: func.func @gather_negative_axis
// CHECK-SAME:    (%[[D:[a-zA-Z0-9_]+]]: tensor<5x?x3xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<2x4xi32>)
// CHECK:         %[[N:.+]] = tensor.dim %[[D]], %{{.+}} : tensor<5x?x3xf32>
// CHECK:         %[[ROWS:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[I]] : tensor<2x4xi32>) outs(%{{.+}} : tensor<2xi64>)
// CHECK:           arith.shrsi
// CHECK:           arith.xori
// CHECK:         %[[ALL:.+]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[ROWS]] : tensor<2xi64>) outs(%{{.+}} : tensor<i64>)
// CHECK:         %[[WORST:.+]] = tensor.extract %[[ALL]][] : tensor<i64>
// CHECK:         %[[LOW:.+]] = arith.maxsi %[[WORST]], %{{.+}} : i64
// CHECK-NEXT:    %[[CLAMPED:.+]] = arith.minsi %[[LOW]], %{{.+}} : i64
// CHECK-NEXT:    %[[OK:.+]] = arith.cmpi eq, %[[WORST]], %[[CLAMPED]] : i64
// CHECK-NEXT:    cf.assert %[[OK]], "'ml.gather' op index {} is out of range [-n, n) (n its size) of data dim 1" {mlc.reports_value}
// CHECK:         %[[HIGH:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<5x2x4x3xf32>
// CHECK-NEXT:    %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[I]] : tensor<2x4xi32>) outs(%[[E]] : tensor<5x2x4x3xf32>)
// CHECK-NEXT:    ^bb0(%[[IDX:.+]]: i32, %{{.+}}: f32):
// CHECK-NEXT:      %[[L0:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[K:.+]] = arith.index_cast %[[IDX]] : i32 to index
// CHECK-NEXT:      %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[NEG:.+]] = arith.cmpi slt, %[[K]], %[[Z]] : index
// CHECK-NEXT:      %[[W:.+]] = arith.addi %[[K]], %[[N]] : index
// CHECK-NEXT:      %[[SEL:.+]] = arith.select %[[NEG]], %[[W]], %[[K]] : index
// CHECK-NEXT:      %[[SAFE:.+]] = arith.minui %[[SEL]], %[[HIGH]] : index
// CHECK-NEXT:      %[[L3:.+]] = linalg.index 3 : index
// CHECK-NEXT:      %[[V:.+]] = tensor.extract %[[D]][%[[L0]], %[[SAFE]], %[[L3]]] : tensor<5x?x3xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK:         func.return %[[R]]
func.func @gather_negative_axis(%d: tensor<5x?x3xf32>, %i: tensor<2x4xi32>) -> tensor<5x2x4x3xf32> {
  %0 = ml.gather %d, %i {axis = -2 : i64} : (tensor<5x?x3xf32>, tensor<2x4xi32>) -> tensor<5x2x4x3xf32>
  func.return %0 : tensor<5x2x4x3xf32>
}

// -----

// Scalar i64 indices on axis 0 of a static table: the index map has no results; the
// check reads the one index.

// CHECK-LABEL: func.func @gather_scalar_index
// CHECK:         %[[ONE:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK:         arith.cmpi eq, %[[ONE]], %{{.+}} : i64
// CHECK-NEXT:    cf.assert {{.*}}"'ml.gather' op index {} is out of range [-10, 10) of data dim 0"
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK-NEXT:    ^bb0(%[[IDX:.+]]: i64, %{{.+}}: f16):
// CHECK-NEXT:      %[[K:.+]] = arith.index_cast %[[IDX]] : i64 to index
// CHECK:           %[[C:.+]] = arith.constant 10 : index
// CHECK-NEXT:      arith.addi %[[K]], %[[C]] : index
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<10x16xf16>
func.func @gather_scalar_index(%d: tensor<10x16xf16>, %i: tensor<i64>) -> tensor<16xf16> {
  %0 = ml.gather %d, %i {axis = 0 : i64} : (tensor<10x16xf16>, tensor<i64>) -> tensor<16xf16>
  func.return %0 : tensor<16xf16>
}

// -----

// Constant indices are checked when compiling: no run-time check.

// CHECK-LABEL: func.func @gather_constant_indices
// CHECK-NOT:     cf.assert
// CHECK:         linalg.generic
func.func @gather_constant_indices(%d: tensor<10x16xf32>) -> tensor<2x16xf32> {
  %i = arith.constant dense<[3, -10]> : tensor<2xi64>
  %0 = ml.gather %d, %i {axis = 0 : i64} : (tensor<10x16xf32>, tensor<2xi64>) -> tensor<2x16xf32>
  func.return %0 : tensor<2x16xf32>
}

// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Softmax is an online row kernel: one reduction keeps the running max and the
// rescaled sum (one exp per element, zero where both sides are -inf), then one
// elementwise pass normalises. Two passes over x in all.

// CHECK-LABEL: func.func @softmax_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x?x16xf64>)
// CHECK:           arith.constant 0xfff0000000000000 : f64
// CHECK:         %[[M:[a-zA-Z0-9_]+]], %[[S:[a-zA-Z0-9_]+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<2x?x16xf64>)
// CHECK-NEXT:    ^bb0(%[[XX:.+]]: f64, %[[MM:.+]]: f64, %[[SS:.+]]: f64):
// CHECK-NEXT:      %[[NEWM:.+]] = arith.maximumf %[[MM]], %[[XX]] : f64
// CHECK-NEXT:      %[[LOW:.+]] = arith.minimumf %[[MM]], %[[XX]] : f64
// CHECK-NEXT:      %[[GAP:.+]] = arith.subf %[[LOW]], %[[NEWM]] fastmath<reassoc,contract> : f64
// CHECK-NEXT:      %[[ORD:.+]] = arith.cmpf ord, %[[GAP]], %[[GAP]] : f64
// CHECK-NEXT:      %[[EXP:.+]] = math.exp %[[GAP]] : f64
// CHECK:           %[[E:.+]] = arith.select %[[ORD]], %[[EXP]], %{{.+}} : f64
// CHECK:           %[[GROWN:.+]] = arith.addf %{{.+}}, %{{.+}} fastmath<reassoc,contract> : f64
// CHECK-NEXT:      %[[KEPT:.+]] = arith.addf %[[SS]], %[[E]] fastmath<reassoc,contract> : f64
// CHECK-NEXT:      %[[GT:.+]] = arith.cmpf ogt, %[[XX]], %[[MM]] : f64
// CHECK-NEXT:      %[[NEWS:.+]] = arith.select %[[GT]], %[[GROWN]], %[[KEPT]] : f64
// CHECK-NEXT:      linalg.yield %[[NEWM]], %[[NEWS]] : f64, f64
// CHECK:         %[[D:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<2x?x16xf64>
// CHECK-NEXT:    %[[E2:.+]] = tensor.empty(%[[D]]) : tensor<2x?x16xf64>
// CHECK-NEXT:    %[[Y:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[M]], %[[S]] : {{.*}}) outs(%[[E2]] : tensor<2x?x16xf64>)
// CHECK:           arith.subf
// CHECK-NEXT:      math.exp
// CHECK-NEXT:      arith.divf
// CHECK:         func.return %[[Y]]

// LOC-LABEL:   func.func @softmax_dynamic
// LOC:           arith.maximumf {{.*}} loc("nn.py":7:1)
// LOC:           math.exp {{.*}} loc("nn.py":7:1)
// LOC:           arith.divf {{.*}} loc("nn.py":7:1)
func.func @softmax_dynamic(%x: tensor<2x?x16xf64>) -> tensor<2x?x16xf64> {
  %0 = ml.softmax %x {axis = 1 : i64} : (tensor<2x?x16xf64>) -> tensor<2x?x16xf64> loc("nn.py":7:1)
  func.return %0 : tensor<2x?x16xf64>
}

// -----

// Along a static last axis that is a multiple of the lanes (16 here), the running
// max and sum are kept per lane: x is viewed as rows of (32/16) x 16, the first
// reduction keeps one state per lane (its innermost loop, over the lanes, is
// contiguous and independent: a vector loop), and a second one merges the lanes of
// each row with the same rescaling (sums weighted by exp of the max gap).

// CHECK-LABEL: func.func @softmax_lanes
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x32xf32>)
// CHECK:         %[[ROWS:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x32xf32>
// CHECK:         %[[SPLIT:.+]] = tensor.expand_shape %[[X]] {{\[}}[0 : i64], [1 : i64, 2 : i64]] output_shape [%[[ROWS]], 2, 16] : tensor<?x32xf32> into tensor<?x2x16xf32>
// CHECK:         %[[ML:[a-zA-Z0-9_]+]], %[[SL:[a-zA-Z0-9_]+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[SPLIT]] : tensor<?x2x16xf32>) outs({{.*}} : tensor<?x16xf32>, tensor<?x16xf32>)
// CHECK:           arith.maximumf
// CHECK:           math.exp
// CHECK:         } -> (tensor<?x16xf32>, tensor<?x16xf32>)
// CHECK:         %[[M:[a-zA-Z0-9_]+]], %[[S:[a-zA-Z0-9_]+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%[[ML]], %[[SL]] : tensor<?x16xf32>, tensor<?x16xf32>)
// CHECK-NEXT:    ^bb0(%[[MB:.+]]: f32, %[[SB:.+]]: f32, %[[MA:.+]]: f32, %[[SA:.+]]: f32):
// CHECK-NEXT:      %[[NEWM:.+]] = arith.maximumf %[[MA]], %[[MB]] : f32
// CHECK-NEXT:      %[[LOW:.+]] = arith.minimumf %[[MA]], %[[MB]] : f32
// CHECK-NEXT:      %[[GAP:.+]] = arith.subf %[[LOW]], %[[NEWM]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[ORD:.+]] = arith.cmpf ord, %[[GAP]], %[[GAP]] : f32
// CHECK-NEXT:      %[[EXP:.+]] = math.exp %[[GAP]] : f32
// CHECK-NEXT:      %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[E:.+]] = arith.select %[[ORD]], %[[EXP]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[SCALED:.+]] = arith.mulf %[[SA]], %[[E]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[GROWN:.+]] = arith.addf %[[SCALED]], %[[SB]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[WEIGHED:.+]] = arith.mulf %[[SB]], %[[E]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[KEPT:.+]] = arith.addf %[[SA]], %[[WEIGHED]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[GT:.+]] = arith.cmpf ogt, %[[MB]], %[[MA]] : f32
// CHECK-NEXT:      %[[NEWS:.+]] = arith.select %[[GT]], %[[GROWN]], %[[KEPT]] : f32
// CHECK-NEXT:      linalg.yield %[[NEWM]], %[[NEWS]] : f32, f32
// CHECK:         %[[Y:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[M]], %[[S]] : {{.*}})
// CHECK:         func.return %[[Y]]

// LOC-LABEL:   func.func @softmax_lanes
// LOC:           tensor.expand_shape {{.*}} loc("nn.py":3:5)
// LOC:           arith.maximumf {{.*}} loc("nn.py":3:5)
func.func @softmax_lanes(%x: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %0 = ml.softmax %x {axis = -1 : i64} : (tensor<?x32xf32>) -> tensor<?x32xf32> loc("nn.py":3:5)
  func.return %0 : tensor<?x32xf32>
}

// -----

// A last axis of 24 takes 8 lanes; one of 12 (under two vectors of 8) and a softmax
// along another axis keep the scalar running state.

// CHECK-LABEL: func.func @softmax_lane_counts
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0 : i64], [1 : i64, 2 : i64]] output_shape [3, 3, 8] : tensor<3x24xf32> into tensor<3x3x8xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         func.return
func.func @softmax_lane_counts(%x: tensor<3x24xf32>, %y: tensor<3x12xf32>, %z: tensor<32x32xf32>) -> (tensor<3x24xf32>, tensor<3x12xf32>, tensor<32x32xf32>) {
  %0 = ml.softmax %x {axis = 1 : i64} : (tensor<3x24xf32>) -> tensor<3x24xf32>
  %1 = ml.softmax %y {axis = 1 : i64} : (tensor<3x12xf32>) -> tensor<3x12xf32>
  %2 = ml.softmax %z {axis = 0 : i64} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %0, %1, %2 : tensor<3x24xf32>, tensor<3x12xf32>, tensor<32x32xf32>
}

// -----

// Layer norm over the last dim: one pass sums x - k and (x - k)^2, k the row's first
// element (read through the keepdims map); a generic over the rows makes the mean and
// rsqrt(var + epsilon); a second pass normalises. Scale and bias broadcast against
// x's trailing dims, the count (16) is a scalar operand, and epsilon keeps the digits
// the user wrote.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x8x16xf32>, %[[G:[a-zA-Z0-9_]+]]: tensor<16xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1xf32>)
// CHECK:         %[[N:.+]] = arith.constant 1.600000e+01 : f32
// CHECK:         %[[S1:[a-zA-Z0-9_]+]], %[[S2:[a-zA-Z0-9_]+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[X]] : tensor<2x8x16xf32>, tensor<2x8x16xf32>)
// CHECK-NEXT:    ^bb0(%[[XX:.+]]: f32, %[[K:.+]]: f32, %[[A1:.+]]: f32, %[[A2:.+]]: f32):
// CHECK-NEXT:      %[[T:.+]] = arith.subf %[[XX]], %[[K]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[N1:.+]] = arith.addf %[[A1]], %[[T]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[SQ:.+]] = arith.mulf %[[T]], %[[T]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      %[[N2:.+]] = arith.addf %[[A2]], %[[SQ]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      linalg.yield %[[N1]], %[[N2]] : f32, f32
// CHECK:         %[[MEAN:[a-zA-Z0-9_]+]], %[[RSTD:[a-zA-Z0-9_]+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[S1]], %[[S2]], %[[N]] : tensor<2x8x16xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>, f32)
// CHECK:           arith.maximumf
// CHECK:           arith.constant 1.000000e-05 : f32
// CHECK:           math.rsqrt
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[MEAN]], %[[RSTD]], %[[G]], %[[B]] :
func.func @layer_norm(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<1xf32>) -> tensor<2x8x16xf32> {
  %0 = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<2x8x16xf32>
  func.return %0 : tensor<2x8x16xf32>
}

// -----

// Over several dims with f64 data: the epsilon is the decimal 1e-5, not the f32
// value widened; the count of a dynamic normalised dim comes from tensor.dim.

// CHECK-LABEL: func.func @layer_norm_f64_two_dims
// CHECK:         tensor.dim
// CHECK:         arith.muli
// CHECK:         arith.sitofp %{{.+}} : i64 to f64
// CHECK:         iterator_types = ["parallel", "reduction", "reduction"]
// CHECK:           arith.constant 1.000000e-05 : f64
// CHECK:         affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @layer_norm_f64_two_dims(%x: tensor<2x?x16xf64>, %g: tensor<?x16xf64>, %b: tensor<16xf64>) -> tensor<2x?x16xf64> {
  %0 = ml.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x?x16xf64>, tensor<?x16xf64>, tensor<16xf64>) -> tensor<2x?x16xf64>
  func.return %0 : tensor<2x?x16xf64>
}

// -----

// Batch norm is one generic reading the per-channel operands at d1.

// CHECK-LABEL: func.func @batch_norm
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<2x3x4x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-NEXT:    ^bb0(%[[X:.+]]: f32, %[[S:.+]]: f32, %[[B:.+]]: f32, %[[M:.+]]: f32, %[[V:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[EPS:.+]] = arith.constant 1.000000e-03 : f32
// CHECK-NEXT:      %[[VE:.+]] = arith.addf %[[V]], %[[EPS]] : f32
// CHECK-NEXT:      %[[R:.+]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT:      %[[C:.+]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[NRM:.+]] = arith.mulf %[[C]], %[[R]] : f32
// CHECK-NEXT:      %[[SC:.+]] = arith.mulf %[[NRM]], %[[S]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.addf %[[SC]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = ml.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-03 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  func.return %0 : tensor<2x3x4x4xf32>
}

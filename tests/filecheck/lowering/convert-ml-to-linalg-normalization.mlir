// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Softmax is stable: max-reduce (keepdims), exp(x - max), sum-reduce, divide.

// CHECK-LABEL: func.func @softmax_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x?x16xf64>)
// CHECK:           arith.constant 0xfff0000000000000 : f64
// CHECK:         %[[M:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<2x?x16xf64>)
// CHECK:           arith.maximumf
// CHECK:         %[[D:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<2x?x16xf64>
// CHECK-NEXT:    %[[E1:.+]] = tensor.empty(%[[D]]) : tensor<2x?x16xf64>
// CHECK-NEXT:    %[[EXP:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[M]] : {{.*}}) outs(%[[E1]] : tensor<2x?x16xf64>)
// CHECK:           arith.subf
// CHECK-NEXT:      math.exp
// CHECK:         %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[EXP]] : tensor<2x?x16xf64>)
// CHECK:           arith.addf
// CHECK:         %[[E2:.+]] = tensor.empty(%[[D]]) : tensor<2x?x16xf64>
// CHECK-NEXT:    %[[Y:.+]] = linalg.generic {{.*}} ins(%[[EXP]], %[[S]] : {{.*}}) outs(%[[E2]] : tensor<2x?x16xf64>)
// CHECK:           arith.divf
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

// Layer norm over the last dim: sum, sum of squared deviations from the mean, then
// the normalisation; scale and bias broadcast against x's trailing dims, the count
// (16) is a scalar operand, and epsilon keeps the digits the user wrote.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x8x16xf32>, %[[G:[a-zA-Z0-9_]+]]: tensor<16xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<1xf32>)
// CHECK:         %[[N:.+]] = arith.constant 1.600000e+01 : f32
// CHECK:         %[[S1:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x8x16xf32>)
// CHECK:         %[[S2:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[S1]], %[[N]] : tensor<2x8x16xf32>, tensor<2x8x1xf32>, f32)
// CHECK-NEXT:    ^bb0(%[[XX:.+]]: f32, %[[T:.+]]: f32, %[[NN:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[MEAN:.+]] = arith.divf %[[T]], %[[NN]] : f32
// CHECK-NEXT:      %[[DEV:.+]] = arith.subf %[[XX]], %[[MEAN]] : f32
// CHECK-NEXT:      %[[SQ:.+]] = arith.mulf %[[DEV]], %[[DEV]] : f32
// CHECK-NEXT:      arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[S1]], %[[S2]], %[[N]], %[[G]], %[[B]] :
// CHECK:           arith.constant 1.000000e-05 : f32
// CHECK:           math.rsqrt
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
// CHECK:         affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK:           arith.constant 1.000000e-05 : f64
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

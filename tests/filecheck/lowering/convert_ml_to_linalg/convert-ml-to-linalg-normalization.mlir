// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg{online-softmax=true}' \
// RUN:   | filecheck %s --check-prefix=ONLINE

// Softmax is a row kernel with one exp per element: a max reduction, then exp(x - max)
// stored once while the row's sum accumulates, then per-row reciprocals and a pass that
// scales the stored exps in place (the generic's output is the exps themselves).

// CHECK-LABEL: func.func @softmax_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x?x16xf64>)
// CHECK:         %[[LOW:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x1x16xf64>)
// CHECK:           arith.constant 0xfff0000000000000 : f64
// CHECK:         %[[ZERO:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<2x1x16xf64>)
// CHECK:         %[[M:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<2x?x16xf64>) outs(%[[LOW]] : tensor<2x1x16xf64>)
// CHECK-NEXT:    ^bb0(%[[XX:.+]]: f64, %[[MM:.+]]: f64):
// CHECK-NEXT:      %[[NEWM:.+]] = arith.maximumf %[[MM]], %[[XX]] : f64
// CHECK-NEXT:      linalg.yield %[[NEWM]] : f64
// CHECK:         %[[EMPTY:.+]] = tensor.empty(%{{.+}}) : tensor<2x?x16xf64>
// CHECK-NEXT:    %[[E:[a-zA-Z0-9_]+]], %[[S:[a-zA-Z0-9_]+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]], %[[M]] : tensor<2x?x16xf64>, tensor<2x1x16xf64>) outs(%[[EMPTY]], %[[ZERO]] : tensor<2x?x16xf64>, tensor<2x1x16xf64>)
// CHECK-NEXT:    ^bb0(%[[XE:.+]]: f64, %[[ME:.+]]: f64, %{{.+}}: f64, %[[SE:.+]]: f64):
// CHECK-NEXT:      %[[T:.+]] = arith.subf %[[XE]], %[[ME]] fastmath<reassoc,contract> : f64
// CHECK-NEXT:      %[[EXP:.+]] = math.exp %[[T]] : f64
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[SE]], %[[EXP]] fastmath<reassoc,contract> : f64
// CHECK-NEXT:      linalg.yield %[[EXP]], %[[SUM]] : f64, f64
// CHECK:         %[[INV:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<2x1x16xf64>)
// CHECK-NEXT:    ^bb0(%[[SI:.+]]: f64, %{{.+}}: f64):
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:      %[[R:.+]] = arith.divf %[[ONE]], %[[SI]] : f64
// CHECK-NEXT:      linalg.yield %[[R]] : f64
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[INV]] : tensor<2x1x16xf64>) outs(%[[E]] : tensor<2x?x16xf64>)
// CHECK-NEXT:    ^bb0(%[[RY:.+]]: f64, %[[EY:.+]]: f64):
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[EY]], %[[RY]] : f64
// CHECK-NEXT:      linalg.yield %[[P]] : f64
// CHECK:         func.return %[[Y]]

// LOC-LABEL:   func.func @softmax_dynamic
// LOC:           arith.maximumf {{.*}} loc("nn.py":7:1)
// LOC:           math.exp {{.*}} loc("nn.py":7:1)
// LOC:           arith.divf {{.*}} loc("nn.py":7:1)
// LOC:           arith.mulf {{.*}} loc("nn.py":7:1)
func.func @softmax_dynamic(%x: tensor<2x?x16xf64>) -> tensor<2x?x16xf64> {
  %0 = ml.softmax %x {axis = 1 : i64} : (tensor<2x?x16xf64>) -> tensor<2x?x16xf64> loc("nn.py":7:1)
  func.return %0 : tensor<2x?x16xf64>
}

// -----

// Along the last axis, of any length (a prime here): the same four generics, and no
// exp anywhere but in the exp-and-sum pass, so one per element.

// CHECK-LABEL: func.func @softmax_last_axis
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x31xf32>)
// CHECK-NOT:     math.exp
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x31xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.maximumf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %{{.+}} : tensor<?x31xf32>, tensor<?x1xf32>) outs(%{{.+}}, %{{.+}} : tensor<?x31xf32>, tensor<?x1xf32>)
// CHECK:           math.exp
// CHECK-NOT:     math.exp
// CHECK:         func.return
// With `online-softmax` (the GPU pipeline's form): one reduction keeping the running
// max and sum, one exp per element there, then a normalising pass with another.

// ONLINE-LABEL: func.func @softmax_last_axis
// ONLINE-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x31xf32>)
// ONLINE:         %[[M:[a-zA-Z0-9_]+]], %[[S:[a-zA-Z0-9_]+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x31xf32>) outs(%{{.+}}, %{{.+}} : tensor<?x1xf32>, tensor<?x1xf32>)
// ONLINE:           arith.maximumf
// ONLINE:           math.exp
// ONLINE-NOT:       math.exp
// ONLINE:           linalg.yield
// ONLINE:         %[[Y:[a-zA-Z0-9_]+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[M]], %[[S]] : tensor<?x31xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
// ONLINE:           math.exp
// ONLINE-NEXT:      arith.divf
// ONLINE:         func.return %[[Y]]
func.func @softmax_last_axis(%x: tensor<?x31xf32>) -> tensor<?x31xf32> {
  %0 = ml.softmax %x {axis = -1 : i64} : (tensor<?x31xf32>) -> tensor<?x31xf32>
  func.return %0 : tensor<?x31xf32>
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

// -----

// A bf16 softmax (and layer or batch norm) runs in f32 between casts: the input is
// extended, the statistics are f32, the result is rounded once.

// CHECK-LABEL: func.func @bf16_softmax
// CHECK:         linalg.generic {{.*}} ins(%x : tensor<2x8xbf16>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: bf16, %{{.*}}: f32):
// CHECK-NEXT:      arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT:     reduction{{.*}}bf16
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8xbf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:         func.return %[[R]] : tensor<2x8xbf16>

// LOC-LABEL: func.func @bf16_softmax
// LOC:         arith.extf {{.*}} loc("{{.*}}convert-ml-to-linalg-normalization.mlir":[[# @LINE + 2]]:3)
func.func @bf16_softmax(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %s = ml.softmax %x {axis = 1 : i64} : (tensor<2x8xbf16>) -> tensor<2x8xbf16>
  func.return %s : tensor<2x8xbf16>
}

// -----

// So does an f16 one: its own exp, sum and division were an ulp off the f32 result.

// CHECK-LABEL: func.func @f16_softmax
// CHECK:         linalg.generic {{.*}} ins(%x : tensor<3x5xf16>) outs(%{{.*}} : tensor<3x5xf32>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f16, %{{.*}}: f32):
// CHECK-NEXT:      arith.extf %{{.*}} : f16 to f32
// CHECK-NOT:     reduction{{.*}}f16
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x5xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         func.return %[[R]] : tensor<3x5xf16>
func.func @f16_softmax(%x: tensor<3x5xf16>) -> tensor<3x5xf16> {
  %s = ml.softmax %x {axis = 1 : i64} : (tensor<3x5xf16>) -> tensor<3x5xf16>
  func.return %s : tensor<3x5xf16>
}

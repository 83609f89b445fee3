// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A reduction fills its output with the identity, then accumulates in one generic
// whose reduced loops are `reduction`; without keepdims the output map drops them.

// CHECK-LABEL: func.func @sum_f32
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[Z:.+]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[E]] : tensor<4xf32>)
// CHECK:           arith.constant 0.000000e+00 : f32
// CHECK:         %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%[[X]] : tensor<4x8xf32>) outs(%[[Z]] : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:      %[[R:.+]] = arith.addf %[[IN]], %[[ACC]] fastmath<reassoc,contract> : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         func.return %[[S]]

// LOC-LABEL:   func.func @sum_f32
// LOC:           tensor.empty() : tensor<4xf32> loc("r.py":2:5)
// LOC:           arith.addf {{.*}} loc("r.py":2:5)
func.func @sum_f32(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32> loc("r.py":2:5)
  func.return %0 : tensor<4xf32>
}

// -----

// A mean of integers sums, then divides (truncating) by the count of reduced
// elements; a dynamic reduced dim gives the count through tensor.dim. With keepdims
// the reduced dim stays as index 0 in the output map.

// CHECK-LABEL: func.func @mean_keepdims_dynamic_i32
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x?xi32>)
// CHECK:         %[[Z:.+]] = linalg.generic
// CHECK:           arith.constant 0 : i32
// CHECK:         %[[S:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      outs(%[[Z]] : tensor<4x1xi32>)
// CHECK:           arith.addi
// CHECK:         %[[D:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<4x?xi32>
// CHECK-NEXT:    %[[N:.+]] = arith.index_cast %[[D]] : index to i32
// CHECK-NEXT:    %[[E:.+]] = tensor.empty() : tensor<4x1xi32>
// CHECK-NEXT:    %[[M:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[S]], %[[N]] : tensor<4x1xi32>, i32) outs(%[[E]] : tensor<4x1xi32>)
// CHECK:           arith.divsi
// CHECK:         func.return %[[M]]
func.func @mean_keepdims_dynamic_i32(%x: tensor<4x?xi32>) -> tensor<4x1xi32> {
  %0 = ml.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<4x?xi32>) -> tensor<4x1xi32>
  func.return %0 : tensor<4x1xi32>
}

// -----

// A float mean over several dims, one dynamic: the count is a product converted to
// the element type.

// CHECK-LABEL: func.func @mean_f64_two_axes
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x3x5xf64>)
// CHECK:         iterator_types = ["reduction", "parallel", "reduction"]
// CHECK:         %[[D0:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x3x5xf64>
// CHECK-NEXT:    %[[C5:.+]] = arith.constant 5 : index
// CHECK-NEXT:    %[[P:.+]] = arith.muli %[[D0]], %[[C5]] : index
// CHECK-NEXT:    %[[I:.+]] = arith.index_cast %[[P]] : index to i64
// CHECK-NEXT:    %[[F:.+]] = arith.sitofp %[[I]] : i64 to f64
// CHECK:           arith.divf %{{.+}}, %{{.+}} : f64
func.func @mean_f64_two_axes(%x: tensor<?x3x5xf64>) -> tensor<3xf64> {
  %0 = ml.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<?x3x5xf64>) -> tensor<3xf64>
  func.return %0 : tensor<3xf64>
}

// -----

// Max and min start from -inf / +inf (floats) or the integer type's min / max;
// reducing every dim gives a rank-0 result with an empty output map.

// CHECK-LABEL: func.func @max_min_all_axes
// CHECK:         tensor.empty() : tensor<f64>
// CHECK:           arith.constant 0xfff0000000000000 : f64
// CHECK:         indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]
// CHECK:           arith.maximumf %{{.+}}, %{{.+}} : f64
// CHECK:           arith.constant 0x7ff0000000000000 : f64
// CHECK:           arith.minimumf %{{.+}}, %{{.+}} : f64
// CHECK:           arith.constant -9223372036854775808 : i64
// CHECK:           arith.maxsi %{{.+}}, %{{.+}} : i64
// CHECK:           arith.constant 2147483647 : i32
// CHECK:           arith.minsi %{{.+}}, %{{.+}} : i32
func.func @max_min_all_axes(%x: tensor<2x3xf64>, %l: tensor<2x3xi64>, %i: tensor<2x3xi32>) -> (tensor<f64>, tensor<f64>, tensor<3xi64>, tensor<2xi32>) {
  %0 = ml.reduce_max %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf64>) -> tensor<f64>
  %1 = ml.reduce_min %x {axes = array<i64: -1, 0>, keepdims = false} : (tensor<2x3xf64>) -> tensor<f64>
  %2 = ml.reduce_max %l {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xi64>) -> tensor<3xi64>
  %3 = ml.reduce_min %i {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xi32>) -> tensor<2xi32>
  func.return %0, %1, %2, %3 : tensor<f64>, tensor<f64>, tensor<3xi64>, tensor<2xi32>
}

// -----

// Empty axes reduce nothing (numpy's axis=()): all loops are parallel.

// CHECK-LABEL: func.func @sum_no_axes
// CHECK:         indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]
func.func @sum_no_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ml.reduce_sum %x {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// A bf16 sum or mean accumulates in f32 (each element extended in the body) and is
// rounded to bf16 once, in a last elementwise generic.

// CHECK-LABEL: func.func @bf16_mean
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%x : tensor<4x?xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[E:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT:      arith.addf %[[W]], %[[ACC]] fastmath<reassoc,contract> : f32
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xbf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:         func.return %[[R]] : tensor<4xbf16>

// LOC-LABEL: func.func @bf16_mean
// LOC:         arith.truncf {{.*}} loc("{{.*}}convert-ml-to-linalg-reduction.mlir":[[# @LINE + 2]]:3)
func.func @bf16_mean(%x: tensor<4x?xbf16>) -> tensor<4xbf16> {
  %s = ml.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x?xbf16>) -> tensor<4xbf16>
  func.return %s : tensor<4xbf16>
}

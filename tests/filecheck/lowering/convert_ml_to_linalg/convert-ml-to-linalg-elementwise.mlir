// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Each elementwise op is one all-parallel generic over a tensor.empty of the result;
// a dynamic result dim is sized by tensor.dim of an operand, and a missing leading dim
// of a broadcast operand is dropped from its map. The new ops keep the op's location.

// CHECK-LABEL: func.func @add_dynamic_rank_mismatch
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<8xf32>)
// CHECK:         %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D0:.+]] = tensor.dim %[[A]], %[[C0]] : tensor<?x8xf32>
// CHECK-NEXT:    %[[E:.+]] = tensor.empty(%[[D0]]) : tensor<?x8xf32>
// CHECK-NEXT:    %[[R:.+]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<?x8xf32>, tensor<8xf32>) outs(%[[E]] : tensor<?x8xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         func.return %[[R]]

// LOC-LABEL:   func.func @add_dynamic_rank_mismatch
// LOC:           tensor.dim {{.*}} loc("model.py":4:2)
// LOC:           tensor.empty{{.*}} loc("model.py":4:2)
// LOC:           arith.addf {{.*}} loc("model.py":4:2)
// LOC:           } -> tensor<?x8xf32> loc("model.py":4:2)
func.func @add_dynamic_rank_mismatch(%a: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %0 = ml.add %a, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> loc("model.py":4:2)
  func.return %0 : tensor<?x8xf32>
}

// -----

// A static size-1 dim facing a larger dim reads index 0; one facing a size-1 output
// dim does not. numpy's != is true on NaN, so "ne" is the unordered `une`.

// CHECK-LABEL: func.func @cmp_size_one_dims
// CHECK:         tensor.empty() : tensor<1x4x8xi1>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK:           arith.cmpf une, %{{.+}}, %{{.+}} : f64
func.func @cmp_size_one_dims(%a: tensor<1x1x8xf64>, %b: tensor<4x1xf64>) -> tensor<1x4x8xi1> {
  %0 = ml.cmp "ne", %a, %b : (tensor<1x1x8xf64>, tensor<4x1xf64>) -> tensor<1x4x8xi1>
  func.return %0 : tensor<1x4x8xi1>
}

// -----

// A size-1 dim facing a dynamic output dim may be broadcast, so it reads index 0;
// the dynamic size comes from the operand whose dim is dynamic.

// CHECK-LABEL: func.func @sub_dynamic_against_one
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<1x?xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<?x1xf32>)
// CHECK-DAG:     %[[D0:.+]] = tensor.dim %[[B]], %{{.+}} : tensor<?x1xf32>
// CHECK-DAG:     %[[D1:.+]] = tensor.dim %[[A]], %{{.+}} : tensor<1x?xf32>
// CHECK:         tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK:         indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:           arith.subf
func.func @sub_dynamic_against_one(%a: tensor<1x?xf32>, %b: tensor<?x1xf32>) -> tensor<?x?xf32> {
  %0 = ml.sub %a, %b : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}

// -----

// Rank-0 tensors iterate over no loops; a rank-0 operand of a larger result has
// an empty map.

// CHECK-LABEL: func.func @rank_zero
// CHECK:         tensor.empty() : tensor<f32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
// CHECK:           arith.mulf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK:           arith.divf
func.func @rank_zero(%s: tensor<f32>, %v: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %0 = ml.mul %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = ml.div %v, %0 : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %0, %1 : tensor<f32>, tensor<3xf32>
}

// -----

// Integers are signed; float max/min propagate NaN.

// CHECK-LABEL: func.func @integer_and_float_arith
// CHECK:         arith.divsi %{{.+}}, %{{.+}} : i32
// CHECK:         arith.maxsi %{{.+}}, %{{.+}} : i64
// CHECK:         arith.minsi %{{.+}}, %{{.+}} : i64
// CHECK:         arith.maximumf %{{.+}}, %{{.+}} : f64
// CHECK:         arith.minimumf %{{.+}}, %{{.+}} : f32
// CHECK:         math.ipowi %{{.+}}, %{{.+}} : i32
// CHECK:         math.powf %{{.+}}, %{{.+}} : f32
// CHECK:         arith.cmpi slt, %{{.+}}, %{{.+}} : i64
// CHECK:         arith.cmpf oge, %{{.+}}, %{{.+}} : f32
func.func @integer_and_float_arith(%i: tensor<4xi32>, %l: tensor<4xi64>, %d: tensor<4xf64>, %f: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<4xf64>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>) {
  %0 = ml.div %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = ml.max %l, %l : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = ml.min %l, %l : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = ml.max %d, %d : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %4 = ml.min %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = ml.pow %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %6 = ml.pow %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = ml.cmp "lt", %l, %l : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %8 = ml.cmp "ge", %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xi32>, tensor<4xi64>, tensor<4xi64>, tensor<4xf64>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>
}

// -----

// i1 compares as unsigned (numpy's True > False); select broadcasts its condition.

// CHECK-LABEL: func.func @bool_cmp_and_select
// CHECK:         arith.cmpi ugt, %{{.+}}, %{{.+}} : i1
// CHECK:         indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:           arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
func.func @bool_cmp_and_select(%c: tensor<4xi1>, %a: tensor<2x4xf32>, %b: tensor<f32>) -> (tensor<4xi1>, tensor<2x4xf32>) {
  %0 = ml.cmp "gt", %c, %c : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = ml.select %0, %a, %b : (tensor<4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %0, %1 : tensor<4xi1>, tensor<2x4xf32>
}

// -----

// Unary ops: integer neg is 0 - x, relu is max(x, 0), sigmoid is 1 / (1 + exp(-x)).

// CHECK-LABEL: func.func @unary
// CHECK:         %[[Z:.+]] = arith.constant 0 : i32
// CHECK-NEXT:    arith.subi %[[Z]], %{{.+}} : i32
// CHECK:         arith.negf %{{.+}} : f32
// CHECK:         math.absi %{{.+}} : i64
// CHECK:         math.absf %{{.+}} : f32
// CHECK:         %[[Z2:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    arith.maximumf %{{.+}}, %[[Z2]] : f32
// CHECK:         math.exp
// CHECK:         math.log
// CHECK:         math.sqrt
// CHECK:         math.rsqrt
// CHECK:         math.tanh
// CHECK:         math.erf
// CHECK:         %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %[[NEG:.+]] = arith.negf %[[X:.+]] : f64
// CHECK-NEXT:    %[[EXP:.+]] = math.exp %[[NEG]] : f64
// CHECK-NEXT:    %[[DEN:.+]] = arith.addf %[[ONE]], %[[EXP]] : f64
// CHECK-NEXT:    arith.divf %[[ONE]], %[[DEN]] : f64
func.func @unary(%i: tensor<4xi32>, %f: tensor<4xf32>, %l: tensor<4xi64>, %d: tensor<4xf64>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) {
  %0 = ml.neg %i : (tensor<4xi32>) -> tensor<4xi32>
  %1 = ml.neg %f : (tensor<4xf32>) -> tensor<4xf32>
  %2 = ml.abs %l : (tensor<4xi64>) -> tensor<4xi64>
  %3 = ml.abs %f : (tensor<4xf32>) -> tensor<4xf32>
  %4 = ml.relu %f : (tensor<4xf32>) -> tensor<4xf32>
  %5 = ml.exp %f : (tensor<4xf32>) -> tensor<4xf32>
  %6 = ml.log %f : (tensor<4xf32>) -> tensor<4xf32>
  %7 = ml.sqrt %f : (tensor<4xf32>) -> tensor<4xf32>
  %8 = ml.rsqrt %f : (tensor<4xf32>) -> tensor<4xf32>
  %9 = ml.tanh %f : (tensor<4xf32>) -> tensor<4xf32>
  %10 = ml.erf %f : (tensor<4xf32>) -> tensor<4xf32>
  %11 = ml.sigmoid %d : (tensor<4xf64>) -> tensor<4xf64>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xi32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>
}

// -----

// gelu: exact 0.5 * x * (1 + erf(x * sqrt(1/2))), or the tanh approximation.

// CHECK-LABEL: func.func @gelu
// CHECK:         %[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[C:.+]] = arith.constant 0.707106769 : f32
// CHECK-NEXT:      %[[XS:.+]] = arith.mulf %[[X]], %[[C]] : f32
// CHECK-NEXT:      %[[ERF:.+]] = math.erf %[[XS]] : f32
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK-NEXT:      %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[HX:.+]] = arith.mulf %[[HALF]], %[[X]] : f32
// CHECK-NEXT:      %[[G:.+]] = arith.mulf %[[HX]], %[[SUM]] : f32
// CHECK-NEXT:      linalg.yield %[[G]] : f32
// CHECK:         arith.constant 4.471500e-02 : f32
// CHECK:         arith.constant 0.797884583 : f32
// CHECK:         math.tanh
func.func @gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = ml.gelu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Casts: widen signed (i1 unsigned), truncate, float <-> int, f16 <-> bf16 through
// f32, and to i1 as `x != 0`.

// CHECK-LABEL: func.func @casts
// CHECK:         arith.extsi %{{.+}} : i32 to i64
// CHECK:         arith.trunci %{{.+}} : i32 to i8
// CHECK:         arith.extui %{{.+}} : i1 to i32
// CHECK:         arith.fptosi %{{.+}} : f32 to i32
// CHECK:         arith.sitofp %{{.+}} : i64 to f64
// CHECK:         arith.uitofp %{{.+}} : i1 to f32
// CHECK:         arith.extf %{{.+}} : f32 to f64
// CHECK:         arith.truncf %{{.+}} : f64 to f32
// CHECK:         %[[EXT:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK-NEXT:    arith.truncf %[[EXT]] : f32 to bf16
// CHECK:         %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    arith.cmpf une, %{{.+}}, %[[Z]] : f32
// CHECK:         %[[ZI:.+]] = arith.constant 0 : i64
// CHECK-NEXT:    arith.cmpi ne, %{{.+}}, %[[ZI]] : i64
// CHECK:         %[[SAME:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      linalg.yield %[[SAME]] : f32
func.func @casts(%i: tensor<4xi32>, %b: tensor<4xi1>, %f: tensor<4xf32>, %l: tensor<4xi64>, %d: tensor<4xf64>, %h: tensor<4xf16>) -> (tensor<4xi64>, tensor<4xi8>, tensor<4xi32>, tensor<4xi32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>) {
  %0 = ml.cast %i : (tensor<4xi32>) -> tensor<4xi64>
  %1 = ml.cast %i : (tensor<4xi32>) -> tensor<4xi8>
  %2 = ml.cast %b : (tensor<4xi1>) -> tensor<4xi32>
  %3 = ml.cast %f : (tensor<4xf32>) -> tensor<4xi32>
  %4 = ml.cast %l : (tensor<4xi64>) -> tensor<4xf64>
  %5 = ml.cast %b : (tensor<4xi1>) -> tensor<4xf32>
  %6 = ml.cast %f : (tensor<4xf32>) -> tensor<4xf64>
  %7 = ml.cast %d : (tensor<4xf64>) -> tensor<4xf32>
  %8 = ml.cast %h : (tensor<4xf16>) -> tensor<4xbf16>
  %9 = ml.cast %f : (tensor<4xf32>) -> tensor<4xi1>
  %10 = ml.cast %l : (tensor<4xi64>) -> tensor<4xi1>
  %11 = ml.cast %f : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<4xi64>, tensor<4xi8>, tensor<4xi32>, tensor<4xi32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>
}

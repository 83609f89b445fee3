// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// The binary ops in the pretty form, on operands of one shape.

// CHECK-LABEL: func.func @binary_same_shape
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[ADD:[a-zA-Z0-9_]+]] = ml.add %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SUB:[a-zA-Z0-9_]+]] = ml.sub %[[ADD]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MUL:[a-zA-Z0-9_]+]] = ml.mul %[[SUB]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[DIV:[a-zA-Z0-9_]+]] = ml.div %[[MUL]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[POW:[a-zA-Z0-9_]+]] = ml.pow %[[DIV]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX:[a-zA-Z0-9_]+]] = ml.max %[[POW]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MIN:[a-zA-Z0-9_]+]] = ml.min %[[MAX]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[MIN]]

// GENERIC-LABEL: sym_name = "binary_same_shape"
// GENERIC:       "ml.add"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "ml.sub"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "ml.mul"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "ml.div"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "ml.pow"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "ml.max"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "ml.min"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @binary_same_shape(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %add = ml.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sub = ml.sub %add, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %mul = ml.mul %sub, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %div = ml.div %mul, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %pow = ml.pow %div, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %max = ml.max %pow, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %min = ml.min %max, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %min : tensor<4x8xf32>
}

// -----

// The binary ops written in the generic form parse and print in the pretty form.

// CHECK-LABEL: func.func @binary_generic_input
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<2x3xi32>)
// CHECK-NEXT:    %[[ADD:[a-zA-Z0-9_]+]] = ml.add %[[A]], %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[SUB:[a-zA-Z0-9_]+]] = ml.sub %[[ADD]], %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[MUL:[a-zA-Z0-9_]+]] = ml.mul %[[SUB]], %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[DIV:[a-zA-Z0-9_]+]] = ml.div %[[MUL]], %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[POW:[a-zA-Z0-9_]+]] = ml.pow %[[DIV]], %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[MAX:[a-zA-Z0-9_]+]] = ml.max %[[POW]], %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[MIN:[a-zA-Z0-9_]+]] = ml.min %[[MAX]], %[[B]] : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    func.return %[[MIN]]

// GENERIC-LABEL: sym_name = "binary_generic_input"
// GENERIC:       "ml.add"(%{{.*}}, %{{.*}}) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
// GENERIC:       "ml.min"(%{{.*}}, %{{.*}}) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
func.func @binary_generic_input(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %add = "ml.add"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %sub = "ml.sub"(%add, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %mul = "ml.mul"(%sub, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %div = "ml.div"(%mul, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %pow = "ml.pow"(%div, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %max = "ml.max"(%pow, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %min = "ml.min"(%max, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %min : tensor<2x3xi32>
}

// -----

// Rank-extending broadcast: the lower-rank operand aligns with the trailing dims,
// on either side.

// CHECK-LABEL: func.func @broadcast_rank_extend
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<2x4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<8xf32>)
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.add %[[A]], %[[B]] : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[S:[a-zA-Z0-9_]+]] = ml.sub %[[B]], %[[R]] : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    func.return %[[S]]

// GENERIC-LABEL: sym_name = "broadcast_rank_extend"
// GENERIC:       "ml.add"(%{{.*}}, %{{.*}}) : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC-NEXT:  "ml.sub"(%{{.*}}, %{{.*}}) : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
func.func @broadcast_rank_extend(%a: tensor<2x4x8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %r = ml.add %a, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %s = ml.sub %b, %r : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %s : tensor<2x4x8xf32>
}

// -----

// Size-1 dims stretch on both sides: (4x1) with (1x8) gives (4x8).

// CHECK-LABEL: func.func @broadcast_size_one
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x1xf64>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x8xf64>)
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.mul %[[A]], %[[B]] : (tensor<4x1xf64>, tensor<1x8xf64>) -> tensor<4x8xf64>
// CHECK-NEXT:    func.return %[[R]]

// GENERIC-LABEL: sym_name = "broadcast_size_one"
// GENERIC:       "ml.mul"(%{{.*}}, %{{.*}}) : (tensor<4x1xf64>, tensor<1x8xf64>) -> tensor<4x8xf64>
func.func @broadcast_size_one(%a: tensor<4x1xf64>, %b: tensor<1x8xf64>) -> tensor<4x8xf64> {
  %r = ml.mul %a, %b : (tensor<4x1xf64>, tensor<1x8xf64>) -> tensor<4x8xf64>
  func.return %r : tensor<4x8xf64>
}

// -----

// A rank-0 (scalar) tensor broadcasts against any shape, and two scalars give a scalar.

// CHECK-LABEL: func.func @broadcast_scalar
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x8xf16>, %[[S:[a-zA-Z0-9_]+]]: tensor<f16>)
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.div %[[A]], %[[S]] : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[T:[a-zA-Z0-9_]+]] = ml.pow %[[S]], %[[S]] : (tensor<f16>, tensor<f16>) -> tensor<f16>
// CHECK-NEXT:    func.return %[[R]], %[[T]]

// GENERIC-LABEL: sym_name = "broadcast_scalar"
// GENERIC:       "ml.div"(%{{.*}}, %{{.*}}) : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
// GENERIC-NEXT:  "ml.pow"(%{{.*}}, %{{.*}}) : (tensor<f16>, tensor<f16>) -> tensor<f16>
func.func @broadcast_scalar(%a: tensor<4x8xf16>, %s: tensor<f16>) -> (tensor<4x8xf16>, tensor<f16>) {
  %r = ml.div %a, %s : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %t = ml.pow %s, %s : (tensor<f16>, tensor<f16>) -> tensor<f16>
  func.return %r, %t : tensor<4x8xf16>, tensor<f16>
}

// -----

// Dynamic dims: `?` against 1 stays `?`, `?` against a static N > 1 is N, and `?`
// against `?` stays `?`.

// CHECK-LABEL: func.func @broadcast_dynamic
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x8xbf16>, %[[B:[a-zA-Z0-9_]+]]: tensor<1x8xbf16>, %[[C:[a-zA-Z0-9_]+]]: tensor<4x?xbf16>, %[[D:[a-zA-Z0-9_]+]]: tensor<?x?xbf16>)
// CHECK-NEXT:    %[[R0:[a-zA-Z0-9_]+]] = ml.sub %[[A]], %[[B]] : (tensor<?x8xbf16>, tensor<1x8xbf16>) -> tensor<?x8xbf16>
// CHECK-NEXT:    %[[R1:[a-zA-Z0-9_]+]] = ml.max %[[A]], %[[C]] : (tensor<?x8xbf16>, tensor<4x?xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[R2:[a-zA-Z0-9_]+]] = ml.min %[[D]], %[[D]] : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
// CHECK-NEXT:    func.return %[[R0]], %[[R1]], %[[R2]]

// GENERIC-LABEL: sym_name = "broadcast_dynamic"
// GENERIC:       "ml.sub"(%{{.*}}, %{{.*}}) : (tensor<?x8xbf16>, tensor<1x8xbf16>) -> tensor<?x8xbf16>
// GENERIC-NEXT:  "ml.max"(%{{.*}}, %{{.*}}) : (tensor<?x8xbf16>, tensor<4x?xbf16>) -> tensor<4x8xbf16>
// GENERIC-NEXT:  "ml.min"(%{{.*}}, %{{.*}}) : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
func.func @broadcast_dynamic(%a: tensor<?x8xbf16>, %b: tensor<1x8xbf16>, %c: tensor<4x?xbf16>, %d: tensor<?x?xbf16>) -> (tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<?x?xbf16>) {
  %r0 = ml.sub %a, %b : (tensor<?x8xbf16>, tensor<1x8xbf16>) -> tensor<?x8xbf16>
  %r1 = ml.max %a, %c : (tensor<?x8xbf16>, tensor<4x?xbf16>) -> tensor<4x8xbf16>
  %r2 = ml.min %d, %d : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
  func.return %r0, %r1, %r2 : tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<?x?xbf16>
}

// -----

// A written result type may be more static than the inferred one (a refinement) or
// more dynamic; it only may not contradict it.

// CHECK-LABEL: func.func @result_refined_or_relaxed
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[R0:[a-zA-Z0-9_]+]] = ml.add %[[A]], %[[A]] : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R1:[a-zA-Z0-9_]+]] = ml.add %[[B]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %[[R0]], %[[R1]]

// GENERIC-LABEL: sym_name = "result_refined_or_relaxed"
// GENERIC:       "ml.add"(%{{.*}}, %{{.*}}) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:  "ml.add"(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x?xf32>
func.func @result_refined_or_relaxed(%a: tensor<?x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<?x?xf32>) {
  %r0 = ml.add %a, %a : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
  %r1 = ml.add %b, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x?xf32>
  func.return %r0, %r1 : tensor<4x8xf32>, tensor<?x?xf32>
}

// -----

// The numeric element types: every binary op takes floats of every width and signless
// or unsigned integers.

// CHECK-LABEL: func.func @binary_element_types
// CHECK-NEXT:    ml.add %{{.*}}, %{{.*}} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    ml.sub %{{.*}}, %{{.*}} : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
// CHECK-NEXT:    ml.mul %{{.*}}, %{{.*}} : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    ml.div %{{.*}}, %{{.*}} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
// CHECK-NEXT:    ml.pow %{{.*}}, %{{.*}} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT:    ml.max %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK-NEXT:    ml.min %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>

// GENERIC-LABEL: sym_name = "binary_element_types"
// GENERIC:       "ml.max"(%{{.*}}, %{{.*}}) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
func.func @binary_element_types(%f16: tensor<4xf16>, %bf16: tensor<4xbf16>, %f64: tensor<4xf64>, %i8: tensor<4xi8>, %i64: tensor<4xi64>, %u8: tensor<4xui8>, %i32: tensor<4xi32>) {
  %0 = ml.add %f16, %f16 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %1 = ml.sub %bf16, %bf16 : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %2 = ml.mul %f64, %f64 : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %3 = ml.div %i8, %i8 : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %4 = ml.pow %i64, %i64 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %5 = ml.max %u8, %u8 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %6 = ml.min %i32, %i32 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// ml.cmp with every predicate; the result is i1 and the operands broadcast.

// CHECK-LABEL: func.func @cmp_predicates
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<8xf32>)
// CHECK-NEXT:    %{{.*}} = ml.cmp "eq", %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = ml.cmp "ne", %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = ml.cmp "lt", %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = ml.cmp "le", %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = ml.cmp "gt", %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %{{.*}} = ml.cmp "ge", %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>

// GENERIC-LABEL: sym_name = "cmp_predicates"
// GENERIC:       "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "eq"}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// GENERIC-NEXT:  "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "ne"}>
// GENERIC-NEXT:  "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "lt"}>
// GENERIC-NEXT:  "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "le"}>
// GENERIC-NEXT:  "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "gt"}>
// GENERIC-NEXT:  "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "ge"}>
func.func @cmp_predicates(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %eq = ml.cmp "eq", %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %ne = ml.cmp "ne", %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %lt = ml.cmp "lt", %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %le = ml.cmp "le", %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %gt = ml.cmp "gt", %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %ge = ml.cmp "ge", %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  func.return
}

// -----

// ml.cmp in the generic form, with the predicate as an attribute and as a property;
// it compares any element type, i1 and dynamic shapes included.

// CHECK-LABEL: func.func @cmp_generic_input
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<?xi64>, %[[B:[a-zA-Z0-9_]+]]: tensor<i64>, %[[P:[a-zA-Z0-9_]+]]: tensor<3xi1>)
// CHECK-NEXT:    %{{.*}} = ml.cmp "lt", %[[A]], %[[B]] : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// CHECK-NEXT:    %{{.*}} = ml.cmp "ne", %[[P]], %[[P]] : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>

// GENERIC-LABEL: sym_name = "cmp_generic_input"
// GENERIC:       "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "lt"}> : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
// GENERIC-NEXT:  "ml.cmp"(%{{.*}}, %{{.*}}) <{predicate = "ne"}> : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
func.func @cmp_generic_input(%a: tensor<?xi64>, %b: tensor<i64>, %p: tensor<3xi1>) {
  %0 = "ml.cmp"(%a, %b) {predicate = "lt"} : (tensor<?xi64>, tensor<i64>) -> tensor<?xi1>
  %1 = "ml.cmp"(%p, %p) <{predicate = "ne"}> : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}

// -----

// ml.select broadcasts the condition and both branches together.

// CHECK-LABEL: func.func @select_broadcast
// CHECK-SAME:    (%[[C:[a-zA-Z0-9_]+]]: tensor<4x1xi1>, %[[A:[a-zA-Z0-9_]+]]: tensor<8xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<f32>)
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.select %[[C]], %[[A]], %[[B]] : (tensor<4x1xi1>, tensor<8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[R]]

// GENERIC-LABEL: sym_name = "select_broadcast"
// GENERIC:       "ml.select"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x1xi1>, tensor<8xf32>, tensor<f32>) -> tensor<4x8xf32>
func.func @select_broadcast(%c: tensor<4x1xi1>, %a: tensor<8xf32>, %b: tensor<f32>) -> tensor<4x8xf32> {
  %r = ml.select %c, %a, %b : (tensor<4x1xi1>, tensor<8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// -----

// ml.select in the generic form, choosing between i1 tensors (any element type) and
// between ui8 tensors with dynamic dims.

// CHECK-LABEL: func.func @select_generic_input
// CHECK-SAME:    (%[[C:[a-zA-Z0-9_]+]]: tensor<?xi1>, %[[P:[a-zA-Z0-9_]+]]: tensor<?xi1>, %[[U:[a-zA-Z0-9_]+]]: tensor<2x?xui8>)
// CHECK-NEXT:    %{{.*}} = ml.select %[[C]], %[[P]], %[[C]] : (tensor<?xi1>, tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// CHECK-NEXT:    %{{.*}} = ml.select %[[C]], %[[U]], %[[U]] : (tensor<?xi1>, tensor<2x?xui8>, tensor<2x?xui8>) -> tensor<2x?xui8>

// GENERIC-LABEL: sym_name = "select_generic_input"
// GENERIC:       "ml.select"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?xi1>, tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// GENERIC-NEXT:  "ml.select"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?xi1>, tensor<2x?xui8>, tensor<2x?xui8>) -> tensor<2x?xui8>
func.func @select_generic_input(%c: tensor<?xi1>, %p: tensor<?xi1>, %u: tensor<2x?xui8>) {
  %0 = "ml.select"(%c, %p, %c) : (tensor<?xi1>, tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  %1 = "ml.select"(%c, %u, %u) : (tensor<?xi1>, tensor<2x?xui8>, tensor<2x?xui8>) -> tensor<2x?xui8>
  func.return
}

// -----

// The numeric unary ops (neg, abs, relu) take integers as well as floats.

// CHECK-LABEL: func.func @unary_numeric
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4xi32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<?x16xf32>, %[[Z:[a-zA-Z0-9_]+]]: tensor<i8>)
// CHECK-NEXT:    %{{.*}} = ml.neg %[[X]] : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = ml.abs %[[X]] : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %{{.*}} = ml.relu %[[Y]] : (tensor<?x16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT:    %{{.*}} = ml.abs %[[Z]] : (tensor<i8>) -> tensor<i8>
// CHECK-NEXT:    %{{.*}} = ml.relu %[[Z]] : (tensor<i8>) -> tensor<i8>

// GENERIC-LABEL: sym_name = "unary_numeric"
// GENERIC:       "ml.neg"(%{{.*}}) : (tensor<4xi32>) -> tensor<4xi32>
// GENERIC-NEXT:  "ml.abs"(%{{.*}}) : (tensor<4xi32>) -> tensor<4xi32>
// GENERIC-NEXT:  "ml.relu"(%{{.*}}) : (tensor<?x16xf32>) -> tensor<?x16xf32>
func.func @unary_numeric(%x: tensor<4xi32>, %y: tensor<?x16xf32>, %z: tensor<i8>) {
  %0 = ml.neg %x : (tensor<4xi32>) -> tensor<4xi32>
  %1 = ml.abs %x : (tensor<4xi32>) -> tensor<4xi32>
  %2 = ml.relu %y : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %3 = ml.abs %z : (tensor<i8>) -> tensor<i8>
  %4 = ml.relu %z : (tensor<i8>) -> tensor<i8>
  func.return
}

// -----

// The float unary ops, on each float type.

// CHECK-LABEL: func.func @unary_float
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4xf32>, %[[B:[a-zA-Z0-9_]+]]: tensor<4xf64>, %[[C:[a-zA-Z0-9_]+]]: tensor<2x?xf16>, %[[D:[a-zA-Z0-9_]+]]: tensor<bf16>)
// CHECK-NEXT:    %{{.*}} = ml.exp %[[A]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = ml.log %[[B]] : (tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %{{.*}} = ml.sqrt %[[C]] : (tensor<2x?xf16>) -> tensor<2x?xf16>
// CHECK-NEXT:    %{{.*}} = ml.rsqrt %[[D]] : (tensor<bf16>) -> tensor<bf16>
// CHECK-NEXT:    %{{.*}} = ml.tanh %[[C]] : (tensor<2x?xf16>) -> tensor<2x?xf16>
// CHECK-NEXT:    %{{.*}} = ml.sigmoid %[[A]] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = ml.erf %[[B]] : (tensor<4xf64>) -> tensor<4xf64>
// CHECK-NEXT:    %{{.*}} = ml.neg %[[D]] : (tensor<bf16>) -> tensor<bf16>
// CHECK-NEXT:    %{{.*}} = ml.abs %[[C]] : (tensor<2x?xf16>) -> tensor<2x?xf16>

// GENERIC-LABEL: sym_name = "unary_float"
// GENERIC:       "ml.exp"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC-NEXT:  "ml.log"(%{{.*}}) : (tensor<4xf64>) -> tensor<4xf64>
// GENERIC-NEXT:  "ml.sqrt"(%{{.*}}) : (tensor<2x?xf16>) -> tensor<2x?xf16>
// GENERIC-NEXT:  "ml.rsqrt"(%{{.*}}) : (tensor<bf16>) -> tensor<bf16>
// GENERIC-NEXT:  "ml.tanh"(%{{.*}}) : (tensor<2x?xf16>) -> tensor<2x?xf16>
// GENERIC-NEXT:  "ml.sigmoid"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// GENERIC-NEXT:  "ml.erf"(%{{.*}}) : (tensor<4xf64>) -> tensor<4xf64>
func.func @unary_float(%a: tensor<4xf32>, %b: tensor<4xf64>, %c: tensor<2x?xf16>, %d: tensor<bf16>) {
  %0 = ml.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.log %b : (tensor<4xf64>) -> tensor<4xf64>
  %2 = ml.sqrt %c : (tensor<2x?xf16>) -> tensor<2x?xf16>
  %3 = ml.rsqrt %d : (tensor<bf16>) -> tensor<bf16>
  %4 = ml.tanh %c : (tensor<2x?xf16>) -> tensor<2x?xf16>
  %5 = ml.sigmoid %a : (tensor<4xf32>) -> tensor<4xf32>
  %6 = ml.erf %b : (tensor<4xf64>) -> tensor<4xf64>
  %7 = ml.neg %d : (tensor<bf16>) -> tensor<bf16>
  %8 = ml.abs %c : (tensor<2x?xf16>) -> tensor<2x?xf16>
  func.return
}

// -----

// The unary ops written in the generic form.

// CHECK-LABEL: func.func @unary_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3x5xf32>)
// CHECK-NEXT:    %[[R0:[a-zA-Z0-9_]+]] = ml.neg %[[X]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R1:[a-zA-Z0-9_]+]] = ml.abs %[[R0]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R2:[a-zA-Z0-9_]+]] = ml.exp %[[R1]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R3:[a-zA-Z0-9_]+]] = ml.log %[[R2]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R4:[a-zA-Z0-9_]+]] = ml.sqrt %[[R3]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R5:[a-zA-Z0-9_]+]] = ml.rsqrt %[[R4]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R6:[a-zA-Z0-9_]+]] = ml.tanh %[[R5]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R7:[a-zA-Z0-9_]+]] = ml.sigmoid %[[R6]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R8:[a-zA-Z0-9_]+]] = ml.relu %[[R7]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[R9:[a-zA-Z0-9_]+]] = ml.erf %[[R8]] : (tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %[[R9]]

// GENERIC-LABEL: sym_name = "unary_generic_input"
// GENERIC:       "ml.neg"(%{{.*}}) : (tensor<3x5xf32>) -> tensor<3x5xf32>
// GENERIC:       "ml.erf"(%{{.*}}) : (tensor<3x5xf32>) -> tensor<3x5xf32>
func.func @unary_generic_input(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = "ml.neg"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = "ml.abs"(%0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %2 = "ml.exp"(%1) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %3 = "ml.log"(%2) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %4 = "ml.sqrt"(%3) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %5 = "ml.rsqrt"(%4) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %6 = "ml.tanh"(%5) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %7 = "ml.sigmoid"(%6) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %8 = "ml.relu"(%7) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %9 = "ml.erf"(%8) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %9 : tensor<3x5xf32>
}

// -----

// ml.gelu: `approximate` defaults to "none", which the pretty form leaves out; "tanh"
// is printed.

// CHECK-LABEL: func.func @gelu
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x?xf32>)
// CHECK-NEXT:    %{{.*}} = ml.gelu %[[X]] : (tensor<2x?xf32>) -> tensor<2x?xf32>
// CHECK-NEXT:    %{{.*}} = ml.gelu %[[X]] {approximate = "tanh"} : (tensor<2x?xf32>) -> tensor<2x?xf32>

// GENERIC-LABEL: sym_name = "gelu"
// GENERIC:       "ml.gelu"(%{{.*}}) : (tensor<2x?xf32>) -> tensor<2x?xf32>
// GENERIC-NEXT:  "ml.gelu"(%{{.*}}) <{approximate = "tanh"}> : (tensor<2x?xf32>) -> tensor<2x?xf32>
func.func @gelu(%x: tensor<2x?xf32>) {
  %0 = ml.gelu %x : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = ml.gelu %x {approximate = "tanh"} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  func.return
}

// -----

// ml.gelu in the generic form: `approximate` as a property, as an attribute, or left
// out. An explicit "none" is the default and leaves the pretty form.

// CHECK-LABEL: func.func @gelu_generic_input
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<8xf16>)
// CHECK-NEXT:    %{{.*}} = ml.gelu %[[X]] : (tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %{{.*}} = ml.gelu %[[X]] {approximate = "tanh"} : (tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %{{.*}} = ml.gelu %[[X]] : (tensor<8xf16>) -> tensor<8xf16>

// GENERIC-LABEL: sym_name = "gelu_generic_input"
// GENERIC:       "ml.gelu"(%{{.*}}) <{approximate = "none"}> : (tensor<8xf16>) -> tensor<8xf16>
// GENERIC-NEXT:  "ml.gelu"(%{{.*}}) <{approximate = "tanh"}> : (tensor<8xf16>) -> tensor<8xf16>
// GENERIC-NEXT:  "ml.gelu"(%{{.*}}) : (tensor<8xf16>) -> tensor<8xf16>
func.func @gelu_generic_input(%x: tensor<8xf16>) {
  %0 = "ml.gelu"(%x) <{approximate = "none"}> : (tensor<8xf16>) -> tensor<8xf16>
  %1 = "ml.gelu"(%x) {approximate = "tanh"} : (tensor<8xf16>) -> tensor<8xf16>
  %2 = "ml.gelu"(%x) : (tensor<8xf16>) -> tensor<8xf16>
  func.return
}

// -----

// ml.cast converts to the element type of its result type, between any two element
// types (i1, unsigned and bf16 included), keeping the shape.

// CHECK-LABEL: func.func @cast
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4x?xf32>, %[[P:[a-zA-Z0-9_]+]]: tensor<4xi1>, %[[U:[a-zA-Z0-9_]+]]: tensor<ui8>)
// CHECK-NEXT:    %{{.*}} = ml.cast %[[X]] : (tensor<4x?xf32>) -> tensor<4x?xi32>
// CHECK-NEXT:    %{{.*}} = ml.cast %[[X]] : (tensor<4x?xf32>) -> tensor<4x?xbf16>
// CHECK-NEXT:    %{{.*}} = ml.cast %[[X]] : (tensor<4x?xf32>) -> tensor<4x?xi1>
// CHECK-NEXT:    %{{.*}} = ml.cast %[[P]] : (tensor<4xi1>) -> tensor<4xf64>
// CHECK-NEXT:    %{{.*}} = ml.cast %[[U]] : (tensor<ui8>) -> tensor<i64>
// CHECK-NEXT:    %{{.*}} = ml.cast %[[X]] : (tensor<4x?xf32>) -> tensor<4x?xf32>
// CHECK-NEXT:    %{{.*}} = ml.cast %[[X]] : (tensor<4x?xf32>) -> tensor<4x8xi8>

// GENERIC-LABEL: sym_name = "cast"
// GENERIC:       "ml.cast"(%{{.*}}) : (tensor<4x?xf32>) -> tensor<4x?xi32>
// GENERIC-NEXT:  "ml.cast"(%{{.*}}) : (tensor<4x?xf32>) -> tensor<4x?xbf16>
// GENERIC-NEXT:  "ml.cast"(%{{.*}}) : (tensor<4x?xf32>) -> tensor<4x?xi1>
// GENERIC-NEXT:  "ml.cast"(%{{.*}}) : (tensor<4xi1>) -> tensor<4xf64>
// GENERIC-NEXT:  "ml.cast"(%{{.*}}) : (tensor<ui8>) -> tensor<i64>
func.func @cast(%x: tensor<4x?xf32>, %p: tensor<4xi1>, %u: tensor<ui8>) {
  %0 = ml.cast %x : (tensor<4x?xf32>) -> tensor<4x?xi32>
  %1 = ml.cast %x : (tensor<4x?xf32>) -> tensor<4x?xbf16>
  %2 = ml.cast %x : (tensor<4x?xf32>) -> tensor<4x?xi1>
  %3 = ml.cast %p : (tensor<4xi1>) -> tensor<4xf64>
  %4 = ml.cast %u : (tensor<ui8>) -> tensor<i64>
  %5 = "ml.cast"(%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %6 = "ml.cast"(%x) : (tensor<4x?xf32>) -> tensor<4x8xi8>
  func.return
}

// RUN: mlc-opt %s --split-input-file --verify-diagnostics
// RUN: not mlc-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=LOC

// One case per verifier and shape-function message of the `ml` dialect (and the
// structural checks xDSL makes for it). Without --verify-diagnostics, each error is one
// located line, `file:line:col: error: 'op' op message`, and no traceback (LOC).

// LOC-NOT: Traceback

// An op with the wrong number of operands.

// LOC: invalid.mlir:[[# @LINE + 3]]:3: error: 'ml.add' op expected 2 operands, but got 1
func.func @add_one_operand(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected 2 operands, but got 1}}
  %0 = "ml.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// An optional operand allows a range of operand counts, no more.
func.func @conv2d_four_operands(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{expected 2 or 3 operands, but got 4}}
  %0 = "ml.conv2d"(%x, %x, %x, %x) : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

// A non-tensor operand (generic form).
func.func @add_scalar_operand(%a: tensor<4xf32>, %f: f32) {
  // expected-error @+1 {{operand 'rhs' at position 1 does not verify: f32 should be of base attribute tensor}}
  %0 = "ml.add"(%a, %f) : (tensor<4xf32>, f32) -> tensor<4xf32>
  func.return
}

// -----

// An unranked tensor operand (pretty form): rejected while parsing, with a location.

// LOC: invalid.mlir:[[# @LINE + 3]]:3: error: 'ml.add' op tensor<*xf32> should be of base attribute tensor
func.func @add_unranked_operand(%a: tensor<4xf32>, %u: tensor<*xf32>) {
  // expected-error @+1 {{'ml.add' op tensor<*xf32> should be of base attribute tensor}}
  %0 = ml.add %a, %u : (tensor<4xf32>, tensor<*xf32>) -> tensor<4xf32>
  func.return
}

// -----

// A non-tensor result.
func.func @add_scalar_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result 'result' at position 0 does not verify: f32 should be of base attribute tensor}}
  %0 = "ml.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> f32
  func.return
}

// -----

// A required property left out.
func.func @transpose_without_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{property 'perm' expected}}
  %0 = ml.transpose %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// A required property left out (keepdims).
func.func @reduce_without_keepdims(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{property 'keepdims' expected}}
  %0 = ml.reduce_sum %x {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// An array property of the wrong element type.
func.func @transpose_i32_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expected attribute i64 but got i32}}
  %0 = ml.transpose %x {perm = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// A string property given an integer.
func.func @gelu_integer_approximate(%x: tensor<4xf32>) {
  // expected-error @+1 {{should be of base attribute string}}
  %0 = ml.gelu %x {approximate = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// An integer property given a float.
func.func @softmax_float_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{should be of base attribute integer}}
  %0 = ml.softmax %x {axis = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Numeric ops reject i1.
func.func @add_i1(%p: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 has element type i1, expected a numeric element type (not i1)}}
  %0 = ml.add %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// Numeric unary ops reject i1.
func.func @neg_i1(%p: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 has element type i1, expected a numeric element type (not i1)}}
  %0 = ml.neg %p : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// Reductions reject i1.
func.func @reduce_sum_i1(%p: tensor<4xi1>) {
  // expected-error @+1 {{expected a numeric element type (not i1)}}
  %0 = ml.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
  func.return
}

// -----

// matmul rejects i1.
func.func @matmul_i1(%p: tensor<2x2xi1>) {
  // expected-error @+1 {{expected a numeric element type (not i1)}}
  %0 = ml.matmul %p, %p : (tensor<2x2xi1>, tensor<2x2xi1>) -> tensor<2x2xi1>
  func.return
}

// -----

// max_pool2d rejects i1.
func.func @max_pool2d_i1(%p: tensor<1x1x4x4xi1>) {
  // expected-error @+1 {{expected a numeric element type (not i1)}}
  %0 = ml.max_pool2d %p {kernel = array<i64: 2, 2>} : (tensor<1x1x4x4xi1>) -> tensor<1x1x3x3xi1>
  func.return
}

// -----

// Float-only unary ops reject integers.
func.func @exp_i32(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 has element type i32, expected a floating-point element type}}
  %0 = ml.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// gelu is float-only.
func.func @gelu_i8(%x: tensor<4xi8>) {
  // expected-error @+1 {{operand #0 has element type i8, expected a floating-point element type}}
  %0 = ml.gelu %x : (tensor<4xi8>) -> tensor<4xi8>
  func.return
}

// -----

// softmax is float-only.
func.func @softmax_i64(%x: tensor<4xi64>) {
  // expected-error @+1 {{expected a floating-point element type}}
  %0 = ml.softmax %x {axis = 0 : i64} : (tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// conv2d is float-only.
func.func @conv2d_i32(%x: tensor<1x1x4x4xi32>, %w: tensor<1x1x3x3xi32>) {
  // expected-error @+1 {{operand #0 has element type i32, expected a floating-point element type}}
  %0 = ml.conv2d %x, %w : (tensor<1x1x4x4xi32>, tensor<1x1x3x3xi32>) -> tensor<1x1x2x2xi32>
  func.return
}

// -----

// avg_pool2d is float-only.
func.func @avg_pool2d_ui8(%x: tensor<1x1x4x4xui8>) {
  // expected-error @+1 {{operand #0 has element type ui8, expected a floating-point element type}}
  %0 = ml.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x1x4x4xui8>) -> tensor<1x1x3x3xui8>
  func.return
}

// -----

// layer_norm is float-only, for every operand.
func.func @layer_norm_i32_scale(%x: tensor<2x4xf32>, %g: tensor<4xi32>) {
  // expected-error @+1 {{operand #1 has element type i32, expected a floating-point element type}}
  %0 = ml.layer_norm %x, %g, %g {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4xf32>, tensor<4xi32>, tensor<4xi32>) -> tensor<2x4xf32>
  func.return
}

// -----

// Element types outside the ml set (here index) are rejected even by ops that take any.
func.func @transpose_index(%x: tensor<2x3xindex>) {
  // expected-error @+1 {{operand #0 has element type index, expected an ml element type}}
  %0 = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xindex>) -> tensor<3x2xindex>
  func.return
}

// -----

// Signed integers are not ml element types.
func.func @cast_from_si8(%x: tensor<4xsi8>) {
  // expected-error @+1 {{operand #0 has element type si8, expected an ml element type}}
  %0 = ml.cast %x : (tensor<4xsi8>) -> tensor<4xf32>
  func.return
}

// -----

// Binary operands must share their element type.
func.func @add_mixed_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{expects operands of one element type, got (f32, f16)}}
  %0 = ml.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// The branches of select must share their element type.
func.func @select_mixed_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{expects operands of one element type, got (f32, i32)}}
  %0 = ml.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return
}

// -----

// concat operands must share their element type.
func.func @concat_mixed_types(%a: tensor<2xi32>, %b: tensor<2xi64>) {
  // expected-error @+1 {{expects operands of one element type, got (i32, i64)}}
  %0 = ml.concat %a, %b {axis = 0 : i64} : (tensor<2xi32>, tensor<2xi64>) -> tensor<4xi32>
  func.return
}

// -----

// batch_norm parameters must share the input's element type.
func.func @batch_norm_mixed_types(%x: tensor<1x2x4xf32>, %p: tensor<2xf32>, %q: tensor<2xf64>) {
  // expected-error @+1 {{expects operands of one element type, got (f32, f32, f32, f32, f64)}}
  %0 = ml.batch_norm %x, %p, %p, %p, %q {epsilon = 1.0e-05 : f32} : (tensor<1x2x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf64>) -> tensor<1x2x4xf32>
  func.return
}

// -----

// A result element type other than the operands'.
func.func @add_result_element(%a: tensor<4xf32>) {
  // expected-error @+1 {{result element type f16 does not match the expected f32}}
  %0 = ml.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// A comparison's result is i1.
func.func @cmp_result_element(%a: tensor<4xf32>) {
  // expected-error @+1 {{result element type f32 does not match the expected i1}}
  %0 = ml.cmp "lt", %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// A result with a static dim other than the inferred one.

// LOC: invalid.mlir:[[# @LINE + 3]]:3: error: 'ml.add' op result type tensor<4x9xf32> contradicts the inferred type tensor<4x8xf32>
func.func @add_result_static_dim(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result type tensor<4x9xf32> contradicts the inferred type tensor<4x8xf32>}}
  %0 = ml.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x9xf32>
  func.return
}

// -----

// A result of another rank than the inferred one.
func.func @add_result_rank(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result type tensor<32xf32> contradicts the inferred type tensor<4x8xf32>}}
  %0 = ml.add %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<32xf32>
  func.return
}

// -----

// A dynamic result dim does not excuse a static one that differs.
func.func @exp_result_partly_dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{result type tensor<?x5xf32> contradicts the inferred type tensor<?x4xf32>}}
  %0 = ml.exp %x : (tensor<?x4xf32>) -> tensor<?x5xf32>
  func.return
}

// -----

// cast keeps the shape.
func.func @cast_result_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type tensor<5xi32> contradicts the inferred type tensor<4xi32>}}
  %0 = ml.cast %x : (tensor<4xf32>) -> tensor<5xi32>
  func.return
}

// -----

// Reductions: keepdims = false drops the reduced dims.
func.func @reduce_keepdims_mismatch(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type tensor<4x1xf32> contradicts the inferred type tensor<4xf32>}}
  %0 = ml.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

// Operands that do not broadcast.
func.func @add_not_broadcastable(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+1 {{shapes (4x8, 3x8) are not broadcast-compatible in dimension -2}}
  %0 = ml.add %a, %b : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Trailing dims that do not broadcast after rank extension.
func.func @mul_not_broadcastable_rank_extend(%a: tensor<2x4x8xi32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{shapes (2x4x8, 4) are not broadcast-compatible in dimension -1}}
  %0 = ml.mul %a, %b : (tensor<2x4x8xi32>, tensor<4xi32>) -> tensor<2x4x8xi32>
  func.return
}

// -----

// The three operands of select broadcast together; each pair alone may not conflict.
func.func @select_not_broadcastable(%c: tensor<?xi1>, %a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes (?, 3, 4) are not broadcast-compatible in dimension -1}}
  %0 = ml.select %c, %a, %b : (tensor<?xi1>, tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// An unknown comparison predicate.
func.func @cmp_unknown_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown predicate "lte", expected one of "eq", "ne", "lt", "le", "gt", "ge"}}
  %0 = ml.cmp "lte", %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  func.return
}

// -----

// A select condition that is not i1.
func.func @select_float_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{expects cond to be a tensor of i1, got tensor<4xf32>}}
  %0 = ml.select %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// An unknown gelu approximation.
func.func @gelu_unknown_approximate(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown approximate "erf", expected "none" or "tanh"}}
  %0 = ml.gelu %x {approximate = "erf"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// A cast to an element type outside the ml set.
func.func @cast_to_signed(%x: tensor<4xf32>) {
  // expected-error @+1 {{result has element type si32, which is not an ml element type}}
  %0 = ml.cast %x : (tensor<4xf32>) -> tensor<4xsi32>
  func.return
}

// -----

// matmul needs rank >= 2.
func.func @matmul_rank_1(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{expects operands of rank >= 2, got ranks 1 and 2}}
  %0 = ml.matmul %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// matmul contracting dims must agree.
func.func @matmul_contracting_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+1 {{contracting dimensions differ: lhs dimension 1 is 8, rhs dimension 0 is 7}}
  %0 = ml.matmul %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

// matmul batch dims must broadcast.
func.func @matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) {
  // expected-error @+1 {{batch dimensions (2) and (3) are not broadcast-compatible}}
  %0 = ml.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x4x16xf32>
  func.return
}

// -----

// perm names a dimension twice.
func.func @transpose_repeated_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [0, 0] is not a permutation of the 2 dimensions}}
  %0 = ml.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return
}

// -----

// perm of the wrong length.
func.func @transpose_short_perm(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{perm [1, 0] is not a permutation of the 3 dimensions}}
  %0 = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// perm with a negative or out-of-range entry.
func.func @transpose_negative_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [-1, 0] is not a permutation of the 2 dimensions}}
  %0 = ml.transpose %x {perm = array<i64: -1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// A transposed result with the dims in the wrong order.
func.func @transpose_result_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result type tensor<2x3xf32> contradicts the inferred type tensor<3x2xf32>}}
  %0 = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// reshape must keep the element count.
func.func @reshape_count_mismatch(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{element counts differ: (2x3) has 6, (4x2) has 8}}
  %0 = ml.reshape %x : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// A dynamic reshape result needs a shape operand.
func.func @reshape_dynamic_without_shape(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{expects a shape operand for the dynamic result type tensor<?x2xf32>}}
  %0 = ml.reshape %x : (tensor<?x4xf32>) -> tensor<?x2xf32>
  func.return
}

// -----

// A shape operand of i32.
func.func @reshape_shape_i32(%x: tensor<?x4xf32>, %s: tensor<2xi32>) {
  // expected-error @+1 {{expects the shape operand to be tensor<2xi64>, got tensor<2xi32>}}
  %0 = ml.reshape %x, %s : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  func.return
}

// -----

// A shape operand with one entry too many.
func.func @reshape_shape_length(%x: tensor<?x4xf32>, %s: tensor<3xi64>) {
  // expected-error @+1 {{expects the shape operand to be tensor<2xi64>, got tensor<3xi64>}}
  %0 = ml.reshape %x, %s : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x2xf32>
  func.return
}

// -----

// A shape operand of unknown length.
func.func @reshape_shape_dynamic_length(%x: tensor<?x4xf32>, %s: tensor<?xi64>) {
  // expected-error @+1 {{expects the shape operand to be tensor<2xi64>, got tensor<?xi64>}}
  %0 = ml.reshape %x, %s : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x2xf32>
  func.return
}

// -----

// A shape operand that is not a tensor.
func.func @reshape_shape_scalar(%x: tensor<?x4xf32>, %s: i64) {
  // expected-error @+1 {{operand 'shape' at position 1 does not verify: i64 should be of base attribute tensor}}
  %0 = "ml.reshape"(%x, %s) : (tensor<?x4xf32>, i64) -> tensor<?x2xf32>
  func.return
}

// -----

// broadcast_to cannot lower the rank.
func.func @broadcast_to_lower_rank(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{cannot broadcast rank 3 shape (2x3x4) to lower rank 2 (3x4)}}
  %0 = ml.broadcast_to %x : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// broadcast_to a dim that is neither 1 nor the target.
func.func @broadcast_to_dim_mismatch(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{cannot broadcast (3x2) to (2x3x4): dimension 1 is 2, expected 1 or 4}}
  %0 = ml.broadcast_to %x : (tensor<3x2xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

// A dynamic broadcast_to result dim that the operand does not give needs a shape operand.
func.func @broadcast_to_dynamic_without_shape(%x: tensor<1x4xf32>) {
  // expected-error @+1 {{expects a shape operand: result dimension 0 is dynamic and not given by the operand}}
  %0 = ml.broadcast_to %x : (tensor<1x4xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

// A new leading dynamic dim needs a shape operand too.
func.func @broadcast_to_new_dynamic_dim(%x: tensor<?xf32>) {
  // expected-error @+1 {{expects a shape operand: result dimension 0 is dynamic and not given by the operand}}
  %0 = ml.broadcast_to %x : (tensor<?xf32>) -> tensor<?x?xf32>
  func.return
}

// -----

// A broadcast_to shape operand of the wrong length.
func.func @broadcast_to_shape_length(%x: tensor<1x4xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{expects the shape operand to be tensor<3xi64>, got tensor<2xi64>}}
  %0 = ml.broadcast_to %x, %s : (tensor<1x4xf32>, tensor<2xi64>) -> tensor<?x?x4xf32>
  func.return
}

// -----

// concat of no operands.
func.func @concat_no_operands() {
  // expected-error @+1 {{expects at least one operand}}
  %0 = ml.concat {axis = 0 : i64} : () -> tensor<0xf32>
  func.return
}

// -----

// concat of rank-0 tensors.
func.func @concat_rank_0(%a: tensor<f32>) {
  // expected-error @+1 {{cannot concatenate rank-0 tensors}}
  %0 = ml.concat %a, %a {axis = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  func.return
}

// -----

// concat of mismatched ranks.
func.func @concat_rank_mismatch(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expects operands of one rank, got ranks (2, 1)}}
  %0 = ml.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// concat operands must agree off the axis.
func.func @concat_dim_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{operand 1 differs from operand 0 in dimension 0 (3 vs 2), which is not the concatenation axis}}
  %0 = ml.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// The message names the operand a conflicting size came from.
func.func @concat_dim_mismatch_after_dynamic(%a: tensor<?x3xf32>, %b: tensor<2x3xf32>, %c: tensor<4x3xf32>) {
  // expected-error @+1 {{operand 2 differs from operand 1 in dimension 0 (4 vs 2)}}
  %0 = ml.concat %a, %b, %c {axis = 1 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<?x9xf32>
  func.return
}

// -----

// concat axis out of range.
func.func @concat_axis_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = ml.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// concat negative axis out of range.
func.func @concat_negative_axis_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = ml.concat %a, %a {axis = -3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// slice starts of the wrong length.
func.func @slice_starts_length(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{expects starts to have one entry per dimension (2), got 1}}
  %0 = ml.slice %x {starts = array<i64: 0>, ends = array<i64: 4, 6>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// slice ends of the wrong length.
func.func @slice_ends_length(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{expects ends to have one entry per dimension (2), got 3}}
  %0 = ml.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 6, 1>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// slice steps of the wrong length.
func.func @slice_steps_length(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{expects steps to have one entry per dimension (2), got 0}}
  %0 = ml.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 6>, steps = array<i64>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// A zero slice step.
func.func @slice_zero_step(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{steps [1, 0] contain a zero}}
  %0 = ml.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 6>, steps = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return
}

// -----

// A slice result whose size does not follow from the slice.
func.func @slice_result_mismatch(%x: tensor<6xf32>) {
  // expected-error @+1 {{result type tensor<6xf32> contradicts the inferred type tensor<3xf32>}}
  %0 = ml.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, steps = array<i64: -2>} : (tensor<6xf32>) -> tensor<6xf32>
  func.return
}

// -----

// gather indices of a float type.
func.func @gather_float_indices(%d: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{expects indices to be a tensor of i32 or i64, got tensor<3xf32>}}
  %0 = ml.gather %d, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// gather indices of a narrow integer type.
func.func @gather_i8_indices(%d: tensor<10x4xf32>, %i: tensor<3xi8>) {
  // expected-error @+1 {{expects indices to be a tensor of i32 or i64, got tensor<3xi8>}}
  %0 = ml.gather %d, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xi8>) -> tensor<3x4xf32>
  func.return
}

// -----

// gather from rank-0 data.
func.func @gather_rank_0_data(%d: tensor<f32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{expects data of rank >= 1}}
  %0 = ml.gather %d, %i {axis = 0 : i64} : (tensor<f32>, tensor<3xi64>) -> tensor<3xf32>
  func.return
}

// -----

// gather axis out of range.
func.func @gather_axis_out_of_range(%d: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = ml.gather %d, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<10x4x3xf32>
  func.return
}

// -----

// gather negative axis out of range.
func.func @gather_negative_axis_out_of_range(%d: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = ml.gather %d, %i {axis = -3 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// A reduction axis out of range.
func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = ml.reduce_sum %x {axes = array<i64: 2>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// A negative reduction axis out of range.
func.func @reduce_negative_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = ml.reduce_mean %x {axes = array<i64: -3>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// A reduction of a rank-0 tensor has no axes to name.
func.func @reduce_rank_0_axis(%x: tensor<f32>) {
  // expected-error @+1 {{axis 0 is out of range for rank 0}}
  %0 = ml.reduce_min %x {axes = array<i64: 0>, keepdims = false} : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// Reduction axes naming a dim twice, once negatively.
func.func @reduce_duplicate_axes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axes [1, -1] name a dimension twice}}
  %0 = ml.reduce_max %x {axes = array<i64: 1, -1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// softmax of a rank-0 tensor.
func.func @softmax_rank_0(%x: tensor<f32>) {
  // expected-error @+1 {{expects an operand of rank >= 1}}
  %0 = ml.softmax %x {axis = 0 : i64} : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// softmax axis out of range.
func.func @softmax_axis_out_of_range(%x: tensor<2x10xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = ml.softmax %x {axis = -3 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return
}

// -----

// layer_norm of a rank-0 tensor.
func.func @layer_norm_rank_0(%x: tensor<f32>) {
  // expected-error @+1 {{expects an operand of rank >= 1}}
  %0 = ml.layer_norm %x, %x, %x {axis = 0 : i64, epsilon = 1.0e-05 : f32} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// layer_norm axis out of range.
func.func @layer_norm_axis_out_of_range(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = ml.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// A layer_norm scale that does not broadcast to the normalized dims.
func.func @layer_norm_scale_mismatch(%x: tensor<2x16xf32>, %g: tensor<8xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{scale shape (8) does not broadcast to the normalized shape (16)}}
  %0 = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x16xf32>, tensor<8xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  func.return
}

// -----

// A layer_norm bias of a higher rank than the normalized dims.
func.func @layer_norm_bias_rank(%x: tensor<2x16xf32>, %g: tensor<16xf32>, %b: tensor<2x16xf32>) {
  // expected-error @+1 {{bias shape (2x16) does not broadcast to the normalized shape (16)}}
  %0 = ml.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x16xf32>, tensor<16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  func.return
}

// -----

// Over a dynamic normalized dim, scale and bias must still agree.
func.func @layer_norm_scale_bias_disagree(%x: tensor<2x?xf32>, %g: tensor<8xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{scale shape (8) and bias shape (16) do not broadcast to one normalized shape}}
  %0 = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x?xf32>, tensor<8xf32>, tensor<16xf32>) -> tensor<2x?xf32>
  func.return
}

// -----

// batch_norm of a rank-1 input.
func.func @batch_norm_rank_1(%x: tensor<3xf32>, %p: tensor<3xf32>) {
  // expected-error @+1 {{expects an input of rank >= 2 (N, C, ...), got rank 1}}
  %0 = ml.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// batch_norm parameters are rank 1.
func.func @batch_norm_param_rank(%x: tensor<1x3x4xf32>, %p: tensor<3xf32>, %m: tensor<1x3xf32>) {
  // expected-error @+1 {{expects mean of rank 1, got rank 2}}
  %0 = ml.batch_norm %x, %p, %p, %m, %p {epsilon = 1.0e-05 : f32} : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3x4xf32>
  func.return
}

// -----

// batch_norm parameters have one entry per channel.
func.func @batch_norm_param_size(%x: tensor<1x3x4xf32>, %p: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{var size (4) does not match the channel dimension (3)}}
  %0 = ml.batch_norm %x, %p, %p, %p, %v {epsilon = 1.0e-05 : f32} : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  func.return
}

// -----

// With a dynamic channel dim, the parameter sizes must still agree.
func.func @batch_norm_param_sizes_disagree(%x: tensor<1x?x4xf32>, %p: tensor<3xf32>, %q: tensor<4xf32>) {
  // expected-error @+1 {{bias size (4) does not match the scale size (3)}}
  %0 = ml.batch_norm %x, %p, %q, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x?x4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x?x4xf32>
  func.return
}

// -----

// conv2d strides of the wrong length.
func.func @conv2d_strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 2 strides, got 1}}
  %0 = ml.conv2d %x, %w {strides = array<i64: 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d dilations of the wrong length.
func.func @conv2d_dilations_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 2 dilations, got 3}}
  %0 = ml.conv2d %x, %w {dilations = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d pads of the wrong length.
func.func @conv2d_pads_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects 4 pads (the begins, then the ends of HxW), got 2}}
  %0 = ml.conv2d %x, %w {pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d strides must be positive.
func.func @conv2d_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{strides [0, 1] must be positive}}
  %0 = ml.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d dilations must be positive.
func.func @conv2d_negative_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{dilations [1, -1] must be positive}}
  %0 = ml.conv2d %x, %w {dilations = array<i64: 1, -1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d pads must be non-negative.
func.func @conv2d_negative_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{pads [0, -1, 0, 0] must be non-negative}}
  %0 = ml.conv2d %x, %w {pads = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d input and weights are rank 4.
func.func @conv2d_rank_3(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{expects a rank-4 input (NCHW) and rank-4 weights (OIHW), got ranks 3 and 4}}
  %0 = ml.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d groups must be positive.
func.func @conv2d_zero_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{groups (0) must be positive}}
  %0 = ml.conv2d %x, %w {groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d output channels must divide into the groups.
func.func @conv2d_groups_output_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{output channels (6) are not divisible by groups (4)}}
  %0 = ml.conv2d %x, %w {groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// conv2d input channels must match the weights'.
func.func @conv2d_channel_mismatch(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{input channels (4) do not match weight input channels (3) times groups (1)}}
  %0 = ml.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// With groups, the input channels are the weights' times groups.
func.func @conv2d_group_channel_mismatch(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{input channels (4) do not match weight input channels (4) times groups (2)}}
  %0 = ml.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// A conv2d bias is rank 1.
func.func @conv2d_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{expects a rank-1 bias, got rank 2}}
  %0 = ml.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// A conv2d bias has one entry per output channel.
func.func @conv2d_bias_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{bias size (8) does not match the output channels (4)}}
  %0 = ml.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<8xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// A conv2d kernel with no extent.
func.func @conv2d_empty_kernel(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x0x3xf32>) {
  // expected-error @+1 {{weight kernel (0x3) must be non-empty}}
  %0 = ml.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<4x3x0x3xf32>) -> tensor<1x4x5x2xf32>
  func.return
}

// -----

// A conv2d kernel larger than the padded input.
func.func @conv2d_window_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x5x5xf32>) {
  // expected-error @+1 {{window of size 5 (dilation 1) does not fit an input dimension of 4 padded by (0, 0)}}
  %0 = ml.conv2d %x, %w : (tensor<1x3x4x4xf32>, tensor<4x3x5x5xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

// A dilated conv2d kernel larger than the padded input.
func.func @conv2d_dilated_window_too_large(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{window of size 3 (dilation 3) does not fit an input dimension of 6 padded by (0, 0)}}
  %0 = ml.conv2d %x, %w {dilations = array<i64: 1, 3>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x1xf32>
  func.return
}

// -----

// A conv2d result whose spatial size does not follow from the attributes.
func.func @conv2d_result_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{result type tensor<1x4x6x6xf32> contradicts the inferred type tensor<1x4x3x3xf32>}}
  %0 = ml.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// A pool needs its kernel.
func.func @max_pool2d_without_kernel(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{property 'kernel' expected}}
  %0 = ml.max_pool2d %x : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// A pool kernel of the wrong length.
func.func @max_pool2d_kernel_length(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{expects 2 kernel sizes, got 3}}
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// A pool kernel must be positive.
func.func @avg_pool2d_zero_kernel(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{kernel [0, 2] must be positive}}
  %0 = ml.avg_pool2d %x {kernel = array<i64: 0, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// Pool strides of the wrong length.
func.func @avg_pool2d_strides_length(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{expects 2 strides, got 3}}
  %0 = ml.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// Pool pads of the wrong length.
func.func @max_pool2d_pads_length(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{expects 4 pads (the begins, then the ends of HxW), got 1}}
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// Pool strides must be positive.
func.func @max_pool2d_negative_stride(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{strides [1, -2] must be positive}}
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 1, -2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// Pool pads must be non-negative.
func.func @avg_pool2d_negative_pad(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{pads [0, 0, -1, 0] must be non-negative}}
  %0 = ml.avg_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, -1, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// A pool input is rank 4.
func.func @max_pool2d_rank_3(%x: tensor<2x6x6xf32>) {
  // expected-error @+1 {{expects a rank-4 input (NCHW), got rank 3}}
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<2x6x6xf32>) -> tensor<2x5x5xf32>
  func.return
}

// -----

// A pool pad as large as the kernel would make a window of padding only.
func.func @max_pool2d_pad_as_large_as_kernel(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{pads [2, 0, 0, 0] must be smaller than the kernel [2, 2]}}
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// A pool pad larger than the kernel, on the right.
func.func @avg_pool2d_pad_larger_than_kernel(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{pads [0, 0, 0, 3] must be smaller than the kernel [3, 2]}}
  %0 = ml.avg_pool2d %x {kernel = array<i64: 3, 2>, pads = array<i64: 0, 0, 0, 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// -----

// A pool window larger than the input.
func.func @avg_pool2d_window_too_large(%x: tensor<1x2x2x6xf32>) {
  // expected-error @+1 {{window of size 3 (dilation 1) does not fit an input dimension of 2 padded by (0, 0)}}
  %0 = ml.avg_pool2d %x {kernel = array<i64: 3, 3>} : (tensor<1x2x2x6xf32>) -> tensor<1x2x1x4xf32>
  func.return
}

// -----

// A pool result whose spatial size does not follow from the attributes.
func.func @max_pool2d_result_mismatch(%x: tensor<1x2x6x6xf32>) {
  // expected-error @+1 {{result type tensor<1x2x5x5xf32> contradicts the inferred type tensor<1x2x3x3xf32>}}
  %0 = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x5x5xf32>
  func.return
}

// LOC-NOT: Traceback

// -----

// An index reduction over an empty axis has no index to give.
func.func @argmax_empty_axis(%x: tensor<4x0xf32>) {
  // expected-error @+1 {{expects a non-empty dim 1 to take the index of, got size 0}}
  %0 = ml.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<4x0xf32>) -> tensor<4xi64>
  func.return
}

// -----

// The index of a rank-0 tensor along an axis does not exist.
func.func @argmin_rank_zero(%x: tensor<f32>) {
  // expected-error @+1 {{expects an operand of rank >= 1}}
  %0 = ml.argmin %x {axis = 0 : i64, keepdims = false} : (tensor<f32>) -> tensor<i64>
  func.return
}

// -----

// Indices are i64.
func.func @argmax_i32_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result element type i32 does not match the expected i64}}
  %0 = ml.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xi32>
  func.return
}

// -----

// A scan axis out of range.
func.func @cumsum_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = ml.cumsum %x {axis = -3 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// Scans add numbers: not i1.
func.func @cumsum_i1(%p: tensor<4xi1>) {
  // expected-error @+1 {{expected a numeric element type (not i1)}}
  %0 = ml.cumsum %p {axis = 0 : i64} : (tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

// ml.attention: query heads not a multiple of the K/V heads.
func.func @attention_heads(%q: tensor<6x4x8xf32>, %k: tensor<4x4x8xf32>) {
  // expected-error @+1 {{query heads (6) must be a multiple of the key/value heads (4)}}
  %0 = ml.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<6x4x8xf32>, tensor<4x4x8xf32>, tensor<4x4x8xf32>) -> tensor<6x4x8xf32>
  func.return
}

// -----

// ml.attention: a mask that does not broadcast to the scores.
func.func @attention_mask_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x5x8xf32>, %m: tensor<4x3xi1>) {
  // expected-error @+1 {{mask (4x3) does not broadcast to the scores (2x4x5)}}
  %0 = ml.attention %q, %k, %k, %m {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<4x3xi1>) -> tensor<2x4x8xf32>
  func.return
}

// -----

// ml.attention: a float mask of another element type than q's.
func.func @attention_mask_type(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf16>) {
  // expected-error @+1 {{expects an i1 mask or an additive mask of element type f32, got f16}}
  %0 = ml.attention %q, %q, %q, %m {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf16>) -> tensor<2x4x8xf32>
  func.return
}

// -----

// ml.attention: q, k and v of different ranks; head sizes that differ; an f32 scale.
func.func @attention_ranks(%q: tensor<2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{expects q, k and v of one rank >= 3, got ranks 3, 4 and 4}}
  %0 = ml.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return
}

// -----

func.func @attention_head_size(%q: tensor<2x4x8xf32>, %k: tensor<2x4x6xf32>) {
  // expected-error @+1 {{head sizes differ: q dimension -1 is 8, k dimension -1 is 6}}
  %0 = ml.attention %q, %k, %k {scale = 1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  func.return
}

// -----

func.func @attention_f32_scale(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expects an f64 scale, got f32}}
  %0 = ml.attention %q, %q, %q {scale = 1.0 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return
}

// RUN: mlc-opt %s --split-input-file -p canonicalize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p canonicalize --print-debuginfo | filecheck %s --check-prefix=LOC

// Two transposes compose into one, which takes the outer op's location.

// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[T:[a-zA-Z0-9_]+]] = ml.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:    func.return %[[T]]

// LOC-LABEL: func.func @transpose_transpose
// LOC:         ml.transpose %{{.*}} {perm = array<i64: 2, 1, 0>} {{.*}} loc("outer.py":7:3)
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = ml.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32> loc("inner.py":6:3)
  %1 = ml.transpose %0 {perm = array<i64: 1, 0, 2>} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32> loc("outer.py":7:3)
  func.return %1 : tensor<4x3x2xf32>
}

// -----

// Two transposes that compose to the identity, and an identity transpose, fold to x.

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3xf32>)
// CHECK-NOT:     ml.transpose
// CHECK:         func.return %[[X]], %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = ml.transpose %0 {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %2 = ml.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// An identity transpose whose result is more static than x is left: folding it
// would change the type its users see.

// CHECK-LABEL: func.func @transpose_identity_refined
// CHECK:         ml.transpose
func.func @transpose_identity_refined(%x: tensor<?x3xf32>) -> tensor<2x3xf32> {
  %0 = ml.transpose %x {perm = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// A transpose that only moves size-1 dims keeps the elements in order: it becomes a
// reshape (at its location), which folds into the reshape before it.

// CHECK-LABEL: func.func @transpose_unit_dims
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<8x9xf32>, %[[Y:[a-zA-Z0-9_]+]]: tensor<1x8x3x3xf32>)
// CHECK-NEXT:    %[[A:[a-zA-Z0-9_]+]] = ml.reshape %[[X]] : (tensor<8x9xf32>) -> tensor<8x1x9xf32>
// CHECK-NEXT:    %[[B:[a-zA-Z0-9_]+]] = ml.reshape %[[Y]] : (tensor<1x8x3x3xf32>) -> tensor<8x1x3x3xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]

// LOC-LABEL: func.func @transpose_unit_dims
// LOC:         ml.reshape %{{.*}} loc("swap.py":3:1)
func.func @transpose_unit_dims(%x: tensor<8x9xf32>, %y: tensor<1x8x3x3xf32>) -> (tensor<8x1x9xf32>, tensor<8x1x3x3xf32>) {
  %0 = ml.reshape %x : (tensor<8x9xf32>) -> tensor<1x8x9xf32>
  %1 = ml.transpose %0 {perm = array<i64: 1, 0, 2>} : (tensor<1x8x9xf32>) -> tensor<8x1x9xf32>
  %2 = ml.transpose %y {perm = array<i64: 1, 0, 2, 3>} : (tensor<1x8x3x3xf32>) -> tensor<8x1x3x3xf32> loc("swap.py":3:1)
  func.return %1, %2 : tensor<8x1x9xf32>, tensor<8x1x3x3xf32>
}

// -----

// A transpose that reorders dims larger than 1 (even with size-1 dims about) stays,
// as does one with a dynamic dim (it might not be 1).

// CHECK-LABEL: func.func @transpose_moves_data
// CHECK:         ml.transpose %{{.*}} {perm = array<i64: 2, 1, 0>} : (tensor<2x1x3xf32>) -> tensor<3x1x2xf32>
// CHECK:         ml.transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<1x?xf32>) -> tensor<?x1xf32>
func.func @transpose_moves_data(%x: tensor<2x1x3xf32>, %y: tensor<1x?xf32>) -> (tensor<3x1x2xf32>, tensor<?x1xf32>) {
  %0 = ml.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<2x1x3xf32>) -> tensor<3x1x2xf32>
  %1 = ml.transpose %y {perm = array<i64: 1, 0>} : (tensor<1x?xf32>) -> tensor<?x1xf32>
  func.return %0, %1 : tensor<3x1x2xf32>, tensor<?x1xf32>
}

// -----

// Two static reshapes become one; a reshape to x's own static type folds to x.

// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[R:[a-zA-Z0-9_]+]] = ml.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    func.return %[[R]], %[[X]]
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
  %0 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %1 = ml.reshape %0 : (tensor<24xf32>) -> tensor<4x6xf32>
  %2 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %1, %2 : tensor<4x6xf32>, tensor<2x3x4xf32>
}

// -----

// A reshape with a run-time shape operand is left alone.

// CHECK-LABEL: func.func @reshape_dynamic
// CHECK-COUNT-2: ml.reshape
func.func @reshape_dynamic(%x: tensor<?x4xf32>, %s: tensor<2xi64>) -> tensor<?x2xf32> {
  %0 = ml.reshape %x : (tensor<?x4xf32>) -> tensor<8x4xf32>
  %1 = ml.reshape %0, %s : (tensor<8x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  func.return %1 : tensor<?x2xf32>
}

// -----

// broadcast_to x's own type folds to x; a real broadcast stays.

// CHECK-LABEL: func.func @broadcast_identity
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<3x1xf32>)
// CHECK-NEXT:    %[[B:[a-zA-Z0-9_]+]] = ml.broadcast_to %[[X]] : (tensor<3x1xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[X]], %[[B]]
func.func @broadcast_identity(%x: tensor<3x1xf32>) -> (tensor<3x1xf32>, tensor<3x4xf32>) {
  %0 = ml.broadcast_to %x : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %1 = ml.broadcast_to %x : (tensor<3x1xf32>) -> tensor<3x4xf32>
  func.return %0, %1 : tensor<3x1xf32>, tensor<3x4xf32>
}

// -----

// A broadcast to x's own dynamic type with a run-time shape may still broadcast a
// size-1 dimension: it stays.

// CHECK-LABEL: func.func @broadcast_dynamic
// CHECK:         ml.broadcast_to
func.func @broadcast_dynamic(%x: tensor<?x4xf32>, %s: tensor<2xi64>) -> tensor<?x4xf32> {
  %0 = ml.broadcast_to %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}

// -----

// neg(neg(x)) -> x; relu(relu(x)) -> relu(x); abs(abs(x)) -> abs(x).

// CHECK-LABEL: func.func @unary
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK-NOT:     ml.neg
// CHECK-DAG:     %[[R:[a-zA-Z0-9_]+]] = ml.relu %[[X]]
// CHECK-DAG:     %[[A:[a-zA-Z0-9_]+]] = ml.abs %[[X]]
// CHECK-NOT:     ml.relu
// CHECK-NOT:     ml.abs
// CHECK:         func.return %[[X]], %[[R]], %[[A]]
func.func @unary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = ml.neg %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = ml.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = ml.relu %2 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = ml.abs %x : (tensor<4xf32>) -> tensor<4xf32>
  %5 = ml.abs %4 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1, %3, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// abs(neg(x)) -> abs(x) for signed values; for unsigned ones neg wraps around.

// CHECK-LABEL: func.func @abs_neg
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4xi32>, %[[U:[a-zA-Z0-9_]+]]: tensor<4xui8>)
// CHECK-NEXT:    %[[A:[a-zA-Z0-9_]+]] = ml.abs %[[X]] : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %[[N:[a-zA-Z0-9_]+]] = ml.neg %[[U]]
// CHECK-NEXT:    %[[B:[a-zA-Z0-9_]+]] = ml.abs %[[N]]
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @abs_neg(%x: tensor<4xi32>, %u: tensor<4xui8>) -> (tensor<4xi32>, tensor<4xui8>) {
  %0 = ml.neg %x : (tensor<4xi32>) -> tensor<4xi32>
  %1 = ml.abs %0 : (tensor<4xi32>) -> tensor<4xi32>
  %2 = ml.neg %u : (tensor<4xui8>) -> tensor<4xui8>
  %3 = ml.abs %2 : (tensor<4xui8>) -> tensor<4xui8>
  func.return %1, %3 : tensor<4xi32>, tensor<4xui8>
}

// -----

// x * 1, 1 * x, x / 1, x - 0.0 and x + (-0.0) fold to x, with splats of any shape
// that leaves x's type.

// CHECK-LABEL: func.func @identity_elements
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x3xf32>)
// CHECK-NOT:     ml.
// CHECK:         func.return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identity_elements(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %ones = arith.constant dense<1.0> : tensor<1x3xf32>
  %zero = arith.constant dense<0.0> : tensor<3xf32>
  %negzero = arith.constant dense<-0.0> : tensor<f32>
  %0 = ml.mul %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %1 = ml.mul %ones, %x : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = ml.div %x, %ones : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %3 = ml.sub %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = ml.add %negzero, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Integer x + 0 and 0 + x fold (no signed zeros there).

// CHECK-LABEL: func.func @identity_elements_int
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4xi32>)
// CHECK-NOT:     ml.add
// CHECK:         func.return %[[X]], %[[X]]
func.func @identity_elements_int(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %zero = arith.constant dense<0> : tensor<4xi32>
  %0 = ml.add %x, %zero : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = ml.add %zero, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Left alone: an identity that broadcasts x to a new shape, float x + 0.0 (it
// turns -0.0 into +0.0), x - (-0.0), 1 / x, float x - x and x * 0 (NaN and inf),
// and a constant that is not a splat.

// CHECK-LABEL: func.func @identity_elements_kept
// CHECK-COUNT-8: ml.
// CHECK-NOT:     ml.
func.func @identity_elements_kept(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %ones = arith.constant dense<1.0> : tensor<2x3xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %negzero = arith.constant dense<-0.0> : tensor<f32>
  %mixed = arith.constant dense<[1.0, 2.0, 1.0]> : tensor<3xf32>
  %0 = ml.mul %x, %ones : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ml.add %x, %zero : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = ml.sub %x, %negzero : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %3 = ml.div %one, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = ml.sub %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %5 = ml.mul %x, %zero : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %6 = ml.mul %x, %mixed : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %7 = ml.sub %zero, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A cast to x's own type folds; a real cast stays.

// CHECK-LABEL: func.func @cast
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C:[a-zA-Z0-9_]+]] = ml.cast %[[X]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK-NEXT:    func.return %[[X]], %[[C]]
func.func @cast(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = ml.cast %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// Squares and cubes by a splat constant become products at the pow's location (no
// libm call in the loop); on a dynamic shape too, and for integers.

// CHECK-LABEL: func.func @small_powers
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x5xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<3xi32>)
// CHECK-NOT:     ml.pow
// CHECK:         %[[S:[a-zA-Z0-9_]+]] = ml.mul %[[X]], %[[X]] : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK-NEXT:    %[[C:[a-zA-Z0-9_]+]] = ml.mul %[[S]], %[[X]] : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK-NEXT:    %[[Q:[a-zA-Z0-9_]+]] = ml.mul %[[X]], %[[X]] : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
// CHECK-NEXT:    %[[J:[a-zA-Z0-9_]+]] = ml.mul %[[I]], %[[I]] : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK-NOT:     ml.pow
// CHECK:         func.return %[[C]], %[[Q]], %[[J]]

// LOC-LABEL: func.func @small_powers
// LOC-COUNT-2: ml.mul {{.*}} loc("gelu.py":4:2)
func.func @small_powers(%x: tensor<?x5xf32>, %i: tensor<3xi32>) -> (tensor<?x5xf32>, tensor<?x5xf32>, tensor<3xi32>) {
  %three = arith.constant dense<3.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<1xf32>
  %itwo = arith.constant dense<2> : tensor<i32>
  %0 = ml.pow %x, %three : (tensor<?x5xf32>, tensor<f32>) -> tensor<?x5xf32> loc("gelu.py":4:2)
  %1 = ml.pow %x, %two : (tensor<?x5xf32>, tensor<1xf32>) -> tensor<?x5xf32>
  %2 = ml.pow %i, %itwo : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  func.return %0, %1, %2 : tensor<?x5xf32>, tensor<?x5xf32>, tensor<3xi32>
}

// -----

// Left alone: other exponents (a half, four, a non-splat), a variable exponent, and
// an exponent that broadcasts x to a larger shape.

// CHECK-LABEL: func.func @powers_kept
// CHECK-COUNT-5: ml.pow
// CHECK-NOT:     ml.mul
func.func @powers_kept(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %half = arith.constant dense<0.5> : tensor<f32>
  %four = arith.constant dense<4.0> : tensor<f32>
  %mixed = arith.constant dense<[2.0, 3.0, 2.0]> : tensor<3xf32>
  %wide = arith.constant dense<2.0> : tensor<2x3xf32>
  %0 = ml.pow %x, %half : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = ml.pow %x, %four : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = ml.pow %x, %mixed : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = ml.pow %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = ml.pow %x, %wide : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>
}

// -----

// A convolution's bias of +0.0 everywhere goes (its sums start from +0.0 anyway); the
// strides, dilations, pads and groups stay, and so does the location.

// CHECK-LABEL: func.func @conv_zero_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<2x8x9x9xf32>, %[[W:[a-zA-Z0-9_]+]]: tensor<8x1x3x3xf32>, %[[V:[a-zA-Z0-9_]+]]: tensor<4x8x1x1xf32>)
// CHECK-NOT:     arith.constant
// CHECK-NEXT:    %[[D:[a-zA-Z0-9_]+]] = ml.conv2d %[[X]], %[[W]] {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 2, 1, 2>, groups = 8 : i64} : (tensor<2x8x9x9xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x4x5xf32>
// CHECK-NEXT:    %[[P:[a-zA-Z0-9_]+]] = ml.conv2d %[[D]], %[[V]] : (tensor<2x8x4x5xf32>, tensor<4x8x1x1xf32>) -> tensor<2x4x4x5xf32>
// CHECK-NEXT:    func.return %[[P]]

// LOC-LABEL: func.func @conv_zero_bias
// LOC:         ml.conv2d {{.*}} loc("dw.py":3:1)
func.func @conv_zero_bias(%x: tensor<2x8x9x9xf32>, %w: tensor<8x1x3x3xf32>, %v: tensor<4x8x1x1xf32>) -> tensor<2x4x4x5xf32> {
  %zero8 = arith.constant dense<0.0> : tensor<8xf32>
  %zero4 = arith.constant dense<0.0> : tensor<4xf32>
  %0 = ml.conv2d %x, %w, %zero8 {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 2, 1, 2>, groups = 8 : i64} : (tensor<2x8x9x9xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<2x8x4x5xf32> loc("dw.py":3:1)
  %1 = ml.conv2d %0, %v, %zero4 : (tensor<2x8x4x5xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<2x4x4x5xf32>
  func.return %1 : tensor<2x4x4x5xf32>
}

// -----

// Kept: a bias of -0.0 (it would turn a sum of -0.0 into +0.0 without it, so it
// changes a zero's sign), of other values, not one value, or not a constant.

// CHECK-LABEL: func.func @conv_bias_kept
// CHECK-COUNT-4: ml.conv1d %{{.*}}, %{{.*}}, %{{.*}} :
func.func @conv_bias_kept(%x: tensor<1x2x5xf32>, %w: tensor<3x2x1xf32>, %b: tensor<3xf32>) -> (tensor<1x3x5xf32>, tensor<1x3x5xf32>, tensor<1x3x5xf32>, tensor<1x3x5xf32>) {
  %negzero = arith.constant dense<-0.0> : tensor<3xf32>
  %one = arith.constant dense<1.0> : tensor<3xf32>
  %mixed = arith.constant dense<[0.0, 0.0, 1.0]> : tensor<3xf32>
  %0 = ml.conv1d %x, %w, %negzero : (tensor<1x2x5xf32>, tensor<3x2x1xf32>, tensor<3xf32>) -> tensor<1x3x5xf32>
  %1 = ml.conv1d %x, %w, %one : (tensor<1x2x5xf32>, tensor<3x2x1xf32>, tensor<3xf32>) -> tensor<1x3x5xf32>
  %2 = ml.conv1d %x, %w, %mixed : (tensor<1x2x5xf32>, tensor<3x2x1xf32>, tensor<3xf32>) -> tensor<1x3x5xf32>
  %3 = ml.conv1d %x, %w, %b : (tensor<1x2x5xf32>, tensor<3x2x1xf32>, tensor<3xf32>) -> tensor<1x3x5xf32>
  func.return %0, %1, %2, %3 : tensor<1x3x5xf32>, tensor<1x3x5xf32>, tensor<1x3x5xf32>, tensor<1x3x5xf32>
}

// RUN: mlc-opt %s --split-input-file -p canonicalize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p canonicalize,canonicalize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p canonicalize --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// Constant folding of `ml` ops on small constants, and folding of shape arithmetic.
// The second RUN checks idempotence; LOC checks that a folded constant keeps the
// location of the op it replaces.

// Integer division truncates toward zero, as `arith.divsi` does; a chain of ops on
// constants folds to one constant.

// CHECK-LABEL: func.func @int_div_truncates
// CHECK-NEXT:    %[[Q:.+]] = arith.constant dense<[-3, 3, -3, 3]> : tensor<4xi32>
// CHECK-NEXT:    func.return %[[Q]]

// LOC-LABEL:   func.func @int_div_truncates
// LOC:           arith.constant dense<[-3, 3, -3, 3]> : tensor<4xi32> loc("model.py":3:5)
func.func @int_div_truncates() -> tensor<4xi32> {
  %a = arith.constant dense<[-7, 7, 7, -7]> : tensor<4xi32>
  %b = arith.constant dense<[2, 2, -2, -2]> : tensor<4xi32>
  %n = ml.neg %b : (tensor<4xi32>) -> tensor<4xi32>
  %m = ml.neg %n : (tensor<4xi32>) -> tensor<4xi32>
  %q = ml.div %a, %m : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32> loc("model.py":3:5)
  func.return %q : tensor<4xi32>
}

// -----

// Integers wrap around; i8 abs of -128 is -128.

// CHECK-LABEL: func.func @int_wraps
// CHECK-DAG:     arith.constant dense<[-128, 126]> : tensor<2xi8>
// CHECK-DAG:     arith.constant dense<[-128, 127]> : tensor<2xi8>
// CHECK-NOT:     ml.
func.func @int_wraps() -> (tensor<2xi8>, tensor<2xi8>) {
  %a = arith.constant dense<[127, 127]> : tensor<2xi8>
  %b = arith.constant dense<[1, -1]> : tensor<2xi8>
  %s = ml.add %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  %m = arith.constant dense<[-128, 127]> : tensor<2xi8>
  %abs = ml.abs %m : (tensor<2xi8>) -> tensor<2xi8>
  func.return %s, %abs : tensor<2xi8>, tensor<2xi8>
}

// -----

// f16 arithmetic rounds to f16 at every step: 2048 + 1 is 2048 (ties to even).

// CHECK-LABEL: func.func @f16_rounds
// CHECK-NEXT:    %[[R:.+]] = arith.constant dense<[3.000000e+00, 2.048000e+03]> : tensor<2xf16>
// CHECK-NEXT:    func.return %[[R]]
func.func @f16_rounds() -> tensor<2xf16> {
  %a = arith.constant dense<[1.0, 2048.0]> : tensor<2xf16>
  %b = arith.constant dense<[2.0, 1.0]> : tensor<2xf16>
  %s = ml.add %a, %b : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  func.return %s : tensor<2xf16>
}

// -----

// Casts: float to int truncates toward zero, to i1 is `!= 0`, i1 to int is 0 or 1;
// comparisons give i1 and select picks elementwise.

// CHECK-LABEL: func.func @casts_cmp_select
// CHECK-DAG:     arith.constant dense<[-2, 2, 0]> : tensor<3xi32>
// CHECK-DAG:     arith.constant dense<true> : tensor<3xi1>
// CHECK-DAG:     arith.constant dense<[1, 1, 0]> : tensor<3xi64>
// CHECK-DAG:     arith.constant dense<[-2.500000e+00, 2.500000e+00, 1.000000e+00]> : tensor<3xf32>
// CHECK-NOT:     ml.
func.func @casts_cmp_select() -> (tensor<3xi32>, tensor<3xi1>, tensor<3xi64>, tensor<3xf32>) {
  %x = arith.constant dense<[-2.5, 2.5, 0.0]> : tensor<3xf32>
  %i = ml.cast %x : (tensor<3xf32>) -> tensor<3xi32>
  %b = ml.cast %x : (tensor<3xf32>) -> tensor<3xi1>
  %w = ml.cast %b : (tensor<3xi1>) -> tensor<3xi64>
  %one = arith.constant dense<1.0> : tensor<f32>
  %c = ml.cmp "ne", %x, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  %z = arith.constant dense<0.0> : tensor<f32>
  %nz = ml.cmp "ne", %x, %z : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  %s = ml.select %nz, %x, %one : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %i, %c, %w, %s : tensor<3xi32>, tensor<3xi1>, tensor<3xi64>, tensor<3xf32>
}

// -----

// Data movement: transpose, static reshape, broadcast, concat, slice and gather
// (negative indices count from the end).

// CHECK-LABEL: func.func @movement
// CHECK-DAG:     arith.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
// CHECK-DAG:     arith.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
// CHECK-DAG:     arith.constant dense<{{\[}}[7, 8], [7, 8]]> : tensor<2x2xi32>
// CHECK-DAG:     arith.constant dense<[1, 2, 3, 7, 8]> : tensor<5xi32>
// CHECK-DAG:     arith.constant dense<[6, 4]> : tensor<2xi32>
// CHECK-DAG:     arith.constant dense<[6, 1]> : tensor<2xi32>
// CHECK-NOT:     ml.
func.func @movement() -> (tensor<3x2xi32>, tensor<6xi32>, tensor<2x2xi32>, tensor<5xi32>, tensor<2xi32>, tensor<2xi32>) {
  %m = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %t = ml.transpose %m {perm = array<i64: 1, 0>} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %r = ml.reshape %m : (tensor<2x3xi32>) -> tensor<6xi32>
  %v = arith.constant dense<[7, 8]> : tensor<2xi32>
  %b = ml.broadcast_to %v : (tensor<2xi32>) -> tensor<2x2xi32>
  %h = ml.slice %r {starts = array<i64: 0>, ends = array<i64: 3>, steps = array<i64: 1>} : (tensor<6xi32>) -> tensor<3xi32>
  %c = ml.concat %h, %v {axis = 0 : i64} : (tensor<3xi32>, tensor<2xi32>) -> tensor<5xi32>
  %s = ml.slice %r {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, steps = array<i64: -2>} : (tensor<6xi32>) -> tensor<3xi32>
  %s2 = ml.slice %s {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<3xi32>) -> tensor<2xi32>
  %idx = arith.constant dense<[-1, 0]> : tensor<2xi64>
  %g = ml.gather %r, %idx {axis = 0 : i64} : (tensor<6xi32>, tensor<2xi64>) -> tensor<2xi32>
  func.return %t, %r, %b, %c, %s2, %g : tensor<3x2xi32>, tensor<6xi32>, tensor<2x2xi32>, tensor<5xi32>, tensor<2xi32>, tensor<2xi32>
}

// -----

// Reductions: sum, mean (integer mean truncates), max and min, with keepdims.

// CHECK-LABEL: func.func @reductions
// CHECK-DAG:     arith.constant dense<[6, 15]> : tensor<2xi32>
// CHECK-DAG:     arith.constant dense<{{\[}}[2], [5]]> : tensor<2x1xi32>
// CHECK-DAG:     arith.constant dense<[4, 5, 6]> : tensor<3xi32>
// CHECK-DAG:     arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NOT:     ml.
func.func @reductions() -> (tensor<2xi32>, tensor<2x1xi32>, tensor<3xi32>, tensor<f32>) {
  %m = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %s = ml.reduce_sum %m {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xi32>) -> tensor<2xi32>
  %a = ml.reduce_mean %m {axes = array<i64: -1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<2x1xi32>
  %x = ml.reduce_max %m {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xi32>) -> tensor<3xi32>
  %f = arith.constant dense<[[3.0, 1.0], [2.0, 4.0]]> : tensor<2x2xf32>
  %n = ml.reduce_min %f {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x2xf32>) -> tensor<f32>
  func.return %s, %a, %x, %n : tensor<2xi32>, tensor<2x1xi32>, tensor<3xi32>, tensor<f32>
}

// -----

// Float max, min and relu follow `arith.maximumf` / `minimumf`: -0.0 < +0.0.

// CHECK-LABEL: func.func @float_max
// CHECK-DAG:     %[[M:.+]] = arith.constant dense<[1.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK-DAG:     %[[N:.+]] = arith.constant dense<[-0.000000e+00, -0.000000e+00, -3.000000e+00]> : tensor<3xf32>
// CHECK-DAG:     %[[R:.+]] = arith.constant dense<[0.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<3xf32>
// CHECK:         func.return %[[M]], %[[N]], %[[R]]
func.func @float_max() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %a = arith.constant dense<[-0.0, -0.0, 2.0]> : tensor<3xf32>
  %b = arith.constant dense<[1.0, 0.0, -3.0]> : tensor<3xf32>
  %m = ml.max %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %n = ml.min %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = ml.relu %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %m, %n, %r : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Transcendentals fold to the correctly rounded value.

// CHECK-LABEL: func.func @transcendental
// CHECK-NEXT:    %[[E:.+]] = arith.constant dense<[1.000000e+00, 2.71828175]> : tensor<2xf32>
// CHECK-NEXT:    func.return %[[E]]
func.func @transcendental() -> tensor<2xf32> {
  %x = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %e = ml.exp %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %e : tensor<2xf32>
}

// -----

// Not folded: an operand that is not constant, an integer division by zero (undefined
// behaviour, left for the run time), a result over the size limit, and a result
// that is not finite (xDSL's text form does not round-trip NaN and inf).

// CHECK-LABEL: func.func @not_folded
// CHECK:         ml.add
// CHECK:         ml.div
// CHECK:         ml.broadcast_to
// CHECK:         ml.div
// CHECK:         ml.log
func.func @not_folded(%x: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<64x64xf32>, tensor<f32>, tensor<f32>) {
  %c = arith.constant dense<[1, 2]> : tensor<2xi32>
  %s = ml.add %x, %c : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %z = arith.constant dense<[1, 0]> : tensor<2xi32>
  %q = ml.div %c, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %b = ml.broadcast_to %one : (tensor<f32>) -> tensor<64x64xf32>
  %fz = arith.constant dense<0.0> : tensor<f32>
  %inf = ml.div %one, %fz : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %nan = ml.log %fz : (tensor<f32>) -> tensor<f32>
  func.return %s, %q, %b, %inf, %nan : tensor<2xi32>, tensor<2xi32>, tensor<64x64xf32>, tensor<f32>, tensor<f32>
}

// -----

// Shape arithmetic: a reshape whose shape operand is a constant becomes static (a
// cast keeps the written type for the users), and tensor.dim of a static dim is a
// constant.

// CHECK-LABEL: func.func @constant_shape
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<6xf32>)
// CHECK-NEXT:    %[[R:.+]] = ml.reshape %[[X]] : (tensor<6xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.+]] = tensor.cast %[[R]] : tensor<2x3xf32> to tensor<?x?xf32>
// CHECK-NEXT:    %[[D:.+]] = arith.constant 3 : index
// CHECK-NEXT:    func.return %[[C]], %[[D]]
func.func @constant_shape(%x: tensor<6xf32>) -> (tensor<?x?xf32>, index) {
  %s = arith.constant dense<[2, -1]> : tensor<2xi64>
  %r = ml.reshape %x, %s : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %one = arith.constant 1 : index
  %d = tensor.dim %r, %one : tensor<?x?xf32>
  %c = tensor.cast %r : tensor<?x?xf32> to tensor<?x?xf32>
  func.return %c, %d : tensor<?x?xf32>, index
}

// -----

// A run-time shape operand, or tensor.dim of a dynamic dim, is left alone.

// CHECK-LABEL: func.func @dynamic_shape
// CHECK:         ml.reshape %{{.*}}, %{{.*}} :
// CHECK:         tensor.dim
func.func @dynamic_shape(%x: tensor<?xf32>, %s: tensor<2xi64>) -> (tensor<?x?xf32>, index) {
  %r = ml.reshape %x, %s : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %zero = arith.constant 0 : index
  %d = tensor.dim %x, %zero : tensor<?xf32>
  func.return %r, %d : tensor<?x?xf32>, index
}

// -----

// Constants leave a whole nest of scf.for loops at once, keeping their locations
// (the folded `%k` too), but not an scf.if: they stay at the top of its region.

// CHECK-LABEL: func.func @hoist_loop_constants
// CHECK:         arith.constant 2.000000e+00 : f32
// CHECK:         arith.constant 3.000000e+00 : f32
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for
// CHECK-NOT:           arith.constant
// CHECK:               scf.if
// CHECK-NEXT:            arith.constant 5.000000e+00 : f32
// CHECK-NEXT:            memref.store

// LOC-LABEL:   func.func @hoist_loop_constants
// LOC:           arith.constant 2.000000e+00 : f32 loc("loops.py":7:3)
func.func @hoist_loop_constants(%m: memref<4x4x4xf32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c4 step %c1 {
        %two = arith.constant 2.0 : f32 loc("loops.py":7:3)
        %one = arith.constant 1.0 : f32
        %three = arith.addf %two, %one : f32
        %x = memref.load %m[%i, %j, %k] : memref<4x4x4xf32>
        %y = arith.mulf %x, %three : f32
        %z = arith.mulf %y, %two : f32
        memref.store %z, %m[%i, %j, %k] : memref<4x4x4xf32>
        scf.if %c {
          %five = arith.constant 5.0 : f32
          memref.store %five, %m[%i, %j, %k] : memref<4x4x4xf32>
        }
      }
    }
  }
  func.return
}

// -----

// memref.dim of a memref.alloc is the alloc's size; a buffer then left with only its
// dealloc goes. A dim of a function argument stays, and so does a buffer that is read.

// CHECK-LABEL: func.func @dim_of_alloc
// CHECK-SAME:    (%[[X:.+]]: memref<?x784xf32>)
// CHECK:         %[[N:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x784xf32>
// CHECK-NOT:     memref.dim
// CHECK:         %[[B:.+]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?x128xf32>
// CHECK-NEXT:    %[[C:.+]] = memref.alloc(%[[N]], %[[N]]) : memref<?x?xf32>
// CHECK-NEXT:    %[[Q:.+]] = memref.load %[[C]]
// CHECK-NEXT:    memref.dealloc %[[C]] : memref<?x?xf32>
// CHECK-NEXT:    %[[S:.+]] = arith.constant 128 : index
// CHECK-NEXT:    func.return %[[B]], %[[N]], %[[S]], %[[Q]]
func.func @dim_of_alloc(%x: memref<?x784xf32>) -> (memref<?x128xf32>, index, index, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x784xf32>
  %a = memref.alloc(%n) {alignment = 64 : i64} : memref<?x128xf32>
  %m = memref.dim %a, %c0 : memref<?x128xf32>
  memref.dealloc %a : memref<?x128xf32>
  %b = memref.alloc(%m) {alignment = 64 : i64} : memref<?x128xf32>
  %c = memref.alloc(%m, %n) : memref<?x?xf32>
  %p = memref.dim %c, %c1 : memref<?x?xf32>
  %q = memref.load %c[%c0, %c0] : memref<?x?xf32>
  memref.dealloc %c : memref<?x?xf32>
  %s = memref.dim %b, %c1 : memref<?x128xf32>
  func.return %b, %p, %s, %q : memref<?x128xf32>, index, index, f32
}

// -----

// Integer arithmetic folds when an operand is a constant: two constants to one, an
// identity (`x * 1`, `1 * x`, `x + 0`, `x floordiv 1`) to the other operand. With no
// constant operand nothing folds, a block argument's and a loop index's included.

// CHECK-LABEL: func.func @integer_folds
// CHECK-SAME:    (%[[N:[^:]+]]: index, %[[M:[^:]+]]: i32,
// CHECK-DAG:     %[[C12:.+]] = arith.constant 12 : index
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK:         %[[NN:.+]] = arith.muli %[[N]], %[[N]] : index
// CHECK-NEXT:    %[[MM:.+]] = arith.remui %[[M]], %[[M]] : i32
// CHECK-NEXT:    %[[R:.+]] = arith.remui %[[NN]], %[[C5]] : index
// CHECK:         scf.for %[[I:.+]] =
// CHECK-NEXT:      %[[IN:.+]] = arith.addi %[[I]], %[[N]] : index
// CHECK-NEXT:      memref.store %{{.+}}, %{{.+}}[%[[IN]]]
// CHECK:         func.return %[[C12]], %[[NN]], %[[MM]], %[[R]], %[[N]]
func.func @integer_folds(%n: index, %m: i32, %buf: memref<64xf32>) -> (index, index, i32, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %twelve = arith.muli %c3, %c4 : index
  %nn = arith.muli %n, %n : index
  %mm = arith.remui %m, %m : i32
  %r = arith.remui %nn, %c5 : index
  %f = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %in = arith.addi %i, %n : index
    memref.store %f, %buf[%in] : memref<64xf32>
  }
  %a = arith.muli %n, %c1 : index
  %b = arith.muli %c1, %a : index
  %c = arith.addi %b, %c0 : index
  %d = arith.divui %c, %c1 : index
  func.return %twelve, %nn, %mm, %r, %d : index, index, i32, index, index
}

// RUN: mlc-opt %s --split-input-file --verify-roundtrip -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// The bodies of the trigonometric, rounding, remainder and bitwise ops: one `math` op
// for the float functions, at the op's location.

// CHECK-LABEL: func.func @sin
// CHECK:         linalg.generic
// CHECK:         ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[S:.+]] = math.sin %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32

// LOC-LABEL:   func.func @sin
// LOC:           math.sin {{.*}} loc("model.py":4:2)

func.func @sin(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %r = ml.sin %x : (tensor<?x3xf32>) -> tensor<?x3xf32> loc("model.py":4:2)
  func.return %r : tensor<?x3xf32>
}

// -----

// Round is round-half-to-even.

// CHECK-LABEL: func.func @round
// CHECK:         math.roundeven %{{.+}} : f16

func.func @round(%x: tensor<5xf16>) -> tensor<5xf16> {
  %r = ml.round %x : (tensor<5xf16>) -> tensor<5xf16>
  func.return %r : tensor<5xf16>
}

// -----

// A signed remainder divides by 1 where the divisor is -1 (INT_MIN % -1 overflows).

// CHECK-LABEL: func.func @rem_int
// CHECK:         ^bb0(%[[A:.+]]: i32, %[[B:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT:      %[[M1:.+]] = arith.constant -1 : i32
// CHECK-NEXT:      %[[IS:.+]] = arith.cmpi eq, %[[B]], %[[M1]] : i32
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT:      %[[SAFE:.+]] = arith.select %[[IS]], %[[ONE]], %[[B]] : i32
// CHECK-NEXT:      %[[R:.+]] = arith.remsi %[[A]], %[[SAFE]] : i32
// CHECK-NEXT:      linalg.yield %[[R]] : i32

func.func @rem_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = ml.rem %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %r : tensor<4xi32>
}

// -----

// A float remainder: the fma of the truncated quotient, in f64, one step back on
// overshoot, x kept where the quotient is 0, x's sign.

// CHECK-LABEL: func.func @rem_float
// CHECK:         ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      %[[X:.+]] = arith.extf %[[A]] : f32 to f64
// CHECK-NEXT:      %[[Y:.+]] = arith.extf %[[B]] : f32 to f64
// CHECK-NEXT:      %[[D:.+]] = arith.divf %[[X]], %[[Y]] : f64
// CHECK-NEXT:      %[[Q:.+]] = math.trunc %[[D]] : f64
// CHECK-NEXT:      %[[NQ:.+]] = arith.negf %[[Q]] : f64
// CHECK-NEXT:      %[[R:.+]] = math.fma %[[NQ]], %[[Y]], %[[X]] : f64
// CHECK:           arith.cmpf olt
// CHECK:           math.copysign
// CHECK:           arith.cmpf oeq, %[[Q]]
// CHECK:           %[[SIGNED:.+]] = math.copysign %{{.+}}, %[[X]] : f64
// CHECK-NEXT:      %[[T:.+]] = arith.truncf %[[SIGNED]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[T]] : f32

func.func @rem_float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = ml.rem %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Shift amounts are clamped below the width; past it a left (or unsigned) shift selects
// 0, and a signed right shift is the sign fill that the clamped shift gives.

// CHECK-LABEL: func.func @shifts
// CHECK:         ^bb0(%[[A:.+]]: i8, %[[B:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT:      %[[W1:.+]] = arith.constant 7 : i8
// CHECK-NEXT:      %[[C:.+]] = arith.minui %[[B]], %[[W1]] : i8
// CHECK-NEXT:      %[[S:.+]] = arith.shli %[[A]], %[[C]] : i8
// CHECK-NEXT:      %[[W:.+]] = arith.constant 8 : i8
// CHECK-NEXT:      %[[IN:.+]] = arith.cmpi ult, %[[B]], %[[W]] : i8
// CHECK-NEXT:      %[[Z:.+]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[R:.+]] = arith.select %[[IN]], %[[S]], %[[Z]] : i8
// CHECK-NEXT:      linalg.yield %[[R]] : i8
// CHECK:         ^bb0(%[[X:.+]]: i16, %[[N:.+]]: i16, %{{.+}}: i16):
// CHECK-NEXT:      %[[W15:.+]] = arith.constant 15 : i16
// CHECK-NEXT:      %[[CN:.+]] = arith.minui %[[N]], %[[W15]] : i16
// CHECK-NEXT:      %[[SR:.+]] = arith.shrsi %[[X]], %[[CN]] : i16
// CHECK-NEXT:      linalg.yield %[[SR]] : i16

func.func @shifts(%a: tensor<4xui8>, %b: tensor<4xui8>, %c: tensor<4xi16>) -> (tensor<4xui8>, tensor<4xi16>) {
  %l = ml.shift_left %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %r = ml.shift_right %c, %c : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  func.return %l, %r : tensor<4xui8>, tensor<4xi16>
}

// -----

// Bitwise ops are arith's; not is xor with all ones (true for i1).

// CHECK-LABEL: func.func @bitwise
// CHECK:         arith.xori %{{.+}}, %{{.+}} : i8
// CHECK:         %[[ONES:.+]] = arith.constant -1 : i8
// CHECK-NEXT:    arith.xori %{{.+}}, %[[ONES]] : i8
// CHECK:         %[[TRUE:.+]] = arith.constant true
// CHECK-NEXT:    arith.xori %{{.+}}, %[[TRUE]] : i1

func.func @bitwise(%a: tensor<4xi8>, %p: tensor<4xi1>) -> (tensor<4xi8>, tensor<4xi1>) {
  %x = ml.bitwise_xor %a, %a : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %n = ml.bitwise_not %x : (tensor<4xi8>) -> tensor<4xi8>
  %q = ml.bitwise_not %p : (tensor<4xi1>) -> tensor<4xi1>
  func.return %n, %q : tensor<4xi8>, tensor<4xi1>
}

// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-ml-to-linalg,convert-ml-to-linalg | filecheck %s

// Unsigned element types pick the unsigned arith ops, then every type becomes
// signless: the same bits, the op says how to read them. (The second RUN line checks
// that a second application changes nothing.)

// CHECK-LABEL: func.func @unsigned_ops
// CHECK-SAME:    (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi1>, tensor<4xi32>, tensor<4xf32>, tensor<4xi8>)
// CHECK:         arith.divui %{{.*}}, %{{.*}} : i8
// CHECK:         arith.cmpi ult, %{{.*}}, %{{.*}} : i8
// CHECK:         arith.extui %{{.*}} : i8 to i32
// CHECK:         arith.uitofp %{{.*}} : i8 to f32
// CHECK:         arith.constant dense<[-56, 1, 2, -1]> : tensor<4xi8>
// CHECK:         arith.maxui %{{.*}}, %{{.*}} : i8
// CHECK-NOT:     ui8
func.func @unsigned_ops(%x: tensor<4xui8>, %y: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xi32>, tensor<4xf32>, tensor<4xui8>) {
  %d = ml.div %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %c = ml.cmp "lt", %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %w = ml.cast %x : (tensor<4xui8>) -> tensor<4xi32>
  %f = ml.cast %x : (tensor<4xui8>) -> tensor<4xf32>
  %k = arith.constant dense<[200, 1, 2, 255]> : tensor<4xui8>
  %m = ml.max %x, %k : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %d, %c, %w, %f, %m : tensor<4xui8>, tensor<4xi1>, tensor<4xi32>, tensor<4xf32>, tensor<4xui8>
}

// -----

// Casts into unsigned types: fptoui from floats, and a same-width integer cast is the
// value itself; relu and abs of unsigned values are too.

// CHECK-LABEL: func.func @to_unsigned
// CHECK-SAME:    (%[[F:[a-zA-Z0-9_]+]]: tensor<4xf32>, %[[I:[a-zA-Z0-9_]+]]: tensor<4xi16>)
// CHECK:         arith.fptoui %{{.*}} : f32 to i16
// CHECK:         ^bb0(%[[V:.+]]: i16, %{{.*}}: i16):
// CHECK-NEXT:      linalg.yield %[[V]] : i16
// CHECK:         ^bb0(%[[R:.+]]: i16, %{{.*}}: i16):
// CHECK-NEXT:      linalg.yield %[[R]] : i16
func.func @to_unsigned(%f: tensor<4xf32>, %i: tensor<4xi16>) -> (tensor<4xui16>, tensor<4xui16>, tensor<4xui16>) {
  %a = ml.cast %f : (tensor<4xf32>) -> tensor<4xui16>
  %b = ml.cast %i : (tensor<4xi16>) -> tensor<4xui16>
  %r = ml.relu %b : (tensor<4xui16>) -> tensor<4xui16>
  func.return %a, %b, %r : tensor<4xui16>, tensor<4xui16>, tensor<4xui16>
}

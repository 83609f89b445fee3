// RUN: MLC_ROUNDTRIP
// RUN: mlc-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// The trigonometric, hyperbolic and rounding ops: float unary ops, pretty and generic.

// CHECK-LABEL: func.func @float_unary
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: tensor<?x3xf32>)
// CHECK-NEXT:    %[[S:.+]] = ml.sin %[[X]] : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[C:.+]] = ml.cos %[[S]] : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[T:.+]] = ml.tan %[[C]]
// CHECK-NEXT:    %[[AS:.+]] = ml.asin %[[T]]
// CHECK-NEXT:    %[[AC:.+]] = ml.acos %[[AS]]
// CHECK-NEXT:    %[[AT:.+]] = ml.atan %[[AC]]
// CHECK-NEXT:    %[[SH:.+]] = ml.sinh %[[AT]]
// CHECK-NEXT:    %[[CH:.+]] = ml.cosh %[[SH]]
// CHECK-NEXT:    %[[ASH:.+]] = ml.asinh %[[CH]]
// CHECK-NEXT:    %[[ACH:.+]] = ml.acosh %[[ASH]]
// CHECK-NEXT:    %[[ATH:.+]] = ml.atanh %[[ACH]]
// CHECK-NEXT:    %[[F:.+]] = ml.floor %[[ATH]]
// CHECK-NEXT:    %[[CE:.+]] = ml.ceil %[[F]]
// CHECK-NEXT:    %[[R:.+]] = ml.round %[[CE]] : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    func.return %[[R]]

// GENERIC-LABEL: sym_name = "float_unary"
// GENERIC:       "ml.sin"(%{{.*}}) : (tensor<?x3xf32>) -> tensor<?x3xf32>
// GENERIC:       "ml.round"(%{{.*}}) : (tensor<?x3xf32>) -> tensor<?x3xf32>
func.func @float_unary(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = ml.sin %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = ml.cos %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %2 = ml.tan %1 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %3 = ml.asin %2 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %4 = ml.acos %3 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %5 = ml.atan %4 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %6 = ml.sinh %5 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %7 = ml.cosh %6 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %8 = ml.asinh %7 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %9 = ml.acosh %8 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %10 = ml.atanh %9 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %11 = ml.floor %10 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %12 = ml.ceil %11 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %13 = ml.round %12 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %13 : tensor<?x3xf32>
}

// -----

// The remainder and the bitwise ops broadcast; the generic form parses too.

// CHECK-LABEL: func.func @integer_binary
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: tensor<4x3xi32>, %[[B:[a-zA-Z0-9_]+]]: tensor<3xi32>)
// CHECK-NEXT:    %[[R:.+]] = ml.rem %[[A]], %[[B]] : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
// CHECK-NEXT:    %[[AND:.+]] = ml.bitwise_and %[[R]], %[[B]]
// CHECK-NEXT:    %[[OR:.+]] = ml.bitwise_or %[[AND]], %[[B]]
// CHECK-NEXT:    %[[XOR:.+]] = ml.bitwise_xor %[[OR]], %[[B]]
// CHECK-NEXT:    %[[NOT:.+]] = ml.bitwise_not %[[XOR]] : (tensor<4x3xi32>) -> tensor<4x3xi32>
// CHECK-NEXT:    %[[SHL:.+]] = ml.shift_left %[[NOT]], %[[B]]
// CHECK-NEXT:    %[[SHR:.+]] = ml.shift_right %[[SHL]], %[[B]] : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
// CHECK-NEXT:    func.return %[[SHR]]

// GENERIC-LABEL: sym_name = "integer_binary"
// GENERIC:       "ml.rem"(%{{.*}}, %{{.*}}) : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
// GENERIC:       "ml.shift_right"(%{{.*}}, %{{.*}}) : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
func.func @integer_binary(%a: tensor<4x3xi32>, %b: tensor<3xi32>) -> tensor<4x3xi32> {
  %0 = "ml.rem"(%a, %b) : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
  %1 = ml.bitwise_and %0, %b : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
  %2 = ml.bitwise_or %1, %b : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
  %3 = ml.bitwise_xor %2, %b : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
  %4 = ml.bitwise_not %3 : (tensor<4x3xi32>) -> tensor<4x3xi32>
  %5 = ml.shift_left %4, %b : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
  %6 = "ml.shift_right"(%5, %b) : (tensor<4x3xi32>, tensor<3xi32>) -> tensor<4x3xi32>
  func.return %6 : tensor<4x3xi32>
}

// -----

// Logical forms on i1, a float remainder, unsigned shifts.

// CHECK-LABEL: func.func @other_types
// CHECK:         ml.bitwise_and %{{.*}}, %{{.*}} : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:         ml.bitwise_not %{{.*}} : (tensor<4xi1>) -> tensor<4xi1>
// CHECK:         ml.rem %{{.*}}, %{{.*}} : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
// CHECK:         ml.shift_right %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
func.func @other_types(%p: tensor<4xi1>, %x: tensor<4xf16>, %y: tensor<f16>, %u: tensor<4xui8>) -> (tensor<4xi1>, tensor<4xf16>, tensor<4xui8>) {
  %0 = ml.bitwise_and %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = ml.bitwise_not %0 : (tensor<4xi1>) -> tensor<4xi1>
  %2 = ml.rem %x, %y : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %3 = ml.shift_right %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %1, %2, %3 : tensor<4xi1>, tensor<4xf16>, tensor<4xui8>
}

// RUN: mlc-opt %s | filecheck %s
// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s -p canonicalize --print-op-generic | filecheck %s --check-prefix=GENERIC

// A file that carries its weights in a `dialect_resources` section keeps them: the
// output prints the bytes of every resource it reads, under the handle renamed to end
// in a digest of the data (so equal text means equal data), and printing that output
// again changes nothing. A resource nothing reads any more is not printed.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = arith.constant dense_resource<weights> : tensor<2x3xf32>
  %unused = arith.constant dense_resource<unused> : tensor<2xf32>
  %y = ml.mul %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000000000000000003F0000803F0000C03F0000004000002040",
      unused: "0x040000000000803F00000040"
    }
  }
#-}

// CHECK:       %w = arith.constant dense_resource<weights_[[DIGEST:[0-9a-f]{16}]]> : tensor<2x3xf32>
// CHECK:       {-#
// CHECK-NEXT:    dialect_resources: {
// CHECK-NEXT:      builtin: {
// CHECK-NEXT:        unused_{{[0-9a-f]+}}: "0x040000000000803f00000040",
// CHECK-NEXT:        weights_[[DIGEST]]: "0x04000000000000000000003f0000803f0000c03f0000004000002040"
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  #-}

// GENERIC:     "arith.constant"() <{value = dense_resource<weights_[[DIGEST:[0-9a-f]{16}]]> : tensor<2x3xf32>}>
// GENERIC-NOT: unused_
// GENERIC:     dialect_resources
// GENERIC-NEXT:  builtin: {
// GENERIC-NEXT:    weights_[[DIGEST]]: "0x04000000
// GENERIC-NOT: unused_

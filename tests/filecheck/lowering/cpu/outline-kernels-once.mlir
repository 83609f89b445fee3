// RUN: mlc-opt %s -p 'convert-ml-to-linalg,bufferize,outline-kernels{tile-sizes=2,8,4,4 vector-length=4}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-ml-to-linalg,bufferize,outline-kernels{tile-sizes=2,8,4,4 vector-length=4 repeated-only=false}' \
// RUN:   | filecheck %s --check-prefix=ALL

// Two matmuls of one shape, one by a constant weight (whose panels an outlined kernel
// takes as an argument) and one by an argument: their functions would differ, so each
// is the only one of its kind. By default neither moves, and no panels are packed here
// (`linalg-tile` packs the weight's where the matmul is).

// CHECK-NOT:     panels
// CHECK-LABEL:   func.func @weight_and_argument
// CHECK:           linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : memref<8x4xf32>, memref<4x16xf32>)
// CHECK:           linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : memref<8x4xf32>, memref<4x16xf32>)
// CHECK-NOT:       func.call
// CHECK:           func.return
// CHECK-NOT:     func.func private
// CHECK-NOT:     panels

// Outlining every kernel gives two functions, the first with the weight's panels.

// ALL:           "memref.global"() <{sym_name = "[[P:__resource_wa_[0-9a-f]+\.panels8_[0-9a-f]+]]"
// ALL-LABEL:     func.func @weight_and_argument
// ALL:             %[[PANELS:.+]] = memref.get_global @[[P]]
// ALL-NEXT:        func.call @weight_and_argument_kernel0(%{{.+}}, %{{.+}}, %{{.+}}, %[[PANELS]])
// ALL:             func.call @weight_and_argument_kernel1(%{{.+}}, %{{.+}}, %{{.+}}) :
// ALL:           func.func private @weight_and_argument_kernel0({{.*}} {mlc.panels = 3 : i64}
// ALL:           func.func private @weight_and_argument_kernel1(

func.func @weight_and_argument(%x: tensor<8x4xf32>, %v: tensor<4x16xf32>) -> tensor<8x16xf32> {
  %wa = arith.constant dense_resource<wa> : tensor<4x16xf32>
  %y = ml.matmul %x, %wa : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %z = ml.matmul %x, %v : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s = ml.add %y, %z : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  func.return %s : tensor<8x16xf32>
}

{-#
  dialect_resources: {
    builtin: {
      wa: "0x0400000069f0b03e9155523f0c2fa93edbcda6bf67c5673f358be43ec47509bf28c4143f3ca9ba3e8998963ec3d5e83c62f50b3f41883cbfded126be58d8f6befc4d193fa6b3223de4bc95be272b48bfb4ae83bec866053cd31b8dbee2a3a53f58dc803fb0832dc030cbf1bf75f732be5729d8be3bc55a3ea4895e3eac8a0740b2568ebf7255c1bec5bc0240548e253f85be293fec9503bf21f4d2bfe17b2b3ec742df3ddf199dbff1e72ebfa38b93bd3edb71bfc441c9bd9b8cc33de0c2113d559c01bfe0ff173f8423643f3b46a43e897751bf904d3b3f605e00bfac10613f543089bf861a6a3f1d5ca4bc01d79fbf6eb7a0be5a9a5d3d4eab8b3eae707bbf66be8dbf"
    }
  }
#-}

// RUN: mlc-opt %s -p 'convert-ml-to-linalg,bufferize,outline-kernels{tile-sizes=2,8,4,4 vector-length=4}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-ml-to-linalg,bufferize,outline-kernels{tile-sizes=2,8,4,4 vector-length=4},linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=1 shared-micro-kernels=false}' \
// RUN:   | filecheck %s --check-prefix=TILED
// RUN: not mlc-opt %s -p 'outline-kernels{tile-sizes=2,8,4}' 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not mlc-opt %s -p 'outline-kernels{tile-sizes=2,6,4,4 vector-length=4}' 2>&1 | filecheck %s --check-prefix=LANES

// Two matmuls by two constant weights of one shape: each weight's B panels are packed
// at compile time, as `linalg-tile` packs them (NR = 8), into a global of their own,
// passed to the one kernel both are, whose B argument names the panels' argument.

// CHECK-DAG:   "memref.global"() <{sym_name = "[[PA:__resource_wa_[0-9a-f]+\.panels8_[0-9a-f]+]]", type = memref<1x2x4x8xf32>, initial_value, sym_visibility = "public", constant, alignment = 64 : i64}>
// CHECK-DAG:   "memref.global"() <{sym_name = "[[PB:__resource_wb_[0-9a-f]+\.panels8_[0-9a-f]+]]", type = memref<1x2x4x8xf32>
// CHECK-LABEL: func.func @two_weights
// CHECK:         %[[WA:.+]] = memref.get_global @__resource_wa_{{[0-9a-f]+}} : memref<4x16xf32>
// CHECK:         %[[WB:.+]] = memref.get_global @__resource_wb_{{[0-9a-f]+}} : memref<4x16xf32>
// CHECK:         %[[A:.+]] = memref.get_global @[[PA]] : memref<1x2x4x8xf32>
// CHECK-NEXT:    func.call @two_weights_kernel0(%{{.+}}, %{{.+}}, %[[WA]], %[[A]])
// CHECK:         %[[B:.+]] = memref.get_global @[[PB]] : memref<1x2x4x8xf32>
// CHECK-NEXT:    func.call @two_weights_kernel0(%{{.+}}, %{{.+}}, %[[WB]], %[[B]])
// CHECK:       func.func private @two_weights_kernel0(%{{.+}}: memref<8x16xf32>, %{{.+}}: memref<8x4xf32>, %{{.+}}: memref<4x16xf32> {mlc.panels = 3 : i64}, %{{.+}}: memref<1x2x4x8xf32>) attributes {mlc.kernel}
// CHECK-NOT:   func.func private

// The kernel reads B's panels from the argument and packs nothing of B.

// TILED-LABEL: func.func private @two_weights_kernel0
// TILED-SAME:    %[[B:[a-zA-Z0-9_]+]]: memref<4x16xf32> {mlc.panels = 3 : i64}, %[[P:[a-zA-Z0-9_]+]]: memref<1x2x4x8xf32>
// TILED-NOT:     memref.alloc
// TILED-NOT:     vector.load %[[B]]
// TILED:         vector.load %[[P]]
// TILED:         vector.fma
// TILED-NOT:     vector.load %[[B]]
// TILED:         func.return

// COUNT: tile-sizes takes 4 values (MR,NR,KC,MC), got 3
// LANES: NR (6) must be a multiple of the vector length (4)

func.func @two_weights(%x: tensor<8x4xf32>) -> tensor<8x16xf32> {
  %wa = arith.constant dense_resource<wa> : tensor<4x16xf32>
  %wb = arith.constant dense_resource<wb> : tensor<4x16xf32>
  %y = ml.matmul %x, %wa : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %z = ml.matmul %x, %wb : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %s = ml.add %y, %z : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  func.return %s : tensor<8x16xf32>
}

{-#
  dialect_resources: {
    builtin: {
      wa: "0x0400000069f0b03e9155523f0c2fa93edbcda6bf67c5673f358be43ec47509bf28c4143f3ca9ba3e8998963ec3d5e83c62f50b3f41883cbfded126be58d8f6befc4d193fa6b3223de4bc95be272b48bfb4ae83bec866053cd31b8dbee2a3a53f58dc803fb0832dc030cbf1bf75f732be5729d8be3bc55a3ea4895e3eac8a0740b2568ebf7255c1bec5bc0240548e253f85be293fec9503bf21f4d2bfe17b2b3ec742df3ddf199dbff1e72ebfa38b93bd3edb71bfc441c9bd9b8cc33de0c2113d559c01bfe0ff173f8423643f3b46a43e897751bf904d3b3f605e00bfac10613f543089bf861a6a3f1d5ca4bc01d79fbf6eb7a0be5a9a5d3d4eab8b3eae707bbf66be8dbf",
      wb: "0x04000000e35f4c3ecef9eebe6228713edf6f423f770bd3bf293f823e3bc19c3f705598be8b914fbf0d93403fbec3813e9858653f1dc0b0be39acbdbf534de1bd9643e4be9f7b463fb047463eabbfd0bf1bfb98bf0040623f15052e3ffde623bfc67789ba3822e43eb1d2ef3e6951603f1652833e5c35c2bdbc8784be9522873fff0d10c0a9fb0dbe1e2b073dd671b6bf8c66aa3e5aba26bf2fc95c3f369b00bea04d2b3f11039c3f590fc43e432f60bf31d5c1bfe46ee03f29ede3bdcb4530bf21b8133e550144beff255a3f47f80a3def45613cb2ee36bf3b6bf03ebf5584bfbb772a3f6210c33fe928c3bfb3d61dc0c4eb1d3fc21023404e1e80bfcc16a0bfabc6163f"
    }
  }
#-}

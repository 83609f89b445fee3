// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg,linalg-fuse-elementwise,bufferize,outline-contractions' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg,linalg-fuse-elementwise,bufferize,outline-contractions,convert-contractions-to-gpu' \
// RUN:   | filecheck %s --check-prefix=LAUNCH
// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg,linalg-fuse-elementwise,bufferize,outline-contractions' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file -p 'convert-ml-to-linalg,bufferize,outline-contractions{tf32=true}' \
// RUN:   | filecheck %s --check-prefix=TF32
// RUN: mlc-opt %s --split-input-file --verify-diagnostics --remarks > /dev/null \
// RUN:   -p 'convert-ml-to-linalg,linalg-fuse-elementwise,bufferize,outline-contractions,convert-contractions-to-gpu'

// Two matmuls of one shape with their relu epilogues (different weights) are one
// function, which takes the zero fill of the output along and is called at each; the
// third matmul, of another shape, is the only one of its kind and stays where it is.
// Each call keeps the location of the generic it replaces.

// CHECK-LABEL: func.func @three_matmuls
// CHECK:         %[[A:.+]] = memref.alloc() {{.*}} : memref<256x128xf32>
// CHECK-NEXT:    func.call @three_matmuls_kernel0(%[[A]], %x, %w1)
// CHECK:         %[[B:.+]] = memref.alloc() {{.*}} : memref<256x128xf32>
// CHECK-NEXT:    func.call @three_matmuls_kernel0(%[[B]], %x, %w2)
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : memref<256x256xf32>)
// CHECK:         linalg.generic {{.*}} ins(%x, %w3 : memref<256x64xf32>, memref<64x256xf32>)
// CHECK:         func.return
// CHECK:       func.func private @three_matmuls_kernel0(%[[C:.+]]: memref<256x128xf32>, %{{.+}}: memref<256x64xf32>, %{{.+}}: memref<64x128xf32>) attributes {mlc.kernel} {
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[C]] : memref<256x128xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:           arith.maximumf
// CHECK:         func.return
// CHECK-NOT:   func.func

// LAUNCH-LABEL: func.func @three_matmuls
// LAUNCH-NOT:     "gpu.launch"
// LAUNCH:         func.call @three_matmuls_kernel0
// LAUNCH-NOT:     "gpu.launch"
// LAUNCH:         func.call @three_matmuls_kernel0
// LAUNCH:         "gpu.launch"
// LAUNCH-NOT:     "gpu.launch"
// LAUNCH:       func.func private @three_matmuls_kernel0
// LAUNCH-NOT:     linalg.generic
// LAUNCH:         "gpu.launch"
// LAUNCH-NOT:     "gpu.launch"
// LAUNCH:         func.return

// LOC-LABEL: func.func @three_matmuls
// LOC:         func.call @three_matmuls_kernel0({{.*}} loc(fused["{{.*}}outline-contractions.mlir":[[# @LINE + 5]]:3,
// LOC:         func.call @three_matmuls_kernel0({{.*}} loc(fused["{{.*}}outline-contractions.mlir":[[# @LINE + 6]]:3,

func.func @three_matmuls(%x: tensor<256x64xf32>, %w1: tensor<64x128xf32>, %w2: tensor<64x128xf32>, %w3: tensor<64x256xf32>)
    -> (tensor<256x128xf32>, tensor<256x128xf32>, tensor<256x256xf32>) {
  %a = ml.matmul %x, %w1 : (tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<256x128xf32>
  %r = ml.relu %a : (tensor<256x128xf32>) -> tensor<256x128xf32>
  %b = ml.matmul %x, %w2 : (tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<256x128xf32>
  %q = ml.relu %b : (tensor<256x128xf32>) -> tensor<256x128xf32>
  %c = ml.matmul %x, %w3 : (tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  func.return %r, %q, %c : tensor<256x128xf32>, tensor<256x128xf32>, tensor<256x256xf32>
}

// -----

// Two padded convolutions with a bias: the padded copy of the image (allocation, fill,
// copy into the subview, free) goes into the function with the convolution, whose
// last reduction step adds the bias, where `convert-contractions-to-gpu` still absorbs
// them into its kernel.

// CHECK-LABEL: func.func @two_convs
// CHECK-NOT:     memref<1x16x34x34xf32>
// CHECK:         func.call @two_convs_kernel0(%x, %{{.+}}, %w1, %b1)
// CHECK-NOT:     memref<1x16x34x34xf32>
// CHECK:         func.call @two_convs_kernel0(%x, %{{.+}}, %w2, %b2)
// CHECK-NOT:     memref<1x16x34x34xf32>
// CHECK:         func.return
// CHECK:       func.func private @two_convs_kernel0(%[[X:.+]]: memref<1x16x32x32xf32>, %[[Y:.+]]: memref<1x32x32x32xf32>, %[[W:.+]]: memref<32x16x3x3xf32>, %[[BIAS:.+]]: memref<32xf32>)
// CHECK:         %[[P:.+]] = memref.alloc() {{.*}} : memref<1x16x34x34xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[P]] : memref<1x16x34x34xf32>)
// CHECK:         %[[S:.+]] = memref.subview %[[P]][0, 0, 1, 1]
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : {{.*}}) outs(%[[S]] :
// CHECK:         linalg.generic {{.*}} outs(%[[Y]] :
// CHECK:         linalg.generic {{.*}} ins(%[[P]], %[[W]], %[[BIAS]] : {{.*}}) outs(%[[Y]] :
// CHECK:           arith.addf
// CHECK:         memref.dealloc %[[P]]
// CHECK-NEXT:    func.return

// LAUNCH-LABEL: func.func @two_convs
// LAUNCH-NOT:     "gpu.launch"
// LAUNCH:       func.func private @two_convs_kernel0
// LAUNCH-NOT:     memref<1x16x34x34xf32>
// LAUNCH-NOT:     linalg.generic
// LAUNCH:         "gpu.launch"

func.func @two_convs(%x: tensor<1x16x32x32xf32>, %w1: tensor<32x16x3x3xf32>, %b1: tensor<32xf32>,
                     %w2: tensor<32x16x3x3xf32>, %b2: tensor<32xf32>) -> (tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>) {
  %a = ml.conv2d %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
  %b = ml.conv2d %x, %w2, %b2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x32x32xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
  func.return %a, %b : tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>
}

// -----

// Repeated matmuls and convolutions that `convert-contractions-to-gpu` leaves to the
// loop mapping (too few outputs) are not contractions here either, and repeated
// elementwise ops stay: the loops they become fuse with their neighbours. Nothing
// moves, and the remark of each declined convolution is made once, by that pass.

// CHECK-LABEL: func.func @small_and_elementwise
// CHECK-NOT:     func.call
// CHECK:         func.return
// CHECK-NOT:   func.func private

func.func @small_and_elementwise(%x: tensor<16x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>)
    -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %a = ml.matmul %x, %w1 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %b = ml.matmul %x, %w2 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %r = ml.relu %a : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %q = ml.relu %b : (tensor<16x64xf32>) -> tensor<16x64xf32>
  func.return %r, %q : tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

// CHECK-LABEL: func.func @small_convs
// CHECK-NOT:     func.call
// CHECK:         func.return
// CHECK-NOT:   func.func private

func.func @small_convs(%x: tensor<1x8x8x8xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>)
    -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  // expected-remark @+1 {{convolution left to the loop mapping: 288 outputs (fewer than 32768: a warp each)}}
  %a = ml.conv2d %x, %w1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  // expected-remark @+1 {{convolution left to the loop mapping: 288 outputs (fewer than 32768: a warp each)}}
  %b = ml.conv2d %x, %w2 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %a, %b : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}

// -----

// Two matmuls by one constant weight are one function; with `tf32=true` they stay,
// where `convert-contractions-to-gpu` can still see the weight to transpose it at
// compile time for the tf32 wgmma kernel.

// CHECK-LABEL: func.func @constant_weight
// CHECK:         %[[W:.+]] = memref.get_global @__constant_0
// CHECK:         func.call @constant_weight_kernel0(%{{.+}}, %x, %[[W]])
// CHECK:         func.call @constant_weight_kernel0(%{{.+}}, %y, %[[W]])
// CHECK:       func.func private @constant_weight_kernel0

// TF32-LABEL: func.func @constant_weight
// TF32-NOT:     func.call
// TF32:         func.return
// TF32-NOT:   func.func private

func.func @constant_weight(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>) -> (tensor<256x128xf32>, tensor<256x128xf32>) {
  %w = arith.constant dense<0.5> : tensor<64x128xf32>
  %a = ml.matmul %x, %w : (tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<256x128xf32>
  %b = ml.matmul %y, %w : (tensor<256x64xf32>, tensor<64x128xf32>) -> tensor<256x128xf32>
  func.return %a, %b : tensor<256x128xf32>, tensor<256x128xf32>
}

// The GPU stages of mlc.pipeline (mlc, linalg for the gpu target, parallel-loops with
// sm_70 and tf32 asked for, gpu), one mlc-opt per stage; locations travel between them.
// RUN: mlc-opt %s --print-debuginfo -o %t.mlc.mlir \
// RUN:   -p 'simplify-graph,fold-batch-norm,cse,matmul-chain-reorder,licm,simplify-graph,cse'
// RUN: mlc-opt %t.mlc.mlir --print-debuginfo -o %t.linalg.mlir \
// RUN:   -p 'convert-ml-to-linalg{online-softmax=true},linalg-fuse-elementwise'
// RUN: mlc-opt %t.linalg.mlir --print-debuginfo --remarks -o %t.loops.mlir 2> %t.remarks \
// RUN:   -p 'linalg-fuse-elementwise,bufferize,convert-contractions-to-gpu{sm=70 tf32=true},convert-linalg-to-parallel-loops,lower-affine,canonicalize,cse'
// RUN: mlc-opt %t.loops.mlir --remarks -o /dev/null 2>> %t.remarks \
// RUN:   -p 'fuse-row-epilogues,convert-parallel-loops-to-gpu,gpu-kernel-outlining,canonicalize,cse'
// RUN: filecheck %s < %t.remarks

// A remark of a GPU pass on a whole program points at the `ml` op the remarked op
// comes from, through convert-ml-to-linalg and bufferize: at the op's explicit
// location, or at its text.

// The convolution is too small for the implicit GEMM: its `linalg.generic` is left to
// the loop mapping.
// CHECK: model.py:12:5: remark: 'linalg.generic' op convolution left to the loop mapping: 288 outputs (fewer than 32768: a warp each)
func.func @small_conv(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %y = ml.conv2d %x, %w : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32> loc("model.py":12:5)
  func.return %y : tensor<1x8x6x6xf32>
}

// A ReLU fused into the convolution as its epilogue leaves the remark at the
// convolution, the first of the fused generic's locations.
// CHECK-NEXT: model.py:20:5: remark: 'linalg.generic' op convolution left to the loop mapping: 288 outputs (fewer than 32768: a warp each)
func.func @small_conv_relu(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %y = ml.conv2d %x, %w : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32> loc("model.py":20:5)
  %z = ml.relu %y : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> loc("model.py":21:5)
  func.return %z : tensor<1x8x6x6xf32>
}

// sm_70 has no tf32 mma: the matmul is declined tf32 where it was written.
// CHECK-NEXT: convert-contractions-to-gpu-remarks.mlir:[[# @LINE + 2]]:3: remark: 'linalg.generic' op tf32 declined: sm_70 has no tf32 mma (sm_80 on); f32 FMAs
func.func @matmul(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c = ml.matmul %a, %b : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  func.return %c : tensor<256x256xf32>
}
// CHECK-NOT: remark

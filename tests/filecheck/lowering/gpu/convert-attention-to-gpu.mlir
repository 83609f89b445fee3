// RUN: mlc-opt %s -p 'convert-attention-to-gpu' | filecheck %s --check-prefix=TENSORS
// RUN: mlc-opt %s -p 'convert-attention-to-gpu' --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: mlc-opt %s -p 'convert-attention-to-gpu,decompose-attention,convert-ml-to-linalg,bufferize,convert-attention-to-gpu' | filecheck %s --check-prefix=KERNEL

// Grouped heads (8 query heads on 2 K/V heads: `h floordiv 4`), a bool mask broadcast
// over batch and heads, causal: a stand-in generic carries the op through bufferize.
// TENSORS-LABEL: func.func @gqa_causal_mask
// TENSORS:      %[[E:.*]] = tensor.empty() : tensor<2x8x70x64xf16>
// TENSORS-NEXT: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d1 floordiv 4), d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d1 floordiv 4), d4, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"], doc = "scale=0.125 causal=1", library_call = "mlc.attention"}
// TENSORS-NOT:  ml.attention
// KERNEL-LABEL: func.func @gqa_causal_mask
// KERNEL:       "gpu.launch"
// KERNEL:       memref.alloca() : memref<32x64xf32, 3 : i64>
// KERNEL:       memref.alloca() : memref<32x64xf32, 3 : i64>
// KERNEL:       memref.alloca() : memref<64x33xf32, 3 : i64>
// KERNEL:       "gpu.barrier"
// KERNEL:       math.exp2
// KERNEL:       "gpu.terminator"
// KERNEL-NOT:   linalg.generic
// KERNEL:       func.return
func.func @gqa_causal_mask(%q: tensor<2x8x70x64xf16>, %k: tensor<2x2x50x64xf16>, %v: tensor<2x2x50x64xf16>, %m: tensor<70x50xi1>) -> tensor<2x8x70x64xf16> {
  %o = ml.attention %q, %k, %v, %m {scale = 0.125 : f64, causal = true} : (tensor<2x8x70x64xf16>, tensor<2x2x50x64xf16>, tensor<2x2x50x64xf16>, tensor<70x50xi1>) -> tensor<2x8x70x64xf16>
  func.return %o : tensor<2x8x70x64xf16>
}

// Dynamic lengths: the output's dims come from q; a size-1 mask dim is read at 0.
// TENSORS-LABEL: func.func @dynamic_lengths
// TENSORS:      tensor.dim %q, %{{.*}} : tensor<?x4x?x32xf32>
// TENSORS:      affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, 0, 0, d4)>
// TENSORS-SAME: doc = "scale=0.5 causal=0"
// KERNEL-LABEL: func.func @dynamic_lengths
// KERNEL:       "gpu.launch"
func.func @dynamic_lengths(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x16xf32>, %m: tensor<?x1x1x?xf32>) -> tensor<?x4x?x16xf32> {
  %o = ml.attention %q, %k, %v, %m {scale = 0.5 : f64} : (tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x?x16xf32>
  func.return %o : tensor<?x4x?x16xf32>
}

// A head dim past 128 (or dynamic) stays for decompose-attention, with a remark.
// KERNEL-LABEL: func.func @wide_heads
// KERNEL-NOT: "gpu.launch"
// KERNEL: scf.for
// REMARK: remark: 'ml.attention' op attention left to decompose-attention: head dim 256 (the kernel takes 2 to 128, static)
// TENSORS-LABEL: func.func @wide_heads
// TENSORS: ml.attention
func.func @wide_heads(%q: tensor<1x2x8x256xf32>, %k: tensor<1x2x8x256xf32>, %v: tensor<1x2x8x256xf32>) -> tensor<1x2x8x256xf32> {
  %o = ml.attention %q, %k, %v {scale = 0.0625 : f64} : (tensor<1x2x8x256xf32>, tensor<1x2x8x256xf32>, tensor<1x2x8x256xf32>) -> tensor<1x2x8x256xf32>
  func.return %o : tensor<1x2x8x256xf32>
}

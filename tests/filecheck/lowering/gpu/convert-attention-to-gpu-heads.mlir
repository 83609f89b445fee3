// RUN: mlc-opt %s -p 'convert-attention-to-gpu' | filecheck %s --check-prefix=TENSORS
// RUN: mlc-opt %s -p 'convert-attention-to-gpu,decompose-attention,convert-ml-to-linalg,bufferize,convert-attention-to-gpu' | filecheck %s --check-prefix=KERNEL

// The head split and merge transposes around an attention fold into its operand
// layout (`head_layout`): the stand-in reads q, k, v as (batch, S, H, D) through
// the reshapes' views and writes its output as (batch, S, H, Dv), no copy left.
// Grouped heads (4 on 2), causal, bf16 at head dim 64: the tensor-core kernel copies
// q, k, v rows `H * D` apart and stores the output in the merged order.
// TENSORS-LABEL: func.func @encoder_heads
// TENSORS-NOT:  ml.transpose
// TENSORS:      %[[E:.*]] = tensor.empty() : tensor<2x70x4x64xbf16>
// TENSORS-NEXT: %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, (d1 floordiv 2), d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, (d1 floordiv 2), d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d3)>], {{.*}} library_call = "mlc.attention"} ins(%q4, %k4, %v4 : tensor<2x70x4x64xbf16>, tensor<2x50x2x64xbf16>, tensor<2x50x2x64xbf16>) outs(%[[E]] : tensor<2x70x4x64xbf16>)
// TENSORS-NOT:  ml.transpose
// TENSORS:      ml.reshape %m : (tensor<2x70x4x64xbf16>) -> tensor<2x70x256xbf16>
// KERNEL-LABEL: func.func @encoder_heads
// KERNEL-NOT:   linalg.generic
// KERNEL:       memref.expand_shape {{.*}} into memref<2x70x4x64xbf16>
// KERNEL-NOT:   linalg.generic
// KERNEL:       "gpu.launch"
// KERNEL:       %[[HEAD:.*]] = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
// KERNEL:       cp.async.cg.shared.global
// KERNEL:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// The output at ((batch * 70 + row) * 4 + head) * 64 + column, a column pair a word:
// KERNEL:       arith.divf
// KERNEL:       arith.constant 70 : index
// KERNEL-NEXT:  arith.muli
// KERNEL-NEXT:  arith.addi
// KERNEL-NEXT:  arith.constant 4 : index
// KERNEL-NEXT:  arith.muli
// KERNEL-NEXT:  arith.addi %{{.*}}, %[[HEAD]] : index
// KERNEL-NEXT:  arith.constant 64 : index
// KERNEL-NEXT:  arith.muli
// KERNEL-NEXT:  arith.addi
// KERNEL-NEXT:  "memref.extract_aligned_pointer_as_index"(%{{.*}}) : (memref<2x70x4x64xbf16>) -> index
// KERNEL:       cvt.rn.bf16x2.f32
// KERNEL-NEXT:  st.global.b32
// KERNEL:       "gpu.terminator"
// KERNEL:       memref.collapse_shape {{.*}} : memref<2x70x4x64xbf16> into memref<35840xbf16>
func.func @encoder_heads(%xq: tensor<2x70x256xbf16>, %xk: tensor<2x50x128xbf16>, %xv: tensor<2x50x128xbf16>) -> tensor<2x70x256xbf16> {
  %q4 = ml.reshape %xq : (tensor<2x70x256xbf16>) -> tensor<2x70x4x64xbf16>
  %q = ml.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x70x4x64xbf16>) -> tensor<2x4x70x64xbf16>
  %k4 = ml.reshape %xk : (tensor<2x50x128xbf16>) -> tensor<2x50x2x64xbf16>
  %k = ml.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x50x2x64xbf16>) -> tensor<2x2x50x64xbf16>
  %v4 = ml.reshape %xv : (tensor<2x50x128xbf16>) -> tensor<2x50x2x64xbf16>
  %v = ml.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x50x2x64xbf16>) -> tensor<2x2x50x64xbf16>
  %o = ml.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<2x4x70x64xbf16>, tensor<2x2x50x64xbf16>, tensor<2x2x50x64xbf16>) -> tensor<2x4x70x64xbf16>
  %m = ml.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x70x64xbf16>) -> tensor<2x70x4x64xbf16>
  %r = ml.reshape %m : (tensor<2x70x4x64xbf16>) -> tensor<2x70x256xbf16>
  func.return %r : tensor<2x70x256xbf16>
}

// f32 with dynamic batch and lengths (the FMA kernel): the output's dims and the
// query length come from the stored source's dims, the loads and stores index
// (batch, row, head, column).
// TENSORS-LABEL: func.func @dynamic_f32
// TENSORS:       %[[B:.*]] = tensor.dim %xq, %{{.*}} : tensor<?x?x4x32xf32>
// TENSORS:       %[[S:.*]] = tensor.dim %xq, %{{.*}} : tensor<?x?x4x32xf32>
// TENSORS:       tensor.empty(%[[B]], %[[S]]) : tensor<?x?x4x16xf32>
// TENSORS:       ins(%xq, %k, %v : tensor<?x?x4x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32>)
// TENSORS-NOT:   ml.transpose
// KERNEL-LABEL: func.func @dynamic_f32
// KERNEL:       memref.dim %xq, %{{.*}} : memref<?x?x4x32xf32>
// KERNEL:       "gpu.launch"
// KERNEL:       memref.load %k[%[[KB:.*]], %[[KH:.*]], %{{.*}}, %{{.*}}] : memref<?x4x?x32xf32>
// KERNEL:       memref.load %xq[%[[KB]], %{{.*}}, %[[KH]], %{{.*}}] : memref<?x?x4x32xf32>
// KERNEL:       memref.store %{{.*}}, %{{.*}}[%[[KB]], %{{.*}}, %[[KH]], %{{.*}}] : memref<?x?x4x16xf32>
// KERNEL-NOT:   linalg.generic
func.func @dynamic_f32(%xq: tensor<?x?x4x32xf32>, %k: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32> {
  %q = ml.transpose %xq {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x32xf32>) -> tensor<?x4x?x32xf32>
  %o = ml.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %m = ml.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x?x16xf32>) -> tensor<?x?x4x16xf32>
  func.return %m : tensor<?x?x4x16xf32>
}

// A transpose with another user stays (its copy is made anyway): q is read from it,
// and the output transpose stays when the attention's result has another user.
// TENSORS-LABEL: func.func @shared_transposes
// TENSORS:       %q = ml.transpose %xq
// TENSORS:       %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>, {{.*}}, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]
// TENSORS-SAME:  ins(%q, %k, %v
// TENSORS:       %m = ml.transpose %o {perm = array<i64: 0, 2, 1, 3>}
// KERNEL-LABEL: func.func @shared_transposes
// KERNEL:       linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// KERNEL:       "gpu.launch"
// KERNEL:       linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
func.func @shared_transposes(%xq: tensor<1x8x2x64xf16>, %k: tensor<1x2x8x64xf16>, %v: tensor<1x2x8x64xf16>) -> (tensor<1x2x8x64xf16>, tensor<1x8x2x64xf16>, tensor<1x2x8x64xf16>) {
  %q = ml.transpose %xq {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x64xf16>) -> tensor<1x2x8x64xf16>
  %o = ml.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>) -> tensor<1x2x8x64xf16>
  %m = ml.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x8x64xf16>) -> tensor<1x8x2x64xf16>
  func.return %q, %m, %o : tensor<1x2x8x64xf16>, tensor<1x8x2x64xf16>, tensor<1x2x8x64xf16>
}

// Permutations that are not the head split stay: batch and heads swapped, the key's
// feature and sequence dims swapped (the feature dim must stay innermost).
// TENSORS-LABEL: func.func @not_head_splits
// TENSORS:       %q = ml.transpose %xq {perm = array<i64: 1, 0, 2, 3>}
// TENSORS:       %k = ml.transpose %xk {perm = array<i64: 0, 1, 3, 2>}
// TENSORS:       %o = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]
// TENSORS-SAME:  ins(%q, %k, %v
// TENSORS:       %m = ml.transpose %o {perm = array<i64: 1, 0, 2, 3>}
func.func @not_head_splits(%xq: tensor<2x1x8x64xf16>, %xk: tensor<1x2x64x8xf16>, %v: tensor<1x2x8x64xf16>) -> tensor<2x1x8x64xf16> {
  %q = ml.transpose %xq {perm = array<i64: 1, 0, 2, 3>} : (tensor<2x1x8x64xf16>) -> tensor<1x2x8x64xf16>
  %k = ml.transpose %xk {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x8xf16>) -> tensor<1x2x8x64xf16>
  %o = ml.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>) -> tensor<1x2x8x64xf16>
  %m = ml.transpose %o {perm = array<i64: 1, 0, 2, 3>} : (tensor<1x2x8x64xf16>) -> tensor<2x1x8x64xf16>
  func.return %m : tensor<2x1x8x64xf16>
}

// No batch dims: the head split of a rank-3 attention is `perm = [1, 0, 2]`.
// TENSORS-LABEL: func.func @unbatched
// TENSORS-NOT:   ml.transpose
// TENSORS:       %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2)>]
// TENSORS-NOT:   ml.transpose
// KERNEL-LABEL: func.func @unbatched
// KERNEL:       memref.load %xq[%{{.*}}, %{{.*}}, %{{.*}}] : memref<8x2x16xf32>
// KERNEL:       memref.store %{{.*}} : memref<8x2x16xf32>
func.func @unbatched(%xq: tensor<8x2x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<8x2x16xf32> {
  %q = ml.transpose %xq {perm = array<i64: 1, 0, 2>} : (tensor<8x2x16xf32>) -> tensor<2x8x16xf32>
  %o = ml.attention %q, %k, %v {scale = 0.25 : f64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %m = ml.transpose %o {perm = array<i64: 1, 0, 2>} : (tensor<2x8x16xf32>) -> tensor<8x2x16xf32>
  func.return %m : tensor<8x2x16xf32>
}

// q, k and v one transposed value (its only user the attention): folded once.
// TENSORS-LABEL: func.func @self_attention
// TENSORS-NOT:   ml.transpose
// TENSORS:       %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d1, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d4, d1, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d3)>]
// TENSORS-SAME:  ins(%x, %x, %x
// TENSORS-NOT:   ml.transpose
func.func @self_attention(%x: tensor<1x8x2x64xf16>) -> tensor<1x8x2x64xf16> {
  %t = ml.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x64xf16>) -> tensor<1x2x8x64xf16>
  %o = ml.attention %t, %t, %t {scale = 0.125 : f64} : (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>) -> tensor<1x2x8x64xf16>
  %m = ml.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x8x64xf16>) -> tensor<1x8x2x64xf16>
  func.return %m : tensor<1x8x2x64xf16>
}

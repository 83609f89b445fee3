// RUN: mlc-opt %s -p 'convert-attention-to-gpu' | filecheck %s --check-prefix=TENSORS
// RUN: mlc-opt %s -p 'convert-attention-to-gpu,decompose-attention,convert-ml-to-linalg,bufferize,convert-attention-to-gpu' --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: mlc-opt %s -p 'convert-attention-to-gpu{sm=75},decompose-attention,convert-ml-to-linalg,bufferize,convert-attention-to-gpu{sm=75}' --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=SM75
// RUN: mlc-opt %s -p 'convert-attention-to-gpu{sm=75},decompose-attention,convert-ml-to-linalg,bufferize,convert-attention-to-gpu{sm=75}' | filecheck %s --check-prefix=OLD
// RUN: mlc-opt %s -p 'convert-attention-to-gpu,decompose-attention,convert-ml-to-linalg,bufferize,convert-attention-to-gpu' | filecheck %s --check-prefix=KERNEL

// Grouped heads (8 query heads on 2 K/V heads: `h floordiv 4`), a bool mask broadcast
// over batch and heads, causal: a stand-in generic carries the op through bufferize.
// TENSORS-LABEL: func.func @gqa_causal_mask
// TENSORS:      %[[E:.*]] = tensor.empty() : tensor<2x8x70x64xf16>
// TENSORS-NEXT: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d1 floordiv 4), d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d1 floordiv 4), d4, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"], doc = "scale=0.125 causal=1", library_call = "mlc.attention"}
// TENSORS-NOT:  ml.attention
// sm_75 has no 16-bit mma.sync: the FMA kernel, with a remark.
// SM75: remark: 'linalg.generic' op attention on the FMA kernel, not the tensor cores: sm_75 has no 16-bit mma.sync (sm_80 on)
// OLD-LABEL: func.func @gqa_causal_mask
// OLD-NOT:   mma.sync
// OLD:       memref.alloca() : memref<32x64xf32, 3 : i64>
// OLD-LABEL: func.func @dynamic_lengths
// f16 at head dim 64 takes the tensor cores: 128 threads a CTA, 36864 bytes of dynamic
// shared memory (two buffers of K and V, rows padded by 8), Q staged by cp.async then
// kept in registers (4 ldmatrix), then a loop over key blocks: the next block
// prefetched, S by ldmatrix + mma.sync, the online softmax with quad shuffles, P
// rounded to f16x2 and P·V with V by ldmatrix.trans; the output's column pairs
// rounded together and stored as one word.
// KERNEL-LABEL: func.func @gqa_causal_mask
// KERNEL:       %[[SHARED:.*]] = arith.constant 36864 : i32
// KERNEL:       "gpu.launch"({{.*}}, %[[SHARED]])
// KERNEL:       memref.alloca() {mlc.dynamic_shared} : memref<18432xf16, 3 : i64>
// KERNEL:       cp.async.cg.shared.global
// KERNEL:       cp.async.commit_group
// KERNEL:       cp.async.wait_group 1
// KERNEL:       "gpu.barrier"
// KERNEL-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// KERNEL:       "gpu.barrier"
// KERNEL:       scf.for
// KERNEL:       scf.if
// KERNEL:       cp.async.cg.shared.global
// KERNEL:       cp.async.commit_group
// KERNEL:       "gpu.barrier"
// KERNEL:       ldmatrix.sync.aligned.m8n8.x4.shared.b16
// KERNEL-NEXT:  llvm.extractvalue
// KERNEL:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// KERNEL:       memref.load %{{.*}} : memref<70x50xi1>
// KERNEL:       shfl.sync.bfly.b32 $0, $1, 1, 31, -1;
// KERNEL:       shfl.sync.bfly.b32 $0, $1, 2, 31, -1;
// KERNEL:       math.exp2
// KERNEL:       cvt.rn.f16x2.f32
// KERNEL:       ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// KERNEL:       mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// KERNEL:       "gpu.barrier"
// KERNEL:       scf.yield
// KERNEL:       arith.divf
// KERNEL:       "memref.extract_aligned_pointer_as_index"(%{{.*}}) : (memref<2x8x70x64xf16>) -> index
// KERNEL:       cvt.rn.f16x2.f32
// KERNEL-NEXT:  st.global.b32
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
// f32 keeps the FMA kernel: a thread a query row, static shared memory.
// KERNEL-LABEL: func.func @dynamic_lengths
// KERNEL:       "gpu.launch"
// KERNEL-NOT:   mma.sync
// KERNEL:       memref.alloca() : memref<32x32xf32, 3 : i64>
// KERNEL:       memref.alloca() : memref<32x16xf32, 3 : i64>
// KERNEL:       memref.alloca() : memref<64x33xf32, 3 : i64>
// KERNEL:       math.exp2
// KERNEL:       "gpu.terminator"
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

// bf16 at head dim 128 with dynamic lengths and batch: 69632 bytes of dynamic shared
// memory (past the 48 KiB of a static allocation), bf16 mma, no mask: the score tests
// run only on blocks that need them (an scf.if yielding the 32 scaled scores).
// KERNEL-LABEL: func.func @bf16_wide
// KERNEL:       arith.constant 69632 : i32
// KERNEL:       memref.alloca() {mlc.dynamic_shared} : memref<34816xbf16, 3 : i64>
// KERNEL:       mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// KERNEL:       scf.if %{{.*}} -> (f32, f32, f32
// KERNEL:       cvt.rn.bf16x2.f32
func.func @bf16_wide(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x4x?x128xbf16>, %v: tensor<?x4x?x128xbf16>) -> tensor<?x4x?x128xbf16> {
  %o = ml.attention %q, %k, %v {scale = 0.088 : f64} : (tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>) -> tensor<?x4x?x128xbf16>
  func.return %o : tensor<?x4x?x128xbf16>
}

// f16 at a head dim the tensor-core kernel does not take: the FMA kernel, with a remark.
// REMARK: remark: 'linalg.generic' op attention on the FMA kernel, not the tensor cores: head dim 32, value dim 32 (the tensor cores take 64 and 128)
// KERNEL-LABEL: func.func @f16_narrow
// KERNEL:       "gpu.launch"
// KERNEL-NOT:   mma.sync
// KERNEL:       memref.alloca() : memref<32x32xf32, 3 : i64>
func.func @f16_narrow(%q: tensor<1x2x8x32xf16>, %k: tensor<1x2x8x32xf16>, %v: tensor<1x2x8x32xf16>) -> tensor<1x2x8x32xf16> {
  %o = ml.attention %q, %k, %v {scale = 0.25 : f64} : (tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16>) -> tensor<1x2x8x32xf16>
  func.return %o : tensor<1x2x8x32xf16>
}

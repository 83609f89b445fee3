// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=auto}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=auto wgmma-tile=64,128,3 wgmma-tma=true}' | filecheck %s --check-prefix=SMALL
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=auto wgmma-tma=false}' | filecheck %s --check-prefix=CPASYNC
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{sm=90 wgmma-tile=256,256,4 wgmma-tma=true}' 2>&1 | filecheck %s --check-prefix=BIG

// With `wgmma-tma=true`, a 16-bit 2-D matmul's wgmma kernel is fed by TMA. Before the
// launch, the host gets each operand's tensor map, by its device address
// (@__mlc_tensor_map: bf16 = 9, no interleave, the 128-byte swizzle = 3, L2 promotion
// 128B = 2, zero fill; dims innermost first, the row stride in bytes, the box), which
// the kernel takes as a parameter. The block has a producer warpgroup after the 2 consumer ones
// (384 threads); shared memory holds 4 stages and 8 mbarriers (+ 64 bytes). Thread 0
// sets the full barriers up for 1 arrival and the empty ones for the 256 consumer
// threads; then a block barrier, and the roles split: the consumers take registers,
// wait for each slice's full barrier, multiply, and give the previous slice's stage
// back on its empty barrier; the producer gives registers away and its first thread
// waits for a stage's empty barrier, arms its full barrier with the stage's bytes
// (128 + 256 rows of 128 bytes) and copies A (K-major: one box of 64 x 128) and B
// (N-major: four 64-wide panels) into it. Without the option, the same matmul takes
// cp.async copies. One consumer warpgroup (`wgmma-tile=64,128,3`) keeps its registers.
// Batched and tf32 operands: convert-contractions-to-gpu-wgmma-tma-batched.mlir.

// CHECK-LABEL: func.func @matmul_bf16
// CHECK:         %[[A:.*]] = "memref.extract_aligned_pointer_as_index"(%a)
// CHECK-DAG:     %[[BF16:.*]] = arith.constant 9 : i32
// CHECK-DAG:     %[[SWIZZLE:.*]] = arith.constant 3 : i32
// CHECK-DAG:     %[[K:.*]] = arith.constant 200 : i64
// CHECK-DAG:     %[[M:.*]] = arith.constant 256 : i64
// CHECK-DAG:     %[[STRIDE:.*]] = arith.constant 400 : i64
// CHECK-DAG:     %[[DEEP:.*]] = arith.constant 64 : i32
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 128 : i32
// CHECK:         %[[MAPA:.*]] = func.call @__mlc_tensor_map(%[[A]], %[[BF16]], %{{.*}}, %[[SWIZZLE]], %{{.*}}, %{{.*}}, %[[K]], %[[M]], %[[STRIDE]], %[[DEEP]], %[[ROWS]]) : (index, i32, i32, i32, i32, i32, i64, i64, i64, i32, i32) -> index
// CHECK:         %[[B:.*]] = "memref.extract_aligned_pointer_as_index"(%b)
// CHECK:         %[[MAPB:.*]] = func.call @__mlc_tensor_map(%[[B]],
// CHECK:         arith.constant 197696 : i32
// CHECK:         arith.constant 384 : index
// CHECK:         gpu.launch
// CHECK-COUNT-8: mbarrier.init.shared::cta.b64 [$0], $1;
// CHECK:         fence.mbarrier_init.release.cluster;
// CHECK:         gpu.barrier
// CHECK:         arith.constant 256 : index
// CHECK:         arith.cmpi ult
// CHECK:         scf.if
// CHECK:         setmaxnreg.inc.sync.aligned.u32 232;
// CHECK:         scf.for
// CHECK:         mbarrier.try_wait.parity.shared::cta.b64
// CHECK:         wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 1; }"
// CHECK:         wgmma.commit_group.sync.aligned;
// CHECK:         wgmma.wait_group.sync.aligned 1;
// CHECK:         mbarrier.arrive.shared::cta.b64 _, [$0];
// CHECK:         wgmma.wait_group.sync.aligned 0;
// CHECK:         st.global.b32
// CHECK:       } else {
// CHECK:         setmaxnreg.dec.sync.aligned.u32 40;
// CHECK:         arith.index_cast %[[MAPA]] : index to i64
// CHECK:         arith.index_cast %[[MAPB]] : index to i64
// CHECK:         prefetch.tensormap [$0];
// CHECK:         scf.for
// CHECK:         mbarrier.try_wait.parity.shared::cta.b64
// CHECK:         arith.constant 49152 : i32
// CHECK:         mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;
// CHECK-COUNT-5: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         gpu.terminator
// CHECK-NOT:     cp.async.cg

// SMALL-LABEL: func.func @matmul_bf16
// SMALL:         arith.constant 74800 : i32
// SMALL:         arith.constant 256 : index
// SMALL:         gpu.launch
// SMALL-NOT:     setmaxnreg
// SMALL:         wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16

// CPASYNC-LABEL: func.func @matmul_bf16
// CPASYNC-NOT:     tensor_map
// CPASYNC:         cp.async.cg.shared.global
// CPASYNC-NOT:     cp.async.bulk.tensor

// BIG: wgmma-tile=256,256,4 with wgmma-tma: 263232 bytes of shared memory (232448 allowed)
func.func @matmul_bf16(%a: memref<256x200xbf16>, %b: memref<200x512xbf16>, %c: memref<256x512xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x200xbf16>, memref<200x512xbf16>) outs(%c : memref<256x512xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  func.return
}

// -----

// A transposed B (b[j, k]) is K-major: one 64 x 256 box (f16 = 6), two copies a stage.
// CHECK-LABEL: func.func @a_bt_f16
// CHECK:         arith.constant 6 : i32
// CHECK:         func.call @__mlc_tensor_map(
// CHECK:         arith.constant 256 : i32
// CHECK:         func.call @__mlc_tensor_map(
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0; }"
// CHECK-COUNT-2: cp.async.bulk.tensor.2d
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         gpu.terminator
func.func @a_bt_f16(%a: memref<512x128xf16>, %b: memref<256x128xf16>, %c: memref<512x256xf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (j, k)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<512x128xf16>, memref<256x128xf16>) outs(%c : memref<512x256xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  func.return
}

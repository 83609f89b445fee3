// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=auto tf32=true}' --remarks 2> %t.remarks | filecheck %s
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 wgmma=auto tf32=true}' | mlc-opt --verify-roundtrip > /dev/null

// The TMA-fed wgmma kernel on batched and tf32 matmuls. A batched operand gets a map
// of its rank (@__mlc_tensor_map3d: dims innermost first, the batch outermost, strides
// of a row and of a matrix in bytes, a box of 1 along the batch), and its copies take
// the block's batch index as the outermost coordinate (cp.async.bulk.tensor.3d); an
// operand broadcast over the batch (2-D) keeps a 2-D map and copies; two batch dims
// [p, q] make 4-D maps, their coordinates innermost first (q, then p). tf32 operands are
// f32 (data type 7) K-major, copied 32 deep (a 128-byte row): A[m, k] and a transposed
// B[n, k] as they lie, a row-major B[k, n] from its K-major copy (the transpose kernel
// first). An operand whose batch dim lies inside its matrix (A[m, n, k]) is left to
// cp.async copies, with a remark.

// CHECK-LABEL: func.func @batched_bf16
// CHECK:         %[[A:.*]] = "memref.extract_aligned_pointer_as_index"(%a)
// CHECK-DAG:     %[[K:.*]] = arith.constant 64 : i64
// CHECK-DAG:     %[[M:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[BATCH:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[ROW:.*]] = arith.constant 128 : i64
// CHECK-DAG:     %[[MATRIX:.*]] = arith.constant 16384 : i64
// CHECK-DAG:     %[[DEEP:.*]] = arith.constant 64 : i32
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 128 : i32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         %[[MAPA:.*]] = func.call @__mlc_tensor_map3d(%[[A]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[K]], %[[M]], %[[BATCH]], %[[ROW]], %[[MATRIX]], %[[DEEP]], %[[ROWS]], %[[ONE]]) : (index, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i32, i32, i32) -> index
// CHECK:         %[[B:.*]] = "memref.extract_aligned_pointer_as_index"(%b)
// CHECK-DAG:     arith.constant 256 : i64
// CHECK-DAG:     arith.constant 512 : i64
// CHECK-DAG:     arith.constant 32768 : i64
// CHECK:         %[[MAPB:.*]] = func.call @__mlc_tensor_map3d(%[[B]],
// CHECK:         "gpu.launch"
// CHECK:         %[[BZ:.*]] = "gpu.block_id"() <{dimension = #gpu<dim z>}>
// CHECK:         %[[N:.*]] = arith.remui %[[BZ]],
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK:         setmaxnreg.dec.sync.aligned.u32 40;
// CHECK:         %[[BATCHA:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK:         %[[BATCHB:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK:         scf.for
// CHECK:         mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK:         cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];", "r,l,r,r,r,r,~{memory}" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BATCHA]], %{{.*}}
// CHECK-COUNT-4: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];", "r,l,r,r,r,r,~{memory}" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BATCHB]], %{{.*}}
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         gpu.terminator
// CHECK-NOT:     cp.async.cg
func.func @batched_bf16(%a: memref<2x128x64xbf16>, %b: memref<2x64x256xbf16>, %c: memref<2x128x256xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, k, j) -> (n, i, k)>, affine_map<(n, i, k, j) -> (n, k, j)>, affine_map<(n, i, k, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<2x128x64xbf16>, memref<2x64x256xbf16>) outs(%c : memref<2x128x256xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @two_batch_dims_bf16
// CHECK-DAG:     %[[Q_SIZE:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[INNER:.*]] = arith.constant 3 : i64
// CHECK-DAG:     %[[OUTER:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[MATRIX:.*]] = arith.constant 16384 : i64
// CHECK-DAG:     %[[BATCH:.*]] = arith.constant 49152 : i64
// CHECK:         func.call @__mlc_tensor_map4d(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[INNER]], %[[OUTER]], %{{.*}}, %[[MATRIX]], %[[BATCH]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (index, i32, i32, i32, i32, i32, i64, i64, i64, i64, i64, i64, i64, i32, i32, i32, i32) -> index
// CHECK:         func.call @__mlc_tensor_map4d(
// CHECK:         %[[BZ:.*]] = "gpu.block_id"() <{dimension = #gpu<dim z>}>
// CHECK:         %[[Q:.*]] = arith.remui %[[BZ]], %[[Q_SIZE]]
// CHECK:         %[[REST:.*]] = arith.divui %[[BZ]], %[[Q_SIZE]]
// CHECK:         %[[P:.*]] = arith.remui %[[REST]],
// CHECK:         setmaxnreg.dec.sync.aligned.u32 40;
// CHECK:         %[[QA:.*]] = arith.index_cast %[[Q]] : index to i32
// CHECK:         %[[PA:.*]] = arith.index_cast %[[P]] : index to i32
// CHECK:         cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4, $5}], [$6];", "r,l,r,r,r,r,r,~{memory}" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[QA]], %[[PA]], %{{.*}}
// CHECK-COUNT-4: cp.async.bulk.tensor.4d
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         gpu.terminator
func.func @two_batch_dims_bf16(%a: memref<2x3x128x64xbf16>, %b: memref<2x3x64x256xbf16>, %c: memref<2x3x128x256xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(p, q, i, k, j) -> (p, q, i, k)>, affine_map<(p, q, i, k, j) -> (p, q, k, j)>, affine_map<(p, q, i, k, j) -> (p, q, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<2x3x128x64xbf16>, memref<2x3x64x256xbf16>) outs(%c : memref<2x3x128x256xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @broadcast_b_f16
// CHECK:         func.call @__mlc_tensor_map3d(
// CHECK:         func.call @__mlc_tensor_map(
// CHECK:         "gpu.launch"
// CHECK:         mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK:         cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];
// CHECK-COUNT-4: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         gpu.terminator
func.func @broadcast_b_f16(%a: memref<3x128x64xf16>, %b: memref<64x256xf16>, %c: memref<3x128x256xf16>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, k, j) -> (n, i, k)>, affine_map<(n, i, k, j) -> (k, j)>, affine_map<(n, i, k, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<3x128x64xf16>, memref<64x256xf16>) outs(%c : memref<3x128x256xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @batch_inside_bf16
// CHECK-NOT:     tensor_map
// CHECK:         cp.async.cg.shared.global
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         func.return
// REMARK: remark: 'linalg.generic' op wgmma TMA declined: an operand whose batch dims are not outside its matrix; cp.async copies
// REMARK-NOT: remark
func.func @batch_inside_bf16(%a: memref<128x2x64xbf16>, %b: memref<2x64x256xbf16>, %c: memref<2x128x256xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, k, j) -> (i, n, k)>, affine_map<(n, i, k, j) -> (n, k, j)>, affine_map<(n, i, k, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<128x2x64xbf16>, memref<2x64x256xbf16>) outs(%c : memref<2x128x256xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @tf32_a_bt
// CHECK:         %[[A:.*]] = "memref.extract_aligned_pointer_as_index"(%a)
// CHECK-DAG:     %[[F32:.*]] = arith.constant 7 : i32
// CHECK-DAG:     %[[K:.*]] = arith.constant 96 : i64
// CHECK-DAG:     %[[M:.*]] = arith.constant 256 : i64
// CHECK-DAG:     %[[ROW:.*]] = arith.constant 384 : i64
// CHECK-DAG:     %[[DEEP:.*]] = arith.constant 32 : i32
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 128 : i32
// CHECK:         func.call @__mlc_tensor_map(%[[A]], %[[F32]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[K]], %[[M]], %[[ROW]], %[[DEEP]], %[[ROWS]])
// CHECK:         %[[B:.*]] = "memref.extract_aligned_pointer_as_index"(%b)
// CHECK:         arith.constant 256 : i32
// CHECK:         func.call @__mlc_tensor_map(%[[B]],
// CHECK:         "gpu.launch"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{.*}}, p, 1, 1; }"
// CHECK:         setmaxnreg.dec.sync.aligned.u32 40;
// CHECK:         scf.for
// CHECK:         arith.constant 49152 : i32
// CHECK:         mbarrier.arrive.expect_tx.shared::cta.b64
// CHECK-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         gpu.terminator
// CHECK-NOT:     cp.async.cg
func.func @tf32_a_bt(%a: memref<256x96xf32>, %b: memref<512x96xf32>, %c: memref<256x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (j, k)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x96xf32>, memref<512x96xf32>) outs(%c : memref<256x512xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A row-major B[b, k, n] is transposed into a [b, n, k] copy first; its map is the copy's.
// CHECK-LABEL: func.func @tf32_batched
// CHECK:         %[[COPY:.*]] = memref.alloc() : memref<2x512x96xf32>
// CHECK:         "gpu.launch"
// CHECK:         %[[A:.*]] = "memref.extract_aligned_pointer_as_index"(%a)
// CHECK:         func.call @__mlc_tensor_map3d(%[[A]],
// CHECK:         %[[B:.*]] = "memref.extract_aligned_pointer_as_index"(%[[COPY]]) : (memref<2x512x96xf32>)
// CHECK-DAG:     arith.constant 196608 : i64
// CHECK-DAG:     arith.constant 256 : i32
// CHECK:         func.call @__mlc_tensor_map3d(%[[B]],
// CHECK:         "gpu.launch"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
// CHECK-COUNT-2: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT:     cp.async.bulk.tensor
// CHECK:         memref.dealloc %[[COPY]]
func.func @tf32_batched(%a: memref<2x256x96xf32>, %b: memref<2x96x512xf32>, %c: memref<2x256x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, k, j) -> (n, i, k)>, affine_map<(n, i, k, j) -> (n, k, j)>, affine_map<(n, i, k, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<2x256x96xf32>, memref<2x96x512xf32>) outs(%c : memref<2x256x512xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

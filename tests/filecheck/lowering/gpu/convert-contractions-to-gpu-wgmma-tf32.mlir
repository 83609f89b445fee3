// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 tf32=true wgmma-tma=false}' --remarks 2> %t.remarks | filecheck %s
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 tf32=true wgmma=off}' | filecheck %s --check-prefix=OFF
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90}' | filecheck %s --check-prefix=F32

// With `tf32=true` on sm_90 (`wgmma=auto`, the default), an f32 matmul of static sizes,
// multiples of 4, takes the wgmma kernel in tf32: slices 32 deep (4 x 384 x 32 x 4 bytes
// + 1024 to align: the 16-bit kernel's bytes), 4 `m64n256k8` a slice, no transpose flags
// (tf32 reads K-major operands alone). A is K-major; the row-major B is N-major: a
// transpose kernel (32 x 32 tiles through a 32 x 33 shared tile, 32 x 8 threads) copies
// it first into a K-major temporary, freed after the matmul; both operands then move by
// 16-byte copies (every thread's cp.async here, `wgmma-tma=false`; the TMA feed, the
// default: convert-contractions-to-gpu-wgmma-tma-batched.mlir). A lane's two adjacent
// f32 outputs are stored together. With `wgmma=off` the tf32 mma.sync kernel takes it;
// without `tf32=true`, f32 FMAs.

// CHECK-LABEL: func.func @matmul_tf32
// CHECK:         %[[KMAJOR:.*]] = memref.alloc() : memref<512x200xf32>
// CHECK:         %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[C7:.*]] = arith.constant 7 : index
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[C32:.*]] = arith.constant 32 : index
// CHECK:         %[[C8:.*]] = arith.constant 8 : index
// CHECK:         "gpu.launch"(%[[C16]], %[[C7]], %[[C1]], %[[C32]], %[[C8]], %{{.*}})
// CHECK:           %[[TILE:.*]] = memref.alloca() : memref<32x33xf32, 3 : i64>
// CHECK-COUNT-4:   memref.load %b[%{{.*}}, %{{.*}}] : memref<200x512xf32>
// CHECK:           gpu.barrier
// CHECK-COUNT-4:   memref.store %{{.*}}, %[[KMAJOR]][%{{.*}}, %{{.*}}] : memref<512x200xf32>
// CHECK:         arith.constant 197632 : i32
// CHECK:         memref.alloca() {mlc.dynamic_shared} : memref<49408xf32, 3 : i64>
// CHECK-NOT:     cp.async.ca
// CHECK:         cp.async.cg.shared.global [$0], [ga], 16, $2;
// CHECK-NOT:     cp.async.ca
// CHECK:         scf.for
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {$0, {{.*}}, $127}, $256, $257, p, 1, 1; }"
// CHECK:         wgmma.wait_group.sync.aligned 0;
// CHECK:         st.global.v2.f32 [ga], {$1, $2}; }"
// CHECK-NOT:     mma.sync
// CHECK:         memref.dealloc %[[KMAJOR]] : memref<512x200xf32>
// CHECK-NEXT:    func.return

// OFF-LABEL: func.func @matmul_tf32
// OFF-NOT:     wgmma
// OFF:         llvm.nvvm.mma.m16n8k8.row.col.tf32

// F32-LABEL: func.func @matmul_tf32
// F32-NOT:     wgmma
// F32-NOT:     mma
func.func @matmul_tf32(%a: memref<256x200xf32>, %b: memref<200x512xf32>, %c: memref<256x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x200xf32>, memref<200x512xf32>) outs(%c : memref<256x512xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A transposed B (b[j, k]) is K-major: no transpose kernel, no temporary.
// CHECK-LABEL: func.func @a_bt_tf32
// CHECK-NOT:     memref.alloc()
// CHECK-NOT:     memref<32x33xf32
// CHECK-NOT:     cp.async.ca
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{.*}}, p, 1, 1; }"
func.func @a_bt_tf32(%a: memref<256x64xf32>, %b: memref<136x64xf32>, %c: memref<256x136xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (j, k)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x64xf32>, memref<136x64xf32>) outs(%c : memref<256x136xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A transposed A (a[k, i]) and a row-major B: both transposed first, each into its own
// temporary, both freed after the matmul.
// CHECK-LABEL: func.func @at_b_tf32
// CHECK:         %[[AK:.*]] = memref.alloc() : memref<256x64xf32>
// CHECK:         memref.load %a[%{{.*}}, %{{.*}}] : memref<64x256xf32>
// CHECK:         %[[BK:.*]] = memref.alloc() : memref<192x64xf32>
// CHECK:         memref.load %b[%{{.*}}, %{{.*}}] : memref<64x192xf32>
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
// CHECK:         memref.dealloc %[[AK]] : memref<256x64xf32>
// CHECK-NEXT:    memref.dealloc %[[BK]] : memref<192x64xf32>
func.func @at_b_tf32(%a: memref<64x256xf32>, %b: memref<64x192xf32>, %c: memref<256x192xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (k, i)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<64x256xf32>, memref<64x192xf32>) outs(%c : memref<256x192xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A batched B (3 x 32 x 64): one transpose launch, the batch as the grid's z.
// CHECK-LABEL: func.func @batched_tf32
// CHECK:         %[[BK:.*]] = memref.alloc() : memref<8x64x32xf32>
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[C8:.*]] = arith.constant 8 : index
// CHECK:         "gpu.launch"(%[[C2]], %[[C1]], %[[C8]],
// CHECK:           memref.store %{{.*}}, %[[BK]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<8x64x32xf32>
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
// CHECK:         memref.dealloc %[[BK]] : memref<8x64x32xf32>
func.func @batched_tf32(%a: memref<8x64x32xf32>, %b: memref<8x32x64xf32>, %c: memref<8x64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, k, j) -> (n, i, k)>, affine_map<(n, i, k, j) -> (n, k, j)>, affine_map<(n, i, k, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x64x32xf32>, memref<8x32x64xf32>) outs(%c : memref<8x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A constant B (a weight) is transposed at compile time into a global of its own: no
// transpose kernel, no temporary.
// CHECK:       "memref.global"() <{sym_name = "w_kmajor", type = memref<64x32xf32>, initial_value = dense<5.000000e-01> : tensor<64x32xf32>, sym_visibility = "private", constant, alignment = 64 : i64}>
// CHECK-NEXT:  "memref.global"() <{sym_name = "w", type = memref<32x64xf32>
// CHECK-LABEL: func.func @constant_tf32
// CHECK:         memref.get_global @w_kmajor : memref<64x32xf32>
// CHECK-NOT:     memref.alloc()
// CHECK-NOT:     memref<32x33xf32
// CHECK:         wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
// CHECK-NOT:     memref.dealloc
"memref.global"() <{sym_name = "w", type = memref<32x64xf32>, initial_value = dense<5.000000e-01> : tensor<32x64xf32>, sym_visibility = "private", constant, alignment = 64 : i64}> : () -> ()
func.func @constant_tf32(%a: memref<512x32xf32>, %c: memref<512x64xf32>) {
  %b = memref.get_global @w : memref<32x64xf32>
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<512x32xf32>, memref<32x64xf32>) outs(%c : memref<512x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Declined, with a remark, to the tf32 mma.sync kernel: K not a multiple of 4, K below
// one 32-deep slice.
// CHECK-LABEL: func.func @declined_tf32
// CHECK-NOT:     wgmma
// CHECK:         llvm.nvvm.mma.m16n8k8.row.col.tf32
// REMARK: remark: 'linalg.generic' op wgmma declined: 256x256x30 (M, N and K must be multiples of 4: 16-byte copies); mma.sync
// REMARK: remark: 'linalg.generic' op wgmma declined: 256x256x16 is small (M, N from 64, K from 32); mma.sync
// REMARK: remark: 'linalg.generic' op wgmma declined: an operand whose K is not next to its contiguous dim; mma.sync
func.func @declined_tf32(%a: memref<256x30xf32>, %b: memref<30x256xf32>, %c: memref<256x256xf32>,
                         %a2: memref<256x16xf32>, %b2: memref<16x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x30xf32>, memref<30x256xf32>) outs(%c : memref<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a2, %b2 : memref<256x16xf32>, memref<16x256xf32>) outs(%c : memref<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A batched B laid out [k, batch, n]: K is not next to N, so no transpose of the last two
// dims makes it K-major; declined to mma.sync with a remark (last REMARK above).
// CHECK-LABEL: func.func @declined_k_apart
// CHECK-NOT:     wgmma
// CHECK:         llvm.nvvm.mma.m16n8k8.row.col.tf32
func.func @declined_k_apart(%a: memref<8x64x32xf32>, %b: memref<32x8x64xf32>, %c: memref<8x64x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, i, k, j) -> (n, i, k)>, affine_map<(n, i, k, j) -> (k, n, j)>, affine_map<(n, i, k, j) -> (n, i, j)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x64x32xf32>, memref<32x8x64xf32>) outs(%c : memref<8x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

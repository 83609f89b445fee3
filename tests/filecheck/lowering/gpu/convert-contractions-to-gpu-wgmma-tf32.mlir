// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 tf32=true}' --remarks 2> %t.remarks | filecheck %s
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90 tf32=true wgmma=off}' | filecheck %s --check-prefix=OFF
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{sm=90}' | filecheck %s --check-prefix=F32

// With `tf32=true` on sm_90 (`wgmma=auto`, the default), an f32 matmul of static sizes,
// multiples of 4, takes the wgmma kernel in tf32: slices 32 deep (4 x 384 x 32 x 4 bytes
// + 1024 to align: the 16-bit kernel's bytes), 4 `m64n256k8` a slice, no transpose flags
// (tf32 reads K-major operands alone). A is K-major: 16-byte copies; the row-major B is
// N-major: it is transposed as it is copied, one 4-byte `cp.async.ca` an element. A lane's
// two adjacent f32 outputs are stored together. With `wgmma=off` the tf32 mma.sync kernel
// takes it; without `tf32=true`, f32 FMAs.

// CHECK-LABEL: func.func @matmul_tf32
// CHECK:         arith.constant 197632 : i32
// CHECK:         memref.alloca() {mlc.dynamic_shared} : memref<49408xf32, 3 : i64>
// CHECK:         cp.async.cg.shared.global [$0], [ga], 16, $2;
// CHECK:         cp.async.ca.shared.global [$0], [ga], 4, $2;
// CHECK:         scf.for
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {$0, {{.*}}, $127}, $256, $257, p, 1, 1; }"
// CHECK:         wgmma.wait_group.sync.aligned 0;
// CHECK:         st.global.v2.f32 [ga], {$1, $2}; }"
// CHECK-NOT:     mma.sync

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

// A transposed B (b[j, k]) is K-major: both operands by 16-byte copies, no element copies.
// CHECK-LABEL: func.func @a_bt_tf32
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

// Declined, with a remark, to the tf32 mma.sync kernel: K not a multiple of 4, K below
// one 32-deep slice.
// CHECK-LABEL: func.func @declined_tf32
// CHECK-NOT:     wgmma
// CHECK:         llvm.nvvm.mma.m16n8k8.row.col.tf32
// REMARK: remark: 'linalg.generic' op wgmma declined: 256x256x30 (M, N and K must be multiples of 4: 16-byte copies); mma.sync
// REMARK: remark: 'linalg.generic' op wgmma declined: 256x256x16 is small (M, N from 64, K from 32); mma.sync
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

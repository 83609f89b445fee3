// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=90 wgmma=auto}' --remarks 2> %t.remarks | filecheck %s
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks

// (Apart from convert-contractions-to-gpu-wgmma.mlir: each declined matmul becomes an
// mma.sync kernel, and this file's output is lowered once.)

// Declined, with a remark, to the mma.sync kernel: dynamic sizes, K not a multiple of
// 8, too small; an f32 matmul is not asked about.
// CHECK-LABEL: func.func @declined
// CHECK-NOT:     wgmma
// CHECK:         func.return
// REMARK: remark: 'linalg.generic' op wgmma declined: dynamic sizes; mma.sync
// REMARK: remark: 'linalg.generic' op wgmma declined: 256x256x100 (M, N and K must be multiples of 8: 16-byte copies); mma.sync
// REMARK: remark: 'linalg.generic' op wgmma declined: 2048x48x64 is small (M, N from 64, K from 64); mma.sync
// REMARK-NOT: remark
func.func @declined(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xbf16>,
                    %a2: memref<256x100xf16>, %b2: memref<100x256xf16>, %c2: memref<256x256xf16>,
                    %a3: memref<2048x64xf16>, %b3: memref<64x48xf16>, %c3: memref<2048x48xf16>,
                    %a4: memref<256x64xf32>, %b4: memref<64x256xf32>, %c4: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a2, %b2 : memref<256x100xf16>, memref<100x256xf16>) outs(%c2 : memref<256x256xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a3, %b3 : memref<2048x64xf16>, memref<64x48xf16>) outs(%c3 : memref<2048x48xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a4, %b4 : memref<256x64xf32>, memref<64x256xf32>) outs(%c4 : memref<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}


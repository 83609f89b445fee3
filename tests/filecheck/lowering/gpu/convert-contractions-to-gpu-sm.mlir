// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=80}' | filecheck %s --check-prefix=SM80
// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=75}' | filecheck %s --check-prefix=SM75
// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=90 tf32=true}' | filecheck %s --check-prefix=TF32
// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=70 tf32=true}' --verify-diagnostics | filecheck %s --check-prefix=SM75
// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=70 tf32=true}' --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// The target's compute capability decides what the kernels may use. From sm_80 on
// (the default), the small tile's aligned K loop copies slices through a 3-stage
// cp.async pipeline (three buffers of each tile, A kept as [row, k]); on sm_70 and
// sm_75, which have no cp.async, both tiles pass their slices through registers into
// two buffers (A transposed as it is stored), as a tile option without stages builds
// them. tf32 asks for tensor cores (`mma.sync`, sm_80 on); older targets decline it
// with a remark and multiply in f32.

// SM80-LABEL: func.func @matmul
// SM80:         memref.alloca() : memref<2x8x132xf32, 3 : i64>
// SM80:         memref.alloca() : memref<3x64x20xf32, 3 : i64>
// SM80-NEXT:    memref.alloca() : memref<3x16x72xf32, 3 : i64>
// SM80:         cp.async.wait_group 1;

// SM75-LABEL: func.func @matmul
// SM75:         memref.alloca() : memref<2x8x132xf32, 3 : i64>
// SM75-NEXT:    memref.alloca() : memref<2x8x136xf32, 3 : i64>
// SM75:         memref.alloca() : memref<2x16x68xf32, 3 : i64>
// SM75-NEXT:    memref.alloca() : memref<2x16x72xf32, 3 : i64>
// SM75-NOT:     cp.async
// SM75-NOT:     llvm.nvvm.mma
// SM75-COUNT-32: math.fma
// SM75-NOT:     cp.async
// SM75-NOT:     llvm.nvvm.mma

// TF32-LABEL: func.func @matmul
// TF32:         memref.alloca() : memref<4x128x12xf32, 3 : i64>
// TF32:         llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32:         cp.async.wait_group 2;

// REMARK: convert-contractions-to-gpu-sm.mlir:[[# @LINE + 3]]:3: remark: 'linalg.generic' op tf32 declined: sm_70 has no tf32 mma (sm_80 on); f32 FMAs
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  // expected-remark @+1 {{tf32 declined: sm_70 has no tf32 mma (sm_80 on); f32 FMAs}}
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// An architecture mlc does not target, or no number, is a one-line error.
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{sm=60}' 2>&1 | filecheck %s --check-prefix=BAD-SM
// BAD-SM: mlc-opt: error: pass 'convert-contractions-to-gpu': sm=60: not a compute capability mlc targets (70, 75, 80, 86, 89, 90)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{sm=sm_75}' 2>&1 | filecheck %s --check-prefix=BAD-NAME
// BAD-NAME: mlc-opt: error: pass 'convert-contractions-to-gpu': option 'sm' takes an integer, got 'sm_75'

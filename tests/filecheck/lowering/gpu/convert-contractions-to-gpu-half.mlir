// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=80}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=90 wgmma=off}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=75}' --verify-diagnostics | filecheck %s --check-prefix=SM75
// RUN: mlc-opt %s -p 'convert-contractions-to-gpu{sm=75}' --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// f16 and bf16 contractions multiply on the tensor cores from sm_80 on: 16-bit tiles
// (rows padded by 8 elements: 24 and 136 for the 128x128 tile's 16-deep slices, 40 and
// 72 for the 64x64 tile's 32-deep ones) filled by a 4-stage cp.async pipeline,
// fragments loaded by ldmatrix (.trans for a tile laid out [k, extent]: the B of a
// row-major matmul), `mma.sync.m16n8k16` into f32 accumulators, which the store
// truncates to the output's type. Below sm_80 they are left to the loop mapping.
// The big tile's blocks are launched 8 tile rows at a time (their tile decoded from
// the grid's size); shared addresses are 32-bit (`r`) offsets into the shared window.

// CHECK-LABEL: func.func @matmul_f16
// CHECK:         gpu.launch
// CHECK:         gpu.block_id
// CHECK:         gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// CHECK-NEXT:    gpu.grid_dim"() <{dimension = #gpu<dim y>}>
// CHECK:         arith.constant 8 : index
// CHECK:         memref.alloca() : memref<4x128x24xf16, 3 : i64>
// CHECK-NEXT:    memref.alloca() : memref<4x16x136xf16, 3 : i64>
// CHECK:         llvm.inline_asm "cvta.to.shared.u64 $0, $1;", "=l,l"
// CHECK:         cp.async.cg.shared.global [$0], [ga], 16, $2; }", "r,l,r,~{memory}"
// CHECK:         ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r,~{memory}"
// CHECK:         ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK:         mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK:         cp.async.wait_group 0;
// CHECK:         arith.truncf %{{.*}} : f32 to f16
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.grid_dim
// CHECK:         memref.alloca() : memref<4x64x40xf16, 3 : i64>
// CHECK-NEXT:    memref.alloca() : memref<4x32x72xf16, 3 : i64>
// CHECK-NOT:     math.fma
// CHECK:         func.return

// SM75-LABEL: func.func @matmul_f16
// SM75-NOT:     gpu.launch
// SM75:         linalg.generic
// SM75:         arith.addf %{{.*}} : f16
// REMARK: convert-contractions-to-gpu-half.mlir:[[# @LINE + 3]]:3: remark: 'linalg.generic' op 16-bit contraction left to the loop mapping: sm_75 has no m16n8k16 mma.sync (sm_80 on)
func.func @matmul_f16(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf16>) {
  // expected-remark @+1 {{16-bit contraction left to the loop mapping: sm_75 has no m16n8k16 mma.sync (sm_80 on)}}
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf16>) {
  ^bb0(%x: f16, %y: f16, %acc: f16):
    %p = arith.mulf %x, %y : f16
    %s = arith.addf %acc, %p : f16
    linalg.yield %s : f16
  }
  func.return
}

// A bf16 matmul whose B is read along K (`b[j, k]`, a linear layer's weight): both
// tiles are [extent, k], so neither fragment load transposes. The fill of zeros is
// absorbed: the accumulators start at it, widened to f32.

// CHECK-LABEL: func.func @matmul_bf16_nt
// CHECK-NOT:     linalg.generic
// CHECK:         memref.alloca() : memref<4x128x24xbf16, 3 : i64>
// CHECK-NEXT:    memref.alloca() : memref<4x128x24xbf16, 3 : i64>
// CHECK:         arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT:     ldmatrix.sync.aligned.m8n8.x4.trans
// CHECK:         mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT:     ldmatrix.sync.aligned.m8n8.x4.trans
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
// SM75-LABEL: func.func @matmul_bf16_nt
// SM75:         linalg.generic
func.func @matmul_bf16_nt(%a: memref<?x?xbf16>, %b: memref<?x?xbf16>, %c: memref<?x?xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%c : memref<?x?xbf16>) {
  ^bb0(%o: bf16):
    %zero = arith.constant 0.0 : bf16
    linalg.yield %zero : bf16
  }
  // expected-remark @+1 {{16-bit contraction left to the loop mapping}}
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>) outs(%c : memref<?x?xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %acc: bf16):
    %p = arith.mulf %x, %y : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  }
  func.return
}

// Mixed types (f16 inputs, an f32 accumulator) are not an `acc + a * b` of one type:
// left to the loop mapping on every target, without a remark.

// CHECK-LABEL: func.func @mixed
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic
func.func @mixed(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %p = arith.mulf %x, %y : f16
    %w = arith.extf %p : f16 to f32
    %s = arith.addf %acc, %w : f32
    linalg.yield %s : f32
  }
  func.return
}

// f32 stays on FMAs (tf32 only when asked for).

// CHECK-LABEL: func.func @matmul_f32
// CHECK-NOT:     ldmatrix
// CHECK-NOT:     mma.sync
// CHECK:         math.fma
// CHECK-NOT:     ldmatrix
// CHECK-NOT:     mma.sync
// CHECK:         func.return
func.func @matmul_f32(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// tf32=true: both variants multiply on the tensor cores. Shared values are rounded to
// tf32 (f2tf32.rna) and fed to mma.sync m16n8k8 (16 per 8-deep step and warp tile),
// the accumulators staying f32. The tiles keep the operands' layouts (A as [row, k],
// rows padded to 12 floats; B as [k, column], padded by 8) so that the fragment reads
// do not conflict on banks. 128x128 tiles have 8 warps, 64x64 ones 2. Both copy
// aligned operands through a 4-stage cp.async pipeline (4 buffers of each tile). The
// 128x128 tiles' blocks are launched 8 tile rows at a time (decoded from the grid's
// size); the 64x64 ones row by row.

// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{tf32=true}' | filecheck %s --check-prefix=TF32
// TF32-LABEL: func.func @tf32
// TF32:         %[[T:.+]] = arith.constant 256 : index
// TF32:         "gpu.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]],
// TF32:           "gpu.grid_dim"() <{dimension = #gpu<dim x>}>
// TF32-NEXT:      "gpu.grid_dim"() <{dimension = #gpu<dim y>}>
// TF32:           memref.alloca() : memref<4x128x12xf32, 3 : i64>
// TF32-NEXT:      memref.alloca() : memref<4x8x136xf32, 3 : i64>
// TF32:           scf.for {{.*}} -> ({{(f32, ){63}f32}}) {
// TF32-NEXT:        llvm.inline_asm has_side_effects "cp.async.wait_group 2;"
// TF32-NOT:         math.fma
// TF32-COUNT-24:    llvm.call_intrinsic "llvm.nvvm.f2tf32.rna"(%{{.+}}) : (f32) -> i32
// TF32-COUNT-16:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// TF32-NOT:         math.fma
// TF32:             scf.yield
// TF32:           llvm.inline_asm has_side_effects "cp.async.wait_group 0;"
// TF32:           scf.for {{.*}} -> ({{(f32, ){71}f32}}) {
// TF32-COUNT-16:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// TF32:             scf.yield
// TF32-COUNT-64:  scf.if
// TF32:         } else {
// TF32:           %[[S:.+]] = arith.constant 64 : index
// TF32:           "gpu.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %[[S]],
// TF32-NOT:       gpu.grid_dim
// TF32:           memref.alloca() : memref<4x64x12xf32, 3 : i64>
// TF32-NEXT:      memref.alloca() : memref<4x8x72xf32, 3 : i64>
// TF32-COUNT-16:    llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"
// CHECK-LABEL: func.func @tf32
func.func @tf32(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// Other tile shapes and a launch bound, as pass options: 64x128 tiles of 8x8 (128
// threads) marked for two blocks an SM, 32x16 tiles of 4x4 (32 threads).

// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{tile=64,128,8,8,8 small-tile=32,16,4,4,8 blocks-per-sm=2}' | filecheck %s --check-prefix=SHAPES

// A pipeline of 4 stages on the big tile: four buffers of each tile, A kept as
// [row, k]; three slices issued before the loop, which waits for all but two groups.
// RUN: mlc-opt %s --split-input-file -p 'convert-contractions-to-gpu{tile=128,128,8,8,8,1,4}' | filecheck %s --check-prefix=STAGES
// STAGES-LABEL: func.func @shapes
// STAGES:           %[[A:.+]] = memref.alloca() : memref<4x128x12xf32, 3 : i64>
// STAGES-NEXT:      %[[B:.+]] = memref.alloca() : memref<4x8x136xf32, 3 : i64>
// STAGES-COUNT-3:   llvm.inline_asm has_side_effects "cp.async.commit_group;"
// STAGES:           scf.for
// STAGES-NEXT:        llvm.inline_asm has_side_effects "cp.async.wait_group 2;"
// STAGES-NEXT:        gpu.barrier
// STAGES:             llvm.inline_asm has_side_effects "cp.async.commit_group;"
// STAGES:             vector.load %[[A]]
// STAGES-COUNT-64:    math.fma
// STAGES:           llvm.inline_asm has_side_effects "cp.async.wait_group 0;"
// CHECK-LABEL: func.func @shapes
// SHAPES-LABEL: func.func @shapes
// SHAPES:         scf.if
// SHAPES:           %[[T:.+]] = arith.constant 128 : index
// SHAPES:           "gpu.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]],
// SHAPES:             memref.alloca() : memref<2x8x68xf32, 3 : i64>
// SHAPES-NEXT:        memref.alloca() : memref<2x8x136xf32, 3 : i64>
// SHAPES:             scf.for {{.*}} -> ({{(f32, ){64}v}}ector<4xf32>, vector<4xf32>, vector<4xf32>) {
// SHAPES-COUNT-64:      math.fma
// SHAPES:           }) {nvvm.minctasm = 2 : i32}
// SHAPES:         } else {
// SHAPES:           %[[S:.+]] = arith.constant 32 : index
// SHAPES:           "gpu.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %[[S]],
// SHAPES:             memref.alloca() : memref<2x8x36xf32, 3 : i64>
// SHAPES-NEXT:        memref.alloca() : memref<2x8x24xf32, 3 : i64>
// SHAPES:             scf.for {{.*}} -> ({{(f32, ){16}v}}ector<4xf32>, vector<4xf32>, vector<4xf32>) {
// SHAPES-COUNT-16:      math.fma
// SHAPES-NOT:       nvvm.minctasm
// SHAPES:           gpu.terminator
func.func @shapes(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// Shapes the kernel cannot be built with are rejected with the reason.
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{tile=64,64,3,8,8}' 2>&1 | filecheck %s --check-prefix=BAD-THREAD
// BAD-THREAD: mlc-opt: error: pass 'convert-contractions-to-gpu': tile=64,64,3,8,8: thread tiles must be multiples of 4 in both dims
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{small-tile=16,16,4,4,8}' 2>&1 | filecheck %s --check-prefix=BAD-THREADS
// BAD-THREADS: error: pass 'convert-contractions-to-gpu': small-tile=16,16,4,4,8: 16 threads a block (32 to 1024 allowed)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{tile=128,128}' 2>&1 | filecheck %s --check-prefix=BAD-FIELDS
// BAD-FIELDS: error: pass 'convert-contractions-to-gpu': tile takes ROWS,COLS,THREAD_ROWS,THREAD_COLS,DEPTH[,GROUPS[,STAGES]], got [128, 128]
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{tile=128,128,8,8,8,1,1}' 2>&1 | filecheck %s --check-prefix=BAD-STAGES
// BAD-STAGES: error: pass 'convert-contractions-to-gpu': tile=128,128,8,8,8,1,1: stages must be 0 (through registers) or 2 and more (cp.async)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{tile=64,64,4,4,8,1,2}' 2>&1 | filecheck %s --check-prefix=BAD-RUNS
// BAD-RUNS: error: pass 'convert-contractions-to-gpu': tile=64,64,4,4,8,1,2: cp.async stages need runs of 4 floats a thread (rows x depth / threads)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{tile=128,128,8,8,8,1,5}' 2>&1 | filecheck %s --check-prefix=BAD-DEEP
// BAD-DEEP: error: pass 'convert-contractions-to-gpu': tile=128,128,8,8,8,1,5: 61440 bytes of shared memory a block (49152 allowed)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{small-tile=64,64,4,4,32,2}' 2>&1 | filecheck %s --check-prefix=BAD-SHARED
// BAD-SHARED: error: pass 'convert-contractions-to-gpu': small-tile=64,64,4,4,32,2: 53248 bytes of shared memory a block (49152 allowed)
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{small-tile=64,64,4,4,12,2}' 2>&1 | filecheck %s --check-prefix=BAD-GROUPS
// BAD-GROUPS: error: pass 'convert-contractions-to-gpu': small-tile=64,64,4,4,12,2: the K slice depth must be a multiple of 4 steps a group
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{blocks-per-sm=0}' 2>&1 | filecheck %s --check-prefix=BAD-BOUND
// BAD-BOUND: error: pass 'convert-contractions-to-gpu': few-blocks must be >= 0 and blocks-per-sm in [1, 32], got 264 and 0
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{tile=0,0,0,0,0}' 2>&1 | filecheck %s --check-prefix=BAD-ZERO
// BAD-ZERO: error: pass 'convert-contractions-to-gpu': tile=0,0,0,0,0: tile sizes must be positive
// RUN: not mlc-opt %s -p 'convert-contractions-to-gpu{small-tile=64,64,4,4,-8}' 2>&1 | filecheck %s --check-prefix=BAD-NEGATIVE
// BAD-NEGATIVE: error: pass 'convert-contractions-to-gpu': small-tile=64,64,4,4,-8: tile sizes must be positive

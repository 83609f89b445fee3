// RUN: env MLC_NUM_THREADS=2 mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,16,12 vector-length=4 shared-micro-kernels=false}' | filecheck %s
// RUN: env MLC_NUM_THREADS=2 mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,16,12 vector-length=4 shared-micro-kernels=false}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// How a matmul's parallel loop cuts its work into tasks on two threads (MR = 2, NR = 8,
// MC = 12). M = 10 fits one block of A; split by rows (6 + 4) one thread would get 3
// row tiles of 32 panels and the other 2; split by column panels, each gets 5 row
// tiles of 16 panels. Each task takes all rows (i0 from the task's row block, here
// the only one) and its group of adjacent panels, [p0, min(p0 + 16, 32)).

// B (read transposed, so packed: a row-major B this small in M would be read in place,
// `linalg-tile-b-in-place.mlir`) is packed in groups of at most 8 adjacent panels, fewer
// where 8 would leave the threads fewer groups than threads: its 32 panels in groups
// of min(ceil(32 / 2), 8).

// CHECK-LABEL: func.func @column_groups
// CHECK:         %[[B_PANELS:.+]] = arith.ceildivsi %{{.+}}, %{{.+}} : index
// CHECK:         %[[PACK_THREADS:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[SHARE:.+]] = arith.ceildivsi %[[B_PANELS]], %[[PACK_THREADS]] : index
// CHECK-NEXT:    %[[EIGHT:.+]] = arith.constant 8 : index
// CHECK-NEXT:    %[[AT_MOST:.+]] = arith.minsi %[[SHARE]], %[[EIGHT]] : index
// CHECK-NEXT:    %[[GROUP:.+]] = arith.maxsi %[[AT_MOST]], %{{.+}} : index
// CHECK-NEXT:    %[[B_GROUPS:.+]] = arith.ceildivsi %[[B_PANELS]], %[[GROUP]] : index
// CHECK:         "scf.parallel"
// CHECK:         scf.reduce
// CHECK:         %[[PANELS:.+]] = arith.ceildivsi %{{.+}}, %{{.+}} : index
// CHECK:         %[[ROWS:.+]] = arith.constant 10 : index
// CHECK:         %[[GROUPS:.+]] = arith.constant 2 : index
// CHECK:         %[[PER_GROUP:.+]] = arith.ceildivsi %[[PANELS]], %[[GROUPS]] : index
// CHECK:         %[[BLOCKS:.+]] = arith.ceildivsi %{{.+}}, %[[ROWS]] : index
// CHECK:         %[[TASKS:.+]] = arith.muli %[[BLOCKS]], %[[GROUPS]] : index
// CHECK:         "scf.parallel"
// CHECK:           %[[REST:.+]] = arith.remsi %{{.+}}, %[[TASKS]] : index
// CHECK:           %[[BLOCK:.+]] = arith.divsi %[[REST]], %[[GROUPS]] : index
// CHECK:           %[[I0:.+]] = arith.muli %[[BLOCK]], %[[ROWS]] : index
// CHECK:           %[[GROUP:.+]] = arith.remsi %[[REST]], %[[GROUPS]] : index
// CHECK:           %[[P0:.+]] = arith.muli %[[GROUP]], %[[PER_GROUP]] : index
// CHECK:           %[[NEXT:.+]] = arith.addi %[[P0]], %[[PER_GROUP]] : index
// CHECK:           %[[P_END:.+]] = arith.minsi %[[NEXT]], %[[PANELS]] : index
// CHECK:           scf.for %{{.+}} = %[[P0]] to %[[P_END]] step
// CHECK:             vector.fma

// LOC-LABEL: func.func @column_groups
// LOC:         arith.remsi {{.*}} loc("layer.py":4:2)
func.func @column_groups(%a: memref<10x512xf32>, %b: memref<256x512xf32>, %c: memref<10x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<10x512xf32>, memref<256x512xf32>) outs(%c : memref<10x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  } loc("layer.py":4:2)
  func.return
}

// -----

// M = 24 is more than one block of A (MC = 12): blocks of rows, every panel in each
// task (one group), B read in place.

// CHECK-LABEL: func.func @row_blocks
// CHECK-NOT:     memref.alloc
// CHECK:         %[[ROWS:.+]] = arith.constant 12 : index
// CHECK:         %[[GROUPS:.+]] = arith.constant 1 : index
// CHECK:         %[[PER_GROUP:.+]] = arith.ceildivsi %{{.+}}, %[[GROUPS]] : index
// CHECK:         "scf.parallel"
func.func @row_blocks(%a: memref<24x512xf32>, %b: memref<512x256xf32>, %c: memref<24x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<24x512xf32>, memref<512x256xf32>) outs(%c : memref<24x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A dynamic M: the rows per task are computed when the kernel runs, as for a static
// M: tasks of at most MC rows, as many as the threads (rounded up to a multiple), but
// no more than tasks worth TASK_FLOPS (M * 2 * K * N / 1000000), and at least one;
// the rows a multiple of MR. A is read along its rows, in place: no task packs it.

// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<?x512xf32>
// CHECK:         %[[M:.+]] = memref.dim %[[A]], %{{.+}}
// CHECK:         scf.reduce
// CHECK:         %[[THREADS:.+]] = arith.constant 2 : index
// CHECK:         %[[MC:.+]] = arith.constant 12 : index
// CHECK:         %[[BLOCKS:.+]] = arith.ceildivsi %[[M]], %[[MC]] : index
// CHECK:         %[[ROUNDED:.+]] = arith.ceildivsi %[[BLOCKS]], %[[THREADS]] : index
// CHECK:         %[[BY_SIZE:.+]] = arith.muli %[[ROUNDED]], %[[THREADS]] : index
// CHECK:         %[[ROW_FLOPS:.+]] = arith.constant 262144 : index
// CHECK:         %[[FLOPS:.+]] = arith.muli %[[M]], %[[ROW_FLOPS]] : index
// CHECK:         %[[TASK_FLOPS:.+]] = arith.constant 1000000 : index
// CHECK:         %[[WORTH:.+]] = arith.divsi %[[FLOPS]], %[[TASK_FLOPS]] : index
// CHECK:         arith.select
// CHECK:         %[[TASKS:.+]] = arith.select %{{.+}}, %{{.+}}, %[[BY_SIZE]] : index
// CHECK:         %[[AT_LEAST_ONE:.+]] = arith.maxsi %[[TASKS]], %{{.+}} : index
// CHECK:         %[[SHARE:.+]] = arith.ceildivsi %[[M]], %[[AT_LEAST_ONE]] : index
// CHECK:         arith.ceildivsi %[[SHARE]]
// CHECK:         %[[CAPPED:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK:         %[[ROWS:.+]] = arith.maxsi %[[CAPPED]], %{{.+}} : index
// CHECK:         arith.ceildivsi %[[M]], %[[ROWS]] : index
// CHECK:         "scf.parallel"
// CHECK-NOT:       memref.alloc
// CHECK:           vector.fma
// CHECK:         scf.reduce
func.func @dynamic_rows(%a: memref<?x512xf32>, %b: memref<512x256xf32>, %c: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x512xf32>, memref<512x256xf32>) outs(%c : memref<?x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// An LSTM step's recurrent product: M = 2 is one register block (MR = 2), too few rows
// for a task per thread, but 2 x 512 x 1024 is worth two tasks (4 x TASK_FLOPS): each
// takes the rows and half of the 128 panels. Its A (one MR x KC block, in L1 while every
// panel reads it) is read in place: no buffer, no copy per call; so is B
// (`tiling_model.reads_b_in_place`).

// CHECK-LABEL: func.func @small_m_column_groups
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<2x512xf32>,
// CHECK-NOT:     memref.alloc
// CHECK:         %[[LAST_ROW:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[ROWS:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[GROUPS:.+]] = arith.constant 2 : index
// CHECK-NEXT:    arith.ceildivsi %{{.+}}, %[[GROUPS]] : index
// CHECK:         "scf.parallel"
// CHECK-NOT:       memref.alloc
// CHECK:           scf.for {{.*}} iter_args
// CHECK:             memref.load %[[A]]
// CHECK:             vector.fma

// LOC-LABEL: func.func @small_m_column_groups
// LOC:         "scf.parallel"{{.*}}
// LOC:         loc("lstm.py":7:3)
func.func @small_m_column_groups(%a: memref<2x512xf32>, %b: memref<512x1024xf32>, %c: memref<2x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<2x512xf32>, memref<512x1024xf32>) outs(%c : memref<2x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  } loc("lstm.py":7:3)
  func.return
}

// -----

// The same product with a quarter of the columns (2 x 512 x 256, ~0.5 TASK_FLOPS) is
// one task: one group of panels, every row, on the calling thread.

// CHECK-LABEL: func.func @small_m_one_task
// CHECK:         %[[LAST_ROW:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[ROWS:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[GROUPS:.+]] = arith.constant 1 : index
// CHECK-NEXT:    arith.ceildivsi %{{.+}}, %[[GROUPS]] : index
// CHECK:         "scf.parallel"
// CHECK-NOT:       memref.alloc
// CHECK:           memref.load
// CHECK:           vector.fma
func.func @small_m_one_task(%a: memref<2x512xf32>, %b: memref<512x256xf32>, %c: memref<2x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<2x512xf32>, memref<512x256xf32>) outs(%c : memref<2x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

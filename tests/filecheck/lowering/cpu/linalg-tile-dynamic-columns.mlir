// RUN: env MLC_NUM_THREADS=2 mlc-opt %s -p 'linalg-tile{tile-sizes=2,8,16,12 vector-length=4 shared-micro-kernels=false}' | filecheck %s
// RUN: env MLC_NUM_THREADS=1 mlc-opt %s -p 'linalg-tile{tile-sizes=2,8,16,12 vector-length=4 shared-micro-kernels=false}' | filecheck %s --check-prefix=ONE

// A dynamic M on two threads (MR = 2, NR = 8, MC = 12): after the rows of a task, the
// kernel weighs at run time, as `tiling_model.columns_balance_better` does at compile
// time, the register tiles of the busiest thread split by rows (tasks rounded up to the
// threads, times the task's row tiles, times all panels) against all row tiles on half
// of the panels. Where the columns win (M at most MC, at least a panel per thread, each
// share worth TASK_FLOPS), every task takes all rows and a group of ceil(P / 2) panels.

// CHECK-LABEL: func.func @dynamic_columns
// CHECK-SAME:    (%[[A:[a-zA-Z0-9_]+]]: memref<?x512xf32>
// CHECK:         %[[M:.+]] = memref.dim %[[A]], %{{.+}}
// CHECK:         scf.reduce
// CHECK:         %[[PANELS:.+]] = arith.ceildivsi %{{.+}}, %{{.+}} : index
// CHECK:         arith.minsi
// CHECK-NEXT:    %[[ROWS:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[THREADS:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[MR:.+]] = arith.constant 2 : index
// CHECK-NEXT:    %[[TASKS:.+]] = arith.ceildivsi %[[M]], %[[ROWS]] : index
// CHECK-NEXT:    %[[PER_THREAD:.+]] = arith.ceildivsi %[[TASKS]], %[[THREADS]] : index
// CHECK-NEXT:    %[[TASK_TILES:.+]] = arith.ceildivsi %[[ROWS]], %[[MR]] : index
// CHECK-NEXT:    %[[THREAD_TILES:.+]] = arith.muli %[[PER_THREAD]], %[[TASK_TILES]] : index
// CHECK-NEXT:    %[[BY_ROWS:.+]] = arith.muli %[[THREAD_TILES]], %[[PANELS]] : index
// CHECK-NEXT:    %[[ROW_TILES:.+]] = arith.ceildivsi %[[M]], %[[MR]] : index
// CHECK-NEXT:    %[[SHARE:.+]] = arith.ceildivsi %[[PANELS]], %[[THREADS]] : index
// CHECK-NEXT:    %[[BY_COLUMNS:.+]] = arith.muli %[[ROW_TILES]], %[[SHARE]] : index
// CHECK-NEXT:    %[[MC:.+]] = arith.constant 12 : index
// CHECK-NEXT:    %[[ONE_BLOCK:.+]] = arith.cmpi sle, %[[M]], %[[MC]] : index
// CHECK-NEXT:    %[[FEWER:.+]] = arith.cmpi slt, %[[BY_COLUMNS]], %[[BY_ROWS]] : index
// CHECK-NEXT:    %[[FITS:.+]] = arith.andi %[[ONE_BLOCK]], %[[FEWER]] : i1
// CHECK-NEXT:    %[[ENOUGH_PANELS:.+]] = arith.cmpi sge, %[[PANELS]], %[[THREADS]] : index
// CHECK-NEXT:    %[[SHARED:.+]] = arith.andi %[[FITS]], %[[ENOUGH_PANELS]] : i1
// CHECK-NEXT:    %[[ROW_FLOPS:.+]] = arith.constant 262144 : index
// CHECK-NEXT:    %[[FLOPS:.+]] = arith.muli %[[M]], %[[ROW_FLOPS]] : index
// CHECK-NEXT:    %[[TASK_FLOPS:.+]] = arith.constant 1000000 : index
// CHECK-NEXT:    %[[WORTH:.+]] = arith.divsi %[[FLOPS]], %[[TASK_FLOPS]] : index
// CHECK-NEXT:    %[[PAYS:.+]] = arith.cmpi sge, %[[WORTH]], %[[THREADS]] : index
// CHECK-NEXT:    %[[COLUMNS:.+]] = arith.andi %[[SHARED]], %[[PAYS]] : i1
// CHECK-NEXT:    %[[ALL_ROWS:.+]] = arith.muli %[[ROW_TILES]], %[[MR]] : index
// CHECK-NEXT:    %[[UNIT:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[TASK_ROWS:.+]] = arith.select %[[COLUMNS]], %[[ALL_ROWS]], %[[ROWS]] : index
// CHECK-NEXT:    %[[GROUPS:.+]] = arith.select %[[COLUMNS]], %[[THREADS]], %[[UNIT]] : index
// CHECK-NEXT:    %[[GROUP_PANELS:.+]] = arith.ceildivsi %[[PANELS]], %[[GROUPS]] : index
// CHECK-NEXT:    %[[BLOCKS:.+]] = arith.ceildivsi %[[M]], %[[TASK_ROWS]] : index
// CHECK-NEXT:    arith.muli %[[BLOCKS]], %[[GROUPS]] : index
// CHECK:         "scf.parallel"
// CHECK:           vector.fma

// On one thread there is nothing to balance: one column group, no run-time choice.

// ONE-LABEL: func.func @dynamic_columns
// ONE:         scf.reduce
// ONE:         %[[PANELS:.+]] = arith.ceildivsi %{{.+}}, %{{.+}} : index
// ONE:         arith.minsi
// ONE-NEXT:    %[[ROWS:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// ONE-NEXT:    %[[GROUPS:.+]] = arith.constant 1 : index
// ONE-NEXT:    arith.ceildivsi %[[PANELS]], %[[GROUPS]] : index
// ONE-NOT:     arith.andi
// ONE:         "scf.parallel"
func.func @dynamic_columns(%a: memref<?x512xf32>, %b: memref<512x256xf32>, %c: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<?x512xf32>, memref<512x256xf32>) outs(%c : memref<?x256xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

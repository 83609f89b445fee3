// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=8,32,128,8 vector-length=16 threads=2 shared-micro-kernels=false}' | filecheck %s

// An LSTM step: Z = h @ R^T (8 x 256 x 1024, two tasks of 16 panels), then the gates,
// one generic reading Z as four slices of 256 columns. Each task takes 4 panels of
// every slice (128 units) and then runs the gates on those units, inside its own task:
// one parallel region, no generic left after it. R, an argument of a small-M product,
// is read in place: no packing region before it.

// CHECK-LABEL: func.func @gates
// CHECK-SAME:    (%[[H:[a-zA-Z0-9_]+]]: memref<8x256xf32>, %{{.+}}: memref<256x1024xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<8x256xf32>, %[[C2:[a-zA-Z0-9_]+]]: memref<8x256xf32>)
// CHECK:         %[[I:.+]] = memref.subview %[[Z:.+]][0, 0] [8, 256] [1, 1]
// CHECK:         %[[G:.+]] = memref.subview %[[Z]][0, 768] [8, 256] [1, 1]
// CHECK:         "scf.parallel"
// CHECK-NOT:     "scf.parallel"
// CHECK:           vector.fma
// CHECK:           memref.subview %[[I]][0, %[[U:.+]]] [8, 128] [1, 1]
// CHECK:           memref.subview %[[G]][0, %[[U]]] [8, 128] [1, 1]
// CHECK:           memref.subview %[[C2]][0, %[[U]]] [8, 128] [1, 1]
// CHECK-NEXT:      linalg.generic
// CHECK-SAME:        outs({{.*}} : memref<8x128xf32, strided<[256, 1], offset: ?>>, memref<8x128xf32, strided<[256, 1], offset: ?>>)
// CHECK:           scf.reduce
// CHECK-NEXT:    })
// CHECK-NOT:     linalg.generic
// CHECK:         memref.dealloc %[[Z]]
#mm = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gates(%h: memref<8x256xf32>, %r: memref<256x1024xf32>, %c: memref<8x256xf32>, %c2: memref<8x256xf32>) {
  %z = memref.alloc() {alignment = 64 : i64} : memref<8x1024xf32>
  linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<8x256xf32>, memref<256x1024xf32>) outs(%z : memref<8x1024xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %i = memref.subview %z[0, 0] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1]>>
  %o = memref.subview %z[0, 256] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 256>>
  %f = memref.subview %z[0, 512] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 512>>
  %g = memref.subview %z[0, 768] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 768>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %o, %f, %g, %c : memref<8x256xf32, strided<[1024, 1]>>, memref<8x256xf32, strided<[1024, 1], offset: 256>>, memref<8x256xf32, strided<[1024, 1], offset: 512>>, memref<8x256xf32, strided<[1024, 1], offset: 768>>, memref<8x256xf32>) outs(%c, %c2 : memref<8x256xf32>, memref<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %e: f32, %k: f32, %s: f32, %out: f32, %out2: f32):
    %fc = arith.mulf %e, %s : f32
    %ig = arith.mulf %a, %k : f32
    %n = arith.addf %fc, %ig : f32
    %hh = arith.mulf %b, %n : f32
    linalg.yield %hh, %n : f32, f32
  }
  memref.dealloc %z : memref<8x1024xf32>
  func.return
}

// -----

// The consumer updates the matmul's A in place (the GRU's h): a task would overwrite
// units another task's product still reads. It stays a generic of its own.

// CHECK-LABEL: func.func @updates_a
// CHECK-NOT:     memref<8x128xf32
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}}, %{{.+}} : memref<{{4|8}}x256xf32
#mm = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @updates_a(%h: memref<8x256xf32>, %r: memref<256x1024xf32>, %c: memref<8x256xf32>, %c2: memref<8x256xf32>) {
  %z = memref.alloc() {alignment = 64 : i64} : memref<8x1024xf32>
  linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<8x256xf32>, memref<256x1024xf32>) outs(%z : memref<8x1024xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %i = memref.subview %z[0, 0] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1]>>
  %o = memref.subview %z[0, 256] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 256>>
  %f = memref.subview %z[0, 512] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 512>>
  %g = memref.subview %z[0, 768] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 768>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %o, %f, %g, %h : memref<8x256xf32, strided<[1024, 1]>>, memref<8x256xf32, strided<[1024, 1], offset: 256>>, memref<8x256xf32, strided<[1024, 1], offset: 512>>, memref<8x256xf32, strided<[1024, 1], offset: 768>>, memref<8x256xf32>) outs(%h, %c2 : memref<8x256xf32>, memref<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %e: f32, %k: f32, %s: f32, %out: f32, %out2: f32):
    %fc = arith.mulf %e, %s : f32
    %ig = arith.mulf %a, %k : f32
    %n = arith.addf %fc, %ig : f32
    %hh = arith.mulf %b, %n : f32
    linalg.yield %hh, %n : f32, f32
  }
  memref.dealloc %z : memref<8x1024xf32>
  func.return
}

// -----

// Slices that overlap (one at column 128, of 256): not the same units of every slice.

// CHECK-LABEL: func.func @overlapping_slices
// CHECK-NOT:     memref<8x128xf32
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}}, %{{.+}} : memref<{{4|8}}x256xf32
#mm = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @overlapping_slices(%h: memref<8x256xf32>, %r: memref<256x1024xf32>, %c: memref<8x256xf32>, %c2: memref<8x256xf32>) {
  %z = memref.alloc() {alignment = 64 : i64} : memref<8x1024xf32>
  linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<8x256xf32>, memref<256x1024xf32>) outs(%z : memref<8x1024xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %i = memref.subview %z[0, 0] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1]>>
  %o = memref.subview %z[0, 128] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 128>>
  %f = memref.subview %z[0, 512] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 512>>
  %g = memref.subview %z[0, 768] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 768>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %o, %f, %g, %c : memref<8x256xf32, strided<[1024, 1]>>, memref<8x256xf32, strided<[1024, 1], offset: 128>>, memref<8x256xf32, strided<[1024, 1], offset: 512>>, memref<8x256xf32, strided<[1024, 1], offset: 768>>, memref<8x256xf32>) outs(%c, %c2 : memref<8x256xf32>, memref<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %e: f32, %k: f32, %s: f32, %out: f32, %out2: f32):
    %fc = arith.mulf %e, %s : f32
    %ig = arith.mulf %a, %k : f32
    %n = arith.addf %fc, %ig : f32
    %hh = arith.mulf %b, %n : f32
    linalg.yield %hh, %n : f32, f32
  }
  memref.dealloc %z : memref<8x1024xf32>
  func.return
}

// -----

// Slices of 96 columns: a task's share of a slice (48) is no whole panel.

// CHECK-LABEL: func.func @narrow_slices
// CHECK-NOT:     memref<8x48xf32
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}}, %{{.+}} : memref<{{4|8}}x96xf32
#mm = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @narrow_slices(%h: memref<8x256xf32>, %r: memref<256x960xf32>, %c: memref<8x96xf32>, %c2: memref<8x96xf32>) {
  %z = memref.alloc() {alignment = 64 : i64} : memref<8x960xf32>
  linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<8x256xf32>, memref<256x960xf32>) outs(%z : memref<8x960xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %i = memref.subview %z[0, 0] [8, 96] [1, 1] : memref<8x960xf32> to memref<8x96xf32, strided<[960, 1]>>
  %o = memref.subview %z[0, 96] [8, 96] [1, 1] : memref<8x960xf32> to memref<8x96xf32, strided<[960, 1], offset: 96>>
  %f = memref.subview %z[0, 192] [8, 96] [1, 1] : memref<8x960xf32> to memref<8x96xf32, strided<[960, 1], offset: 192>>
  %g = memref.subview %z[0, 288] [8, 96] [1, 1] : memref<8x960xf32> to memref<8x96xf32, strided<[960, 1], offset: 288>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %o, %f, %g, %c : memref<8x96xf32, strided<[960, 1]>>, memref<8x96xf32, strided<[960, 1], offset: 96>>, memref<8x96xf32, strided<[960, 1], offset: 192>>, memref<8x96xf32, strided<[960, 1], offset: 288>>, memref<8x96xf32>) outs(%c, %c2 : memref<8x96xf32>, memref<8x96xf32>) {
  ^bb0(%a: f32, %b: f32, %e: f32, %k: f32, %s: f32, %out: f32, %out2: f32):
    %fc = arith.mulf %e, %s : f32
    %ig = arith.mulf %a, %k : f32
    %n = arith.addf %fc, %ig : f32
    %hh = arith.mulf %b, %n : f32
    linalg.yield %hh, %n : f32, f32
  }
  memref.dealloc %z : memref<8x960xf32>
  func.return
}

// -----

// The gates, then the copy of h' into its rows of Y: the copy reads only the gates'
// output, through the same map, so each task copies its own 128 units after its gates.

// CHECK-LABEL: func.func @copy_follows
// CHECK-SAME:    (%{{.+}}: memref<8x256xf32>, %{{.+}}: memref<256x1024xf32>, %[[C:[a-zA-Z0-9_]+]]: memref<8x256xf32>, %{{.+}}: memref<8x256xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1024x256xf32>, %[[T:[a-zA-Z0-9_]+]]: index)
// CHECK:         %[[ROWS:.+]] = memref.subview %[[Y]][%[[T]], 0] [8, 256] [1, 1]
// CHECK:         "scf.parallel"
// CHECK:           vector.fma
// CHECK:           memref.subview %[[C]][0, %[[U:.+]]] [8, 128] [1, 1]
// CHECK:           linalg.generic
// CHECK:           %[[H:.+]] = memref.subview %[[C]][0, %[[U]]] [8, 128] [1, 1]
// CHECK-NEXT:      %[[TO:.+]] = memref.subview %[[ROWS]][0, %[[U]]] [8, 128] [1, 1]
// CHECK-NEXT:      linalg.generic
// CHECK-SAME:        ins(%[[H]] : memref<8x128xf32, strided<[256, 1], offset: ?>>) outs(%[[TO]] : memref<8x128xf32, strided<[256, 1], offset: ?>>)
// CHECK:           scf.reduce
// CHECK-NEXT:    })
// CHECK-NOT:     linalg.generic
// CHECK:         memref.dealloc
#mm = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @copy_follows(%h: memref<8x256xf32>, %r: memref<256x1024xf32>, %c: memref<8x256xf32>, %c2: memref<8x256xf32>, %y: memref<1024x256xf32>, %t: index) {
  %z = memref.alloc() {alignment = 64 : i64} : memref<8x1024xf32>
  linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<8x256xf32>, memref<256x1024xf32>) outs(%z : memref<8x1024xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %i = memref.subview %z[0, 0] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1]>>
  %o = memref.subview %z[0, 256] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 256>>
  %f = memref.subview %z[0, 512] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 512>>
  %g = memref.subview %z[0, 768] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 768>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %o, %f, %g, %c : memref<8x256xf32, strided<[1024, 1]>>, memref<8x256xf32, strided<[1024, 1], offset: 256>>, memref<8x256xf32, strided<[1024, 1], offset: 512>>, memref<8x256xf32, strided<[1024, 1], offset: 768>>, memref<8x256xf32>) outs(%c, %c2 : memref<8x256xf32>, memref<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %e: f32, %k: f32, %s: f32, %out: f32, %out2: f32):
    %fc = arith.mulf %e, %s : f32
    %ig = arith.mulf %a, %k : f32
    %n = arith.addf %fc, %ig : f32
    %hh = arith.mulf %b, %n : f32
    linalg.yield %hh, %n : f32, f32
  }
  memref.dealloc %z : memref<8x1024xf32>
  %rows = memref.subview %y[%t, 0] [8, 256] [1, 1] : memref<1024x256xf32> to memref<8x256xf32, strided<[256, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x256xf32>) outs(%rows : memref<8x256xf32, strided<[256, 1], offset: ?>>) {
  ^bb0(%v: f32, %old: f32):
    linalg.yield %v : f32
  }
  func.return
}

// -----

// A generic after the gates that reads Z as well as their output needs columns other
// tasks compute: it stays after the region (and so does what follows it), while the
// gates still run in the tasks.

// CHECK-LABEL: func.func @reads_more
// CHECK:         "scf.parallel"
// CHECK:           memref<8x128xf32
// CHECK:           scf.reduce
// CHECK-NEXT:    })
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}} : memref<8x256xf32, strided<[256, 1], offset: ?>>)
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}} : memref<8x256xf32>)
#mm = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @reads_more(%h: memref<8x256xf32>, %r: memref<256x1024xf32>, %c: memref<8x256xf32>, %c2: memref<8x256xf32>, %y: memref<1024x256xf32>, %t: index) {
  %z = memref.alloc() {alignment = 64 : i64} : memref<8x1024xf32>
  linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<8x256xf32>, memref<256x1024xf32>) outs(%z : memref<8x1024xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %i = memref.subview %z[0, 0] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1]>>
  %o = memref.subview %z[0, 256] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 256>>
  %f = memref.subview %z[0, 512] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 512>>
  %g = memref.subview %z[0, 768] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 768>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %o, %f, %g, %c : memref<8x256xf32, strided<[1024, 1]>>, memref<8x256xf32, strided<[1024, 1], offset: 256>>, memref<8x256xf32, strided<[1024, 1], offset: 512>>, memref<8x256xf32, strided<[1024, 1], offset: 768>>, memref<8x256xf32>) outs(%c, %c2 : memref<8x256xf32>, memref<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %e: f32, %k: f32, %s: f32, %out: f32, %out2: f32):
    %fc = arith.mulf %e, %s : f32
    %ig = arith.mulf %a, %k : f32
    %n = arith.addf %fc, %ig : f32
    %hh = arith.mulf %b, %n : f32
    linalg.yield %hh, %n : f32, f32
  }
  %rows = memref.subview %y[%t, 0] [8, 256] [1, 1] : memref<1024x256xf32> to memref<8x256xf32, strided<[256, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%c, %i : memref<8x256xf32>, memref<8x256xf32, strided<[1024, 1]>>) outs(%rows : memref<8x256xf32, strided<[256, 1], offset: ?>>) {
  ^bb0(%v: f32, %zi: f32, %old: f32):
    %sum = arith.addf %v, %zi : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x256xf32>) outs(%h : memref<8x256xf32>) {
  ^bb0(%v: f32, %old: f32):
    linalg.yield %v : f32
  }
  memref.dealloc %z : memref<8x1024xf32>
  func.return
}

// -----

// A copy of h' into the product's own A (h): another task may still be reading it.

// CHECK-LABEL: func.func @writes_a
// CHECK:         "scf.parallel"
// CHECK:           memref<8x128xf32
// CHECK:           scf.reduce
// CHECK-NEXT:    })
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.+}} : memref<8x256xf32>)
#mm = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @writes_a(%h: memref<8x256xf32>, %r: memref<256x1024xf32>, %c: memref<8x256xf32>, %c2: memref<8x256xf32>, %y: memref<1024x256xf32>, %t: index) {
  %z = memref.alloc() {alignment = 64 : i64} : memref<8x1024xf32>
  linalg.generic {indexing_maps = #mm, iterator_types = ["parallel", "reduction", "parallel"]} ins(%h, %r : memref<8x256xf32>, memref<256x1024xf32>) outs(%z : memref<8x1024xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %i = memref.subview %z[0, 0] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1]>>
  %o = memref.subview %z[0, 256] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 256>>
  %f = memref.subview %z[0, 512] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 512>>
  %g = memref.subview %z[0, 768] [8, 256] [1, 1] : memref<8x1024xf32> to memref<8x256xf32, strided<[1024, 1], offset: 768>>
  linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %o, %f, %g, %c : memref<8x256xf32, strided<[1024, 1]>>, memref<8x256xf32, strided<[1024, 1], offset: 256>>, memref<8x256xf32, strided<[1024, 1], offset: 512>>, memref<8x256xf32, strided<[1024, 1], offset: 768>>, memref<8x256xf32>) outs(%c, %c2 : memref<8x256xf32>, memref<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %e: f32, %k: f32, %s: f32, %out: f32, %out2: f32):
    %fc = arith.mulf %e, %s : f32
    %ig = arith.mulf %a, %k : f32
    %n = arith.addf %fc, %ig : f32
    %hh = arith.mulf %b, %n : f32
    linalg.yield %hh, %n : f32, f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<8x256xf32>) outs(%h : memref<8x256xf32>) {
  ^bb0(%v: f32, %old: f32):
    linalg.yield %v : f32
  }
  memref.dealloc %z : memref<8x1024xf32>
  func.return
}

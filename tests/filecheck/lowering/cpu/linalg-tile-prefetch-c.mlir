// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,32,8,4 vector-length=16 threads=1}' | filecheck %s

// The shared micro-kernel prefetches its C tile for writing before the K loop, when the
// K block is at least 32 deep (shorter loops cannot hide it, and pay for it): for
// each of its MR = 2 rows (the second at min(1, rows - 1), as A's rows), the two
// 64-byte lines of the 32 f32 columns (0 and 16) and the last column (31: a row not
// on a line boundary spans a third line), at C's aligned pointer plus 4 bytes an
// element; `llvm.prefetch` with write = 1, locality = 3 (all cache levels), data = 1.

// CHECK:       func.func private @mlc_micro_kernel_f32_2x32v16(%{{.+}}: memref<?xf32>, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %[[ROWS:[0-9]+]]: index, %{{.+}}: memref<?xf32>, %{{.+}}: index, %[[DEPTH:[0-9]+]]: index, %[[C:[0-9]+]]: memref<?xf32>, %[[COFF:[0-9]+]]: index, %[[CROW:[0-9]+]]: index, %{{.+}}: index, %{{.+}}: i1) attributes {no_inline} {
// CHECK:         %[[LAST:.+]] = arith.subi %[[ROWS]], %{{.+}} : index
// CHECK:         %[[DEEP:.+]] = arith.cmpi sge, %[[DEPTH]], %{{[0-9]+}} : index
// CHECK:         scf.if %[[DEEP]] {
// CHECK:         %[[BASE:.+]] = "memref.extract_aligned_pointer_as_index"(%[[C]]) : (memref<?xf32>) -> index
// CHECK:         %[[B0:.+]] = arith.muli %[[COFF]], %[[FOUR:.+]] : index
// CHECK:         %[[A0:.+]] = arith.addi %[[BASE]], %[[B0]] : index
// CHECK:         %[[I0:.+]] = arith.index_cast %[[A0]] : index to i64
// CHECK:         %[[P0:.+]] = llvm.inttoptr %[[I0]] : i64 to !llvm.ptr
// CHECK:         %[[W:.+]] = arith.constant 1 : i32
// CHECK:         %[[L:.+]] = arith.constant 3 : i32
// CHECK:         llvm.call_intrinsic "llvm.prefetch.p0"(%[[P0]], %[[W]], %[[L]], %{{.+}}) : (!llvm.ptr, i32, i32, i32) -> ()
// CHECK:         arith.constant 16 : index
// CHECK:         llvm.call_intrinsic "llvm.prefetch.p0"
// CHECK:         arith.constant 31 : index
// CHECK:         llvm.call_intrinsic "llvm.prefetch.p0"
// CHECK:         %[[R1:.+]] = arith.minsi %{{.+}}, %[[LAST]] : index
// CHECK:         %[[O1:.+]] = arith.muli %[[R1]], %[[CROW]] : index
// CHECK:         arith.addi %[[COFF]], %[[O1]] : index
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.prefetch.p0"
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         }
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         scf.for
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         func.return
// CHECK-LABEL: func.func @wide
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         func.call @mlc_micro_kernel_f32_2x32v16(

func.func @wide(%a: memref<8x16xf32>, %b: memref<16x64xf32>, %c: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<16x64xf32>) outs(%c : memref<8x64xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// f64: 8 bytes an element, the 32 columns' 256 bytes are four lines (columns 0, 8, 16
// and 24) and the last column, five prefetches a row.

// CHECK:       func.func private @mlc_micro_kernel_f64_2x32v16(
// CHECK:         "memref.extract_aligned_pointer_as_index"(%{{.+}}) : (memref<?xf64>) -> index
// CHECK:         arith.constant 8 : index
// CHECK-COUNT-10: llvm.call_intrinsic "llvm.prefetch.p0"
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         scf.for

func.func @f64(%a: memref<8x16xf64>, %b: memref<16x64xf64>, %c: memref<8x64xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf64>, memref<16x64xf64>) outs(%c : memref<8x64xf64>) {
  ^bb0(%p: f64, %q: f64, %r: f64):
    %m = arith.mulf %p, %q : f64
    %s = arith.addf %r, %m : f64
    linalg.yield %s : f64
  }
  func.return
}

// -----

// No shared micro-kernel, no prefetch: C a strided view keeps the micro-kernel
// inline, and a matmul of at most 4 columns runs as plain loops.

// CHECK-NOT:   llvm.call_intrinsic
// CHECK-LABEL: func.func @strided_c
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         vector.fma
// CHECK-NOT:     llvm.call_intrinsic

func.func @strided_c(%a: memref<4x6xf32>, %b: memref<6x32xf32>, %wide: memref<4x64xf32>) {
  %c = memref.subview %wide[0, 32] [4, 32] [1, 1] : memref<4x64xf32> to memref<4x32xf32, strided<[64, 1], offset: 32>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<4x6xf32>, memref<6x32xf32>) outs(%c : memref<4x32xf32, strided<[64, 1], offset: 32>>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// CHECK-NOT:   llvm.call_intrinsic
// CHECK-LABEL: func.func @narrow
// CHECK-NOT:     llvm.call_intrinsic

func.func @narrow(%a: memref<8x16xf32>, %b: memref<16x3xf32>, %c: memref<8x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<8x16xf32>, memref<16x3xf32>) outs(%c : memref<8x3xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

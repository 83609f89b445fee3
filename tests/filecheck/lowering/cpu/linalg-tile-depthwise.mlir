// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=1}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=1}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A depthwise convolution (stride 2, a fused relu, as convert-ml-to-linalg and
// linalg-fuse-elementwise build it): a parallel loop over (n, channel), the channel's
// nine weights loaded once, then each block of output columns summed over the
// unrolled taps in a vector (each tap's stride-2 read: two masked loads and a shuffle
// of their even lanes), stored once; the relu then runs over the finished rows. Rows
// of 5 columns: not a flat image (below).

// CHECK-LABEL: func.func @depthwise_relu
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x4x7x11xf32>, %[[W:[a-zA-Z0-9_]+]]: memref<4x3x3xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x4x3x5xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         "scf.parallel"
// CHECK-COUNT-9:   memref.load %[[W]]
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[ACC:.+]] = vector.maskedload %[[Y]]
// CHECK:               %[[E:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:          %[[O:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:          %[[V:.+]] = vector.shuffle %[[E]], %[[O]] [0, 2, 4, 6
// CHECK-NEXT:          vector.fma %[[V]], %{{.+}}, %[[ACC]]
// CHECK-COUNT-8:       vector.fma
// CHECK:               vector.maskedstore %[[Y]]
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[R:.+]] = arith.maximumf
// CHECK-NEXT:          memref.store %[[R]], %[[Y]]
// CHECK-NOT:     linalg.generic

// LOC-LABEL:   func.func @depthwise_relu
// LOC:           "scf.parallel"
// LOC:           memref.store {{.*}} loc("model.py":4:2)
func.func @depthwise_relu(%x: memref<1x4x7x11xf32>, %w: memref<4x3x3xf32>, %y: memref<1x4x3x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d5 * 2) + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x4x7x11xf32>, memref<4x3x3xf32>) outs(%y : memref<1x4x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %c, %m fastmath<reassoc,contract> : f32
    %two = arith.constant 2 : index
    %i3 = linalg.index 3 : index
    %l3 = arith.cmpi eq, %i3, %two : index
    %two2 = arith.constant 2 : index
    %i4 = linalg.index 4 : index
    %l4 = arith.cmpi eq, %i4, %two2 : index
    %last = arith.andi %l3, %l4 : i1
    %r = scf.if %last -> (f32) {
      %zero = arith.constant 0.000000e+00 : f32
      %relu = arith.maximumf %s, %zero : f32
      scf.yield %relu : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  } loc("model.py":4:2)
  func.return
}

// -----

// The same with rows of 4 (a power of two): the channel is a flat image in blocks of
// two output rows (8 lanes). Each tap reads 8 pixels of each of the two image rows
// under the block (a masked load each, the first at the tap's flat offset) and takes
// their even lanes; the last block's second output row does not exist, so its half is
// the zero splat. The relu applies to each block's vector before its store: no scalar
// pass over the channel after.

// CHECK-LABEL: func.func @depthwise_image_stride2
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x4x7x9xf32>, %{{.+}}: memref<4x3x3xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x4x3x4xf32>)
// CHECK:         "scf.parallel"
// CHECK:           %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-NOT:       scf.for
// CHECK:           %[[ALL:.+]] = arith.constant dense<true> : vector<8xi1>
// CHECK:           %[[ACC:.+]] = vector.maskedload %[[Y]][{{.*}}], %[[ALL]], %[[ZERO]]
// CHECK:           %[[E:.+]] = vector.maskedload %[[X]]
// CHECK:           %[[O:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:      %[[V:.+]] = vector.shuffle %[[E]], %[[O]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK-NEXT:      vector.fma %[[V]], %{{.+}}, %[[ACC]]
// CHECK-COUNT-8:   vector.fma
// CHECK-NEXT:      %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[ZV:.+]] = vector.broadcast %[[Z]] : f32 to vector<8xf32>
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %{{.+}}, %[[ZV]] : vector<8xf32>
// CHECK-NEXT:      vector.maskedstore %[[Y]][{{.*}}], %[[ALL]], %[[R]]
// CHECK:           %[[HALF:.+]] = arith.constant dense<[true, true, true, true, false, false, false, false]> : vector<8xi1>
// CHECK:           %[[E2:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:      vector.shuffle %[[E2]], %[[ZERO]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK-COUNT-9:   vector.fma
// CHECK:           %[[R2:.+]] = arith.maximumf %{{.+}} : vector<8xf32>
// CHECK-NEXT:      vector.maskedstore %[[Y]][{{.*}}], %[[HALF]], %[[R2]]
// CHECK-NOT:       scf.for
// CHECK:         func.return
func.func @depthwise_image_stride2(%x: memref<1x4x7x9xf32>, %w: memref<4x3x3xf32>, %y: memref<1x4x3x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d5 * 2) + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x4x7x9xf32>, memref<4x3x3xf32>) outs(%y : memref<1x4x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %c, %m fastmath<reassoc,contract> : f32
    %two = arith.constant 2 : index
    %i3 = linalg.index 3 : index
    %l3 = arith.cmpi eq, %i3, %two : index
    %two2 = arith.constant 2 : index
    %i4 = linalg.index 4 : index
    %l4 = arith.cmpi eq, %i4, %two2 : index
    %last = arith.andi %l3, %l4 : i1
    %r = scf.if %last -> (f32) {
      %zero = arith.constant 0.000000e+00 : f32
      %relu = arith.maximumf %s, %zero : f32
      scf.yield %relu : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// -----

// conv1d depthwise with a dynamic batch and width (1 x 3 taps, dilation 2): the
// parallel loop runs over N * C, the loop of vector blocks (x's last dim read at unit
// stride) to the output's run-time width, each block masked to the row and the image.

// CHECK-LABEL: func.func @depthwise_1d_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<?x5x?xf64>, %[[W:[a-zA-Z0-9_]+]]: memref<5x3xf64>, %[[Y:[a-zA-Z0-9_]+]]: memref<?x5x?xf64>)
// CHECK-DAG:     %[[N:.+]] = memref.dim %[[Y]], %{{.+}} : memref<?x5x?xf64>
// CHECK-DAG:     %[[OW:.+]] = memref.dim %[[Y]], %{{.+}} : memref<?x5x?xf64>
// CHECK:         %[[T:.+]] = arith.muli %[[N]], %{{.+}} : index
// CHECK:         "scf.parallel"(%{{.+}}, %[[T]], %{{.+}})
// CHECK-COUNT-3:   memref.load %[[W]]
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[OW]] step
// CHECK:             vector.maskedload %[[Y]]
// CHECK-COUNT-3:     vector.maskedload %[[X]]
// CHECK:             vector.maskedstore %[[Y]]
// CHECK-NOT:     linalg.generic
func.func @depthwise_1d_dynamic(%x: memref<?x5x?xf64>, %w: memref<5x3xf64>, %y: memref<?x5x?xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, (d3 + (d2 * 2)))>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : memref<?x5x?xf64>, memref<5x3xf64>) outs(%y : memref<?x5x?xf64>) {
  ^bb0(%a: f64, %b: f64, %c: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %c, %m : f64
    linalg.yield %s : f64
  }
  func.return
}

// -----

// Stride 3 (beyond the vector rows' strides 1 and 2) on rows of 16 columns
// (MIN_STRIDED_ROW): one sweep of the row per tap, each reading x at one stride (what
// LLVM vectorises), then one sweep for the epilogue.

// CHECK-LABEL: func.func @depthwise_strided_row
// CHECK:         "scf.parallel"
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               arith.mulf
// CHECK-NOT:           arith.maximumf
// CHECK:             scf.for
// CHECK:               arith.mulf
// CHECK-NOT:           arith.maximumf
// CHECK:             scf.for
// CHECK:               arith.mulf
// CHECK-NOT:           arith.maximumf
// CHECK:             scf.for
// CHECK:               arith.mulf
// CHECK-NOT:           arith.maximumf
// CHECK:             scf.for
// CHECK-NOT:           arith.mulf
// CHECK:               arith.maximumf
func.func @depthwise_strided_row(%x: memref<1x2x3x49xf32>, %w: memref<2x1x4xf32>, %y: memref<1x2x3x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), ((d5 * 3) + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x3x49xf32>, memref<2x1x4xf32>) outs(%y : memref<1x2x3x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %c, %m fastmath<reassoc,contract> : f32
    %z = arith.constant 0 : index
    %i3 = linalg.index 3 : index
    %l3 = arith.cmpi eq, %i3, %z : index
    %three = arith.constant 3 : index
    %i4 = linalg.index 4 : index
    %l4 = arith.cmpi eq, %i4, %three : index
    %last = arith.andi %l3, %l4 : i1
    %r = scf.if %last -> (f32) {
      %zero = arith.constant 0.000000e+00 : f32
      %relu = arith.maximumf %s, %zero : f32
      scf.yield %relu : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// -----

// Left to the generic loops: a kernel of dynamic size, one of more than 64 taps
// (9 x 9), and a window whose weights are not one per channel (all share one).

// CHECK-LABEL: func.func @not_depthwise
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     "scf.parallel"
func.func @not_depthwise(%x: memref<1x4x9x9xf32>, %wd: memref<4x?x3xf32>, %yd: memref<1x4x?x7xf32>, %w9: memref<4x9x9xf32>, %y9: memref<1x4x1x1xf32>, %wc: memref<3x3xf32>, %yc: memref<1x4x7x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %wd : memref<1x4x9x9xf32>, memref<4x?x3xf32>) outs(%yd : memref<1x4x?x7xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w9 : memref<1x4x9x9xf32>, memref<4x9x9xf32>) outs(%y9 : memref<1x4x1x1xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %wc : memref<1x4x9x9xf32>, memref<3x3xf32>) outs(%yc : memref<1x4x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A padded depthwise convolution with a bias (stride 1, pads 1, 72 output pixels: more
// than one flat image of `MAX_IMAGE`, below): the zero-filled
// copy of the image and the bias broadcast go. The image's last dim is read at unit
// stride, so each channel runs in vector blocks of columns: the accumulators start
// at the bias splat, each tap's read is a masked load of %x itself (the lanes inside
// the image's row; none where the tap's row lies outside it), and the block is
// stored masked to the row.

// CHECK-LABEL: func.func @padded_bias
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x4x9x8xf32>, %{{.+}}: memref<4x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<4xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x4x9x8xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.subview
// CHECK-NOT:     linalg.generic
// CHECK:         "scf.parallel"
// CHECK:           %[[BIAS:.+]] = memref.load %[[B]]
// CHECK:           %[[ACC:.+]] = vector.broadcast %[[BIAS]]
// CHECK:           scf.for
// CHECK-COUNT-3:     arith.xori {{.*}} : vector<{{[0-9]+}}xi1>
// CHECK:             scf.for
// CHECK:               arith.cmpi ult
// CHECK:               %[[MASK:.+]] = arith.select {{.*}} : vector<{{[0-9]+}}xi1>
// CHECK-NEXT:          %[[V:.+]] = vector.maskedload %[[X]][{{.*}}], %[[MASK]]
// CHECK-NEXT:          vector.fma %[[V]], %{{.+}}, %[[ACC]]
// CHECK-COUNT-8:       vector.fma
// CHECK-NEXT:          vector.maskedstore %[[Y]]
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc

// LOC-LABEL:   func.func @padded_bias
// LOC:           vector.maskedstore {{.*}} loc("model.py":7:2)
func.func @padded_bias(%x: memref<1x4x9x8xf32>, %w: memref<4x3x3xf32>, %b: memref<4xf32>, %y: memref<1x4x9x8xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x4x11x10xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x4x11x10xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 4, 9, 8] [1, 1, 1, 1] : memref<1x4x11x10xf32> to memref<1x4x9x8xf32, strided<[440, 110, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x4x9x8xf32>) outs(%v : memref<1x4x9x8xf32, strided<[440, 110, 10, 1], offset: 11>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<4xf32>) outs(%y : memref<1x4x9x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x4x11x10xf32>, memref<4x3x3xf32>) outs(%y : memref<1x4x9x8xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %d, %m : f32
    linalg.yield %s : f32
  } loc("model.py":7:2)
  memref.dealloc %p : memref<1x4x11x10xf32>
  func.return
}

// -----

// The same on a 2x3 image (6 pixels): the channel is one flat image in one 8-lane
// block. Each tap is one masked load at the flat offset `row * 3 + column` of its
// window (-4 for the top-left tap), its mask a constant: the pixels whose tap lies
// inside the image (for the top-left one, the second row's last two); the store masks
// the 6 pixels.

// CHECK-LABEL: func.func @padded_image
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x4x2x3xf32>, %{{.+}}: memref<4x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<4xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x4x2x3xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         "scf.parallel"
// CHECK:           %[[BIAS:.+]] = memref.load %[[B]]
// CHECK:           %[[ACC:.+]] = vector.broadcast %[[BIAS]] : f32 to vector<8xf32>
// CHECK-NOT:       scf.for
// CHECK:           %[[STORED:.+]] = arith.constant dense<[true, true, true, true, true, true, false, false]> : vector<8xi1>
// CHECK:           %[[AT:.+]] = arith.constant -4 : index
// CHECK-NEXT:      %[[MASK:.+]] = arith.constant dense<[false, false, false, false, true, true, false, false]> : vector<8xi1>
// CHECK-NEXT:      %[[V:.+]] = vector.maskedload %[[X]][%{{.+}}, %{{.+}}, %{{.+}}, %[[AT]]], %[[MASK]]
// CHECK-NEXT:      vector.fma %[[V]], %{{.+}}, %[[ACC]]
// CHECK-COUNT-8:   vector.fma
// CHECK-NEXT:      vector.maskedstore %[[Y]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}], %[[STORED]]
// CHECK-NOT:       scf.for
// CHECK:         func.return
func.func @padded_image(%x: memref<1x4x2x3xf32>, %w: memref<4x3x3xf32>, %b: memref<4xf32>, %y: memref<1x4x2x3xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x4x4x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x4x4x5xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 4, 2, 3] [1, 1, 1, 1] : memref<1x4x4x5xf32> to memref<1x4x2x3xf32, strided<[80, 20, 5, 1], offset: 6>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x4x2x3xf32>) outs(%v : memref<1x4x2x3xf32, strided<[80, 20, 5, 1], offset: 6>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<4xf32>) outs(%y : memref<1x4x2x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x4x4x5xf32>, memref<4x3x3xf32>) outs(%y : memref<1x4x2x3xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %d, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<1x4x4x5xf32>
  func.return
}

// -----

// The image and the bias are buffers of the function's own, freed once the padded
// copy and the broadcast have read them (bufferize frees a buffer after its last
// use): the kernel reads both itself, later, so their frees move after it.

// CHECK-LABEL: func.func @padded_frees_move
// CHECK:         %[[X:.+]] = memref.alloc() {{.*}} : memref<1x2x5x6xf32>
// CHECK:         %[[B:.+]] = memref.alloc() {{.*}} : memref<2xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         "scf.parallel"
// CHECK:           memref.load %[[B]]
// CHECK:           vector.maskedload %[[X]]
// CHECK:         memref.dealloc %[[X]]
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NOT:     memref.dealloc
// CHECK:         func.return
func.func @padded_frees_move(%in: memref<1x2x5x6xf32>, %bin: memref<2xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x5x6xf32>) {
  %x = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x6xf32>
  "memref.copy"(%in, %x) : (memref<1x2x5x6xf32>, memref<1x2x5x6xf32>) -> ()
  %b = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
  "memref.copy"(%bin, %b) : (memref<2xf32>, memref<2xf32>) -> ()
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x7x8xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 5, 6] [1, 1, 1, 1] : memref<1x2x7x8xf32> to memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x5x6xf32>) outs(%v : memref<1x2x5x6xf32, strided<[112, 56, 8, 1], offset: 9>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  memref.dealloc %x : memref<1x2x5x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<2xf32>) outs(%y : memref<1x2x5x6xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  memref.dealloc %b : memref<2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x7x8xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x5x6xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %d, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<1x2x7x8xf32>
  func.return
}

// -----

// Not absorbed: the bias is written between its broadcast and the convolution, which
// would read it after the write; the broadcast stays and the kernel starts at y.

// CHECK-LABEL: func.func @bias_written_between
// CHECK-SAME:    (%{{.+}}: memref<1x2x5x6xf32>, %{{.+}}: memref<2x3x3xf32>, %[[B:[a-zA-Z0-9_]+]]: memref<2xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x2x3x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[B]] : memref<2xf32>) outs(%[[Y]] : memref<1x2x3x4xf32>)
// CHECK:         memref.store %{{.+}}, %[[B]]
// CHECK:         "scf.parallel"
// CHECK:           vector.maskedload %[[Y]]
func.func @bias_written_between(%x: memref<1x2x5x6xf32>, %w: memref<2x3x3xf32>, %b: memref<2xf32>, %y: memref<1x2x3x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<2xf32>) outs(%y : memref<1x2x3x4xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.000000e+00 : f32
  memref.store %one, %b[%c0] : memref<2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x5x6xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x3x4xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %d, %m : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Padded at stride 3 (x's last dim read at stride 3: the scalar loops): the copy goes
// and the kernel reads %x itself; a row of interior rows runs a masked left border,
// an unchecked interior and a masked right border, a border row is masked throughout.

// CHECK-LABEL: func.func @padded_stride3
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x2x5x9xf32>, %{{.+}}: memref<2x3x3xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x2x3x3xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.generic
// CHECK:         "scf.parallel"
// CHECK:           scf.for
// CHECK:             scf.if
// CHECK:               scf.for
// CHECK:                 arith.cmpi ult
// CHECK:                 memref.load %[[X]]
// CHECK:                 arith.select
// CHECK:               scf.for
// CHECK-NOT:             arith.select
// CHECK:                 memref.store {{.*}}, %[[Y]]
// CHECK:               scf.for
// CHECK:                 arith.select
// CHECK:             } else {
// CHECK:               scf.for
// CHECK:                 arith.select
// CHECK-NOT:     linalg.generic
func.func @padded_stride3(%x: memref<1x2x5x9xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x3x3xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x7x11xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x7x11xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 5, 9] [1, 1, 1, 1] : memref<1x2x7x11xf32> to memref<1x2x5x9xf32, strided<[154, 77, 11, 1], offset: 12>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x5x9xf32>) outs(%v : memref<1x2x5x9xf32, strided<[154, 77, 11, 1], offset: 12>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d5 * 3) + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x7x11xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x3x3xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %d, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %p : memref<1x2x7x11xf32>
  func.return
}

// -----

// Not absorbed: the padded buffer is also read after the convolution (here copied
// out), so its fill and copy stay and the kernel reads it.

// CHECK-LABEL: func.func @padded_read_twice
// CHECK-SAME:    (%{{.+}}: memref<1x2x4x4xf32>, %{{.+}}: memref<2x3x3xf32>, %{{.+}}: memref<1x2x4x4xf32>, %[[Q:[a-zA-Z0-9_]+]]: memref<1x2x6x6xf32>)
// CHECK:         %[[P:.+]] = memref.alloc
// CHECK:         linalg.generic
// CHECK:         memref.subview %[[P]]
// CHECK:         linalg.generic
// CHECK:         "scf.parallel"
// CHECK:           vector.maskedload %[[P]]
// CHECK:         "memref.copy"(%[[P]], %[[Q]])
func.func @padded_read_twice(%x: memref<1x2x4x4xf32>, %w: memref<2x3x3xf32>, %y: memref<1x2x4x4xf32>, %q: memref<1x2x6x6xf32>) {
  %p = memref.alloc() {alignment = 64 : i64} : memref<1x2x6x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%p : memref<1x2x6x6xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.000000e+00 : f32
    linalg.yield %z : f32
  }
  %v = memref.subview %p[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x2x6x6xf32> to memref<1x2x4x4xf32, strided<[72, 36, 6, 1], offset: 7>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x4x4xf32>) outs(%v : memref<1x2x4x4xf32, strided<[72, 36, 6, 1], offset: 7>>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x6x6xf32>, memref<2x3x3xf32>) outs(%y : memref<1x2x4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %d, %m : f32
    linalg.yield %s : f32
  }
  "memref.copy"(%p, %q) : (memref<1x2x6x6xf32>, memref<1x2x6x6xf32>) -> ()
  memref.dealloc %p : memref<1x2x6x6xf32>
  func.return
}

// -----

// Max pooling is the depthwise nest without weights: each window element combined
// into y by `maximumf`, in vectors along the row (stride 2: two reads, even lanes);
// the padded copy is absorbed, a read outside the image giving the lowest value.

// CHECK-LABEL: func.func @max_pool_padded
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x2x6x6xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x2x3x3xf32>)
// CHECK-NOT:     memref<1x2x8x8xf32>
// CHECK:         "scf.parallel"
// CHECK:           %[[LOWEST:.+]] = arith.constant 0xff800000 : f32
// CHECK:           %[[OUTSIDE:.+]] = vector.broadcast %[[LOWEST]] : f32 to vector<4xf32>
// CHECK:               %[[ACC:.+]] = vector.maskedload %[[Y]][{{.*}}], %{{.*}}, %[[OUTSIDE]]
// CHECK:               %[[EVEN:.+]] = vector.maskedload %[[X]][{{.*}}], %{{.*}}, %[[OUTSIDE]]
// CHECK:               %[[ODD:.+]] = vector.maskedload %[[X]][{{.*}}], %{{.*}}, %[[OUTSIDE]]
// CHECK:               %[[ROW:.+]] = vector.shuffle %[[EVEN]], %[[ODD]] [0, 2, 4, 6]
// CHECK:               arith.maximumf %[[ACC]], %[[ROW]] : vector<4xf32>
// CHECK-COUNT-8:       arith.maximumf {{.*}} : vector<4xf32>
// CHECK:               vector.maskedstore %[[Y]]
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref<1x2x8x8xf32>

func.func @max_pool_padded(%x: memref<1x2x6x6xf32>, %y: memref<1x2x3x3xf32>) {
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x2x8x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%padded : memref<1x2x8x8xf32>) {
  ^bb0(%o: f32):
    %lowest = arith.constant 0xff800000 : f32
    linalg.yield %lowest : f32
  }
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 2, 6, 6] [1, 1, 1, 1] : memref<1x2x8x8xf32> to memref<1x2x6x6xf32, strided<[128, 64, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x6x6xf32>) outs(%inner : memref<1x2x6x6xf32, strided<[128, 64, 8, 1], offset: 9>>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %window = memref.alloc() {alignment = 64 : i64} : memref<3x3xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d4 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%padded, %window : memref<1x2x8x8xf32>, memref<3x3xf32>) outs(%y : memref<1x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %window : memref<3x3xf32>
  memref.dealloc %padded : memref<1x2x8x8xf32>
  func.return
}

// -----

// The output filled with the lowest value just before the pooling (as
// convert-ml-to-linalg starts a max pooling): the fill is absorbed, the accumulators
// start at a splat of that value instead of a load of y, and no generic is left.

// CHECK-LABEL: func.func @max_pool_filled
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x2x7x7xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x2x3x3xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         "scf.parallel"
// CHECK:           %[[LOWEST:.+]] = arith.constant 0xff800000 : f32
// CHECK:           %[[START:.+]] = vector.broadcast %[[LOWEST]] : f32 to vector<4xf32>
// CHECK-NOT:           vector.maskedload %[[Y]]
// CHECK:               %[[EVEN:.+]] = vector.maskedload %[[X]]
// CHECK:               %[[ODD:.+]] = vector.maskedload %[[X]]
// CHECK:               %[[ROW:.+]] = vector.shuffle %[[EVEN]], %[[ODD]] [0, 2, 4, 6]
// CHECK:               arith.maximumf %[[START]], %[[ROW]] : vector<4xf32>
// CHECK-COUNT-8:       arith.maximumf {{.*}} : vector<4xf32>
// CHECK:               vector.maskedstore %[[Y]]
// CHECK-NOT:     linalg.generic

func.func @max_pool_filled(%x: memref<1x2x7x7xf32>, %y: memref<1x2x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x2x3x3xf32>) {
  ^bb0(%o: f32):
    %lowest = arith.constant 0xff800000 : f32
    linalg.yield %lowest : f32
  }
  %window = memref.alloc() {alignment = 64 : i64} : memref<3x3xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d4 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%x, %window : memref<1x2x7x7xf32>, memref<3x3xf32>) outs(%y : memref<1x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %window : memref<3x3xf32>
  func.return
}

// -----

// Not absorbed: y is read between its fill and the pooling (the kernel must see the
// written values), so the fill stays and the accumulators start at a load of y.

// CHECK-LABEL: func.func @max_pool_fill_read
// CHECK:         linalg.generic
// CHECK:         memref.copy
// CHECK:         "scf.parallel"
// CHECK:               vector.maskedload %{{.+}} : memref<1x2x3x3xf32>

func.func @max_pool_fill_read(%x: memref<1x2x7x7xf32>, %y: memref<1x2x3x3xf32>, %z: memref<1x2x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x2x3x3xf32>) {
  ^bb0(%o: f32):
    %lowest = arith.constant 0xff800000 : f32
    linalg.yield %lowest : f32
  }
  "memref.copy"(%y, %z) : (memref<1x2x3x3xf32>, memref<1x2x3x3xf32>) -> ()
  %window = memref.alloc() {alignment = 64 : i64} : memref<3x3xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d4 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%x, %window : memref<1x2x7x7xf32>, memref<3x3xf32>) outs(%y : memref<1x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %window : memref<3x3xf32>
  func.return
}

// -----

// An epilogue reading a value that is the same for the whole channel (a Clip's upper
// bound): it is loaded once per channel, before the epilogue's loops, not next to each
// store into y (which kept LLVM from vectorising them).

// CHECK-LABEL: func.func @clip_bound_hoisted
// CHECK-SAME:    (%{{.+}}: memref<1x4x7x11xf32>, %{{.+}}: memref<4x3x3xf32>, %[[HI:[a-zA-Z0-9_]+]]: memref<f32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x4x3x5xf32>)
// CHECK:         "scf.parallel"
// CHECK:           vector.maskedstore %[[Y]]
// CHECK:           %[[BOUND:.+]] = memref.load %[[HI]][] : memref<f32>
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK-NOT:           memref.load %[[HI]]
// CHECK:               arith.minimumf %{{.+}}, %[[BOUND]] : f32
func.func @clip_bound_hoisted(%x: memref<1x4x7x11xf32>, %w: memref<4x3x3xf32>, %hi: memref<f32>, %y: memref<1x4x3x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d5 * 2) + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> ()>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w, %hi : memref<1x4x7x11xf32>, memref<4x3x3xf32>, memref<f32>) outs(%y : memref<1x4x3x5xf32>) {
  ^bb0(%a: f32, %b: f32, %h: f32, %c: f32):
    %m = arith.mulf %a, %b fastmath<reassoc,contract> : f32
    %s = arith.addf %c, %m fastmath<reassoc,contract> : f32
    %two = arith.constant 2 : index
    %i3 = linalg.index 3 : index
    %l3 = arith.cmpi eq, %i3, %two : index
    %two2 = arith.constant 2 : index
    %i4 = linalg.index 4 : index
    %l4 = arith.cmpi eq, %i4, %two2 : index
    %last = arith.andi %l3, %l4 : i1
    %r = scf.if %last -> (f32) {
      %clip = arith.minimumf %s, %h : f32
      scf.yield %clip : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=1}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=1}' --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A depthwise convolution (stride 2, a fused relu, as convert-ml-to-linalg and
// linalg-fuse-elementwise build it): a parallel loop over (n, channel), the channel's
// nine weights loaded once, then each output element summed over the unrolled taps
// in a register, the relu applied and stored once.

// CHECK-LABEL: func.func @depthwise_relu
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x4x7x9xf32>, %[[W:[a-zA-Z0-9_]+]]: memref<4x3x3xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x4x3x4xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         "scf.parallel"
// CHECK-COUNT-9:   memref.load %[[W]]
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[ACC:.+]] = memref.load %[[Y]]
// CHECK:               memref.load %[[X]]
// CHECK:               arith.mulf
// CHECK-NEXT:          arith.addf %[[ACC]],
// CHECK-COUNT-8:       arith.addf
// CHECK:               %[[R:.+]] = arith.maximumf
// CHECK-NEXT:          memref.store %[[R]], %[[Y]]
// CHECK-NOT:     linalg.generic

// LOC-LABEL:   func.func @depthwise_relu
// LOC:           "scf.parallel"
// LOC:           memref.store {{.*}} loc("model.py":4:2)
func.func @depthwise_relu(%x: memref<1x4x7x9xf32>, %w: memref<4x3x3xf32>, %y: memref<1x4x3x4xf32>) {
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
  } loc("model.py":4:2)
  func.return
}

// -----

// conv1d depthwise with a dynamic batch and width (1 x 3 taps, dilation 2): the
// parallel loop runs over N * C, the row loop to the output's run-time width.

// CHECK-LABEL: func.func @depthwise_1d_dynamic
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<?x5x?xf64>, %[[W:[a-zA-Z0-9_]+]]: memref<5x3xf64>, %[[Y:[a-zA-Z0-9_]+]]: memref<?x5x?xf64>)
// CHECK-DAG:     %[[N:.+]] = memref.dim %[[Y]], %{{.+}} : memref<?x5x?xf64>
// CHECK-DAG:     %[[OW:.+]] = memref.dim %[[Y]], %{{.+}} : memref<?x5x?xf64>
// CHECK:         %[[T:.+]] = arith.muli %[[N]], %{{.+}} : index
// CHECK:         "scf.parallel"(%{{.+}}, %[[T]], %{{.+}})
// CHECK-COUNT-3:   memref.load %[[W]]
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[OW]]
// CHECK-COUNT-3:     arith.mulf
// CHECK:             memref.store
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

// Stride 2 on rows of 16 columns (MIN_STRIDED_ROW): one sweep of the row per tap, each
// reading x at one stride (what LLVM vectorises), then one sweep for the epilogue.

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
func.func @depthwise_strided_row(%x: memref<1x2x3x34xf32>, %w: memref<2x1x4xf32>, %y: memref<1x2x3x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), ((d5 * 2) + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x3x34xf32>, memref<2x1x4xf32>) outs(%y : memref<1x2x3x16xf32>) {
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

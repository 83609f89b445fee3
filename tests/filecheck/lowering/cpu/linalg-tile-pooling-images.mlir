// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{threads=1}' | filecheck %s

// A 3x3 stride-2 max pooling of an 8x8 image, its padded copy absorbed: each block of
// two output rows (8 lanes) loads the image rows under it once from their first column
// (a row shared with the block before is not loaded again), combines the rows under
// each output row, then takes each column offset's lanes with one shuffle; the offset
// -1 puts the lowest value into the lanes left of the image with a second one.

// CHECK-LABEL: func.func @max_pool_image
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x2x8x8xf32>, %[[Y:[a-zA-Z0-9_]+]]: memref<1x2x4x4xf32>)
// CHECK-NOT:     memref<1x2x10x10xf32>
// CHECK:         "scf.parallel"
// CHECK:           %[[LOWEST:.+]] = vector.broadcast %{{.+}} : f32 to vector<8xf32>
// CHECK:           %[[R0:.+]] = vector.maskedload %[[X]][{{.*}}], %{{.+}}, %[[LOWEST]]
// CHECK:           %[[R1:.+]] = vector.maskedload %[[X]][{{.*}}], %{{.+}}, %[[LOWEST]]
// CHECK-NEXT:      %[[TOP:.+]] = arith.maximumf %[[R0]], %[[R1]] : vector<8xf32>
// CHECK:           %[[R2:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:      %[[B1:.+]] = arith.maximumf %[[R1]], %[[R2]] : vector<8xf32>
// CHECK:           %[[R3:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:      %[[BOTTOM:.+]] = arith.maximumf %[[B1]], %[[R3]] : vector<8xf32>
// CHECK-NEXT:      %[[LEFT:.+]] = vector.shuffle %[[TOP]], %[[BOTTOM]] [0, 1, 3, 5, 8, 9, 11, 13]
// CHECK-NEXT:      %[[PADDED:.+]] = vector.shuffle %[[LEFT]], %[[LOWEST]] [8, 1, 2, 3, 12, 5, 6, 7]
// CHECK-NEXT:      %[[MID:.+]] = vector.shuffle %[[TOP]], %[[BOTTOM]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK-NEXT:      %[[RIGHT:.+]] = vector.shuffle %[[TOP]], %[[BOTTOM]] [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK-NEXT:      %[[M1:.+]] = arith.maximumf %{{.+}}, %[[PADDED]]
// CHECK-NEXT:      %[[M2:.+]] = arith.maximumf %[[M1]], %[[MID]]
// CHECK-NEXT:      %[[M3:.+]] = arith.maximumf %[[M2]], %[[RIGHT]]
// CHECK-NEXT:      vector.maskedstore %[[Y]][{{.*}}], %{{.+}}, %[[M3]]
// CHECK:           %[[R4:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:      arith.maximumf %[[R3]], %[[R4]] : vector<8xf32>
// CHECK-COUNT-4:   vector.shuffle
// CHECK-COUNT-3:   arith.maximumf
// CHECK-NEXT:      vector.maskedstore %[[Y]]
// CHECK-NOT:       vector.maskedload
// CHECK:         func.return

func.func @max_pool_image(%x: memref<1x2x8x8xf32>, %y: memref<1x2x4x4xf32>) {
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x2x10x10xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%padded : memref<1x2x10x10xf32>) {
  ^bb0(%o: f32):
    %lowest = arith.constant 0xff800000 : f32
    linalg.yield %lowest : f32
  }
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 2, 8, 8] [1, 1, 1, 1] : memref<1x2x10x10xf32> to memref<1x2x8x8xf32, strided<[200, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x2x8x8xf32>) outs(%inner : memref<1x2x8x8xf32, strided<[200, 100, 10, 1], offset: 11>>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x2x4x4xf32>) {
  ^bb0(%o: f32):
    %lowest = arith.constant 0xff800000 : f32
    linalg.yield %lowest : f32
  }
  %window = memref.alloc() {alignment = 64 : i64} : memref<3x3xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d4 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%padded, %window : memref<1x2x10x10xf32>, memref<3x3xf32>) outs(%y : memref<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %window : memref<3x3xf32>
  memref.dealloc %padded : memref<1x2x10x10xf32>
  func.return
}

// -----

// Average pooling (its sum) the same way, 2x2 without padding: no lane lies outside
// the image, so one shuffle per column offset.

// CHECK-LABEL: func.func @avg_pool_image
// CHECK:           %[[A:.+]] = vector.maskedload
// CHECK:           %[[B:.+]] = vector.maskedload
// CHECK-NEXT:      %[[TOP:.+]] = arith.addf %[[A]], %[[B]] : vector<8xf32>
// CHECK:           %[[BOTTOM:.+]] = arith.addf
// CHECK-NEXT:      %[[EVEN:.+]] = vector.shuffle %[[TOP]], %[[BOTTOM]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK-NEXT:      %[[ODD:.+]] = vector.shuffle %[[TOP]], %[[BOTTOM]] [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK-NEXT:      %[[S:.+]] = arith.addf %{{.+}}, %[[EVEN]]
// CHECK-NEXT:      %[[T:.+]] = arith.addf %[[S]], %[[ODD]]
// CHECK-NEXT:      vector.maskedstore %{{.+}}, %[[T]]

func.func @avg_pool_image(%x: memref<1x2x8x8xf32>, %y: memref<1x2x4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x2x4x4xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.000000e+00 : f32
    linalg.yield %zero : f32
  }
  %window = memref.alloc() {alignment = 64 : i64} : memref<2x2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d4 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%x, %window : memref<1x2x8x8xf32>, memref<2x2xf32>) outs(%y : memref<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.addf %c, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %window : memref<2x2xf32>
  func.return
}

// -----

// Not this way: the window's last column of the last output column (8) lies inside the
// 9-wide image but past a row's load of 8 lanes, so each tap reads its own two rows,
// as a convolution's do (linalg-tile-depthwise.mlir).

// CHECK-LABEL: func.func @max_pool_past_the_loads
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x2x5x9xf32>
// CHECK:           %[[E:.+]] = vector.maskedload %[[X]]
// CHECK:           %[[O:.+]] = vector.maskedload %[[X]]
// CHECK-NEXT:      vector.shuffle %[[E]], %[[O]] [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK-COUNT-8:   vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14]
// CHECK-NOT:       vector.shuffle
// CHECK:           vector.maskedstore

func.func @max_pool_past_the_loads(%x: memref<1x2x5x9xf32>, %y: memref<1x2x2x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x2x2x4xf32>) {
  ^bb0(%o: f32):
    %lowest = arith.constant 0xff800000 : f32
    linalg.yield %lowest : f32
  }
  %window = memref.alloc() {alignment = 64 : i64} : memref<3x3xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d3), ((d4 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%x, %window : memref<1x2x5x9xf32>, memref<3x3xf32>) outs(%y : memref<1x2x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.maximumf %c, %a : f32
    linalg.yield %m : f32
  }
  memref.dealloc %window : memref<3x3xf32>
  func.return
}

// RUN: mlc-opt %s --split-input-file -p 'linalg-tile{tile-sizes=2,8,4,4 vector-length=4 threads=2 shared-micro-kernels=false}' | filecheck %s

// A stride-1 convolution whose output rows (2 wide) divide the vector (4 lanes):
// each vector of a panel below N is two whole rows, so each row of X' is packed by
// plain loads of 2 image elements put side by side and one store per vector, row
// after row of the panel. The last panel reaches past N = 10 (5 rows): its rows past
// N read the last row (in bounds) and keep zeros instead.

// CHECK-LABEL: func.func @conv_rows_of_two
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<1x2x7x4xf32>
// CHECK:         "scf.parallel"
// CHECK:         %[[P:.+]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x8xf32>
// CHECK:         %[[BELOW:.+]] = arith.cmpi sle
// CHECK:         scf.if %[[BELOW]] {
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 %[[R0:.+]] = vector.load %[[X]][{{.*}}] : memref<1x2x7x4xf32>, vector<2xf32>
// CHECK:                 %[[R1:.+]] = vector.load %[[X]][{{.*}}] : memref<1x2x7x4xf32>, vector<2xf32>
// CHECK:                 %[[V0:.+]] = vector.shuffle %[[R0]], %[[R1]] [0, 1, 2, 3] : vector<2xf32>, vector<2xf32>
// CHECK:                 vector.store %[[V0]], %[[P]][{{.*}}] : memref<?x?x?x8xf32>, vector<4xf32>
// CHECK:                 %[[V1:.+]] = vector.shuffle
// CHECK:                 vector.store %[[V1]], %[[P]][{{.*}}] : memref<?x?x?x8xf32>, vector<4xf32>
// CHECK-NOT:             vector.maskedstore
// CHECK:         } else {
// CHECK:           %[[LAST:.+]] = arith.subi %[[N:.+]], %{{.+}} : index
// CHECK:           %[[INSIDE:.+]] = arith.cmpi slt, %{{.+}}, %[[N]] : index
// CHECK:           arith.minsi %{{.+}}, %[[LAST]] : index
// CHECK:           %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 %[[L:.+]] = vector.load %[[X]][{{.*}}] : memref<1x2x7x4xf32>, vector<2xf32>
// CHECK:                 arith.select %[[INSIDE]], %[[L]], %[[ZERO]] : vector<2xf32>
// CHECK:                 vector.shuffle
// CHECK:                 vector.store {{.*}}, %[[P]][{{.*}}] : memref<?x?x?x8xf32>, vector<4xf32>
// CHECK-NOT:     vector.maskedload
// CHECK:           vector.fma
// CHECK:           memref.dealloc %[[P]]
func.func @conv_rows_of_two(%x: memref<1x2x7x4xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x5x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x7x4xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x5x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Rows of 2 at stride 2 are not contiguous in the image: the panel keeps the row
// pieces, each two masked loads of the image row and their even lanes.

// CHECK-LABEL: func.func @conv_rows_of_two_stride_two
// CHECK-NOT:     vector<2xf32>
// CHECK:         vector.maskedload
// CHECK:         vector.shuffle {{.*}} [0, 2, 4, 6] : vector<4xf32>, vector<4xf32>
// CHECK-NOT:     vector<2xf32>
// CHECK:         vector.fma
func.func @conv_rows_of_two_stride_two(%x: memref<1x2x9x5xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x4x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 * 2 + d4, d6 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x9x5xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// Rows of 3 do not divide the vector: no vector is whole rows, the panel is cut at
// the row ends (masked pieces), as before.

// CHECK-LABEL: func.func @conv_rows_of_three
// CHECK-NOT:     vector.shuffle
// CHECK:         vector.maskedload
// CHECK:         vector.maskedstore
// CHECK-NOT:     vector.shuffle
// CHECK:         vector.fma
func.func @conv_rows_of_three(%x: memref<1x2x8x5xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x6x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x8x5xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x6x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

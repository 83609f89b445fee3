// RUN: mlc-opt %s --split-input-file -p 'outline-kernels{tile-sizes=2,8,4,4 vector-length=4 repeated-only=false}' \
// RUN:   | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'outline-kernels{tile-sizes=2,8,4,4 vector-length=4 repeated-only=false}' \
// RUN:   --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --split-input-file -p 'outline-kernels{tile-sizes=2,8,4,4 vector-length=4}' \
// RUN:   | filecheck %s --check-prefix=REPEATED
// (The first two runs outline every kernel; the third, the default, only the kernels
// that another kernel repeats.)

// Three matmuls of one shape and body on different buffers are one kernel: one function,
// three calls, each call at its generic's location. The zero fill before each moves
// into the kernel with it. A matmul of another shape, one reading B transposed (an
// indexing map differs) and one whose body differs (fast-math flags) are kernels of
// their own.

// CHECK-LABEL: func.func @layers
// CHECK-SAME:    (%[[X:[a-zA-Z0-9_]+]]: memref<8x16xf32>, %[[W1:[a-zA-Z0-9_]+]]: memref<16x16xf32>, %[[W2:[a-zA-Z0-9_]+]]: memref<16x16xf32>, %[[W3:[a-zA-Z0-9_]+]]: memref<16x24xf32>, %[[Y1:[a-zA-Z0-9_]+]]: memref<8x16xf32>, %[[Y2:[a-zA-Z0-9_]+]]: memref<8x16xf32>, %[[Y3:[a-zA-Z0-9_]+]]: memref<8x24xf32>, %[[Y4:[a-zA-Z0-9_]+]]: memref<8x16xf32>, %[[Y5:[a-zA-Z0-9_]+]]: memref<8x16xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         func.call @layers_kernel0(%[[Y1]], %[[X]], %[[W1]]) : (memref<8x16xf32>, memref<8x16xf32>, memref<16x16xf32>) -> ()
// CHECK-NEXT:    func.call @layers_kernel0(%[[Y2]], %[[Y1]], %[[W2]])
// CHECK-NEXT:    func.call @layers_kernel2(%[[Y3]], %[[Y2]], %[[W3]]) : (memref<8x24xf32>, memref<8x16xf32>, memref<16x24xf32>) -> ()
// CHECK-NEXT:    func.call @layers_kernel3(%[[Y4]], %[[X]], %[[W1]])
// CHECK-NEXT:    func.call @layers_kernel4(%[[Y5]], %[[Y4]], %[[W2]])
// CHECK-NEXT:    func.return
// CHECK:       func.func private @layers_kernel0(%[[C:.+]]: memref<8x16xf32>, %[[A:.+]]: memref<8x16xf32>, %[[B:.+]]: memref<16x16xf32>) attributes {mlc.kernel} {
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[C]] : memref<8x16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[A]], %[[B]] : memref<8x16xf32>, memref<16x16xf32>) outs(%[[C]] : memref<8x16xf32>)
// CHECK:         func.return
// CHECK:       func.func private @layers_kernel2(%{{.+}}: memref<8x24xf32>, %{{.+}}: memref<8x16xf32>, %{{.+}}: memref<16x24xf32>) attributes {mlc.kernel}
// CHECK:       func.func private @layers_kernel3(
// CHECK:         affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK:       func.func private @layers_kernel4(
// CHECK:         arith.mulf {{.*}} fastmath<fast>
// CHECK-NOT:   func.func private @layers_kernel1
// CHECK-NOT:   func.func private @layers_kernel5

// By default only the two kernels of one kind move; the three others, each the only one
// of its kind, stay where they are with their zero fills.

// REPEATED-LABEL: func.func @layers
// REPEATED:         func.call @layers_kernel0(%{{.+}}, %{{.+}}, %{{.+}}) : (memref<8x16xf32>, memref<8x16xf32>, memref<16x16xf32>) -> ()
// REPEATED-NEXT:    func.call @layers_kernel0(
// REPEATED-NEXT:    linalg.generic {{.*}} outs(%{{.+}} : memref<8x24xf32>)
// REPEATED:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : memref<8x16xf32>, memref<16x24xf32>) outs(%{{.+}} : memref<8x24xf32>)
// REPEATED-COUNT-4: linalg.generic
// REPEATED-NOT:     func.call
// REPEATED:         func.return
// REPEATED:       func.func private @layers_kernel0(
// REPEATED-NOT:   func.func private

// LOC-LABEL: func.func @layers
// LOC:         func.call @layers_kernel0({{.*}}) loc("layer1")
// LOC-NEXT:    func.call @layers_kernel0({{.*}}) loc("layer2")
// LOC-NEXT:    func.call @layers_kernel2({{.*}}) loc("layer3")
// LOC-NEXT:    func.call @layers_kernel3({{.*}}) loc("layer4")
// LOC-NEXT:    func.call @layers_kernel4({{.*}}) loc("layer5")
#mk = affine_map<(d0, d1, d2) -> (d0, d1)>
#kn = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d2, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @layers(%x: memref<8x16xf32>, %w1: memref<16x16xf32>, %w2: memref<16x16xf32>, %w3: memref<16x24xf32>, %y1: memref<8x16xf32>, %y2: memref<8x16xf32>, %y3: memref<8x24xf32>, %y4: memref<8x16xf32>, %y5: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%y1 : memref<8x16xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  } loc("layer1")
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w1 : memref<8x16xf32>, memref<16x16xf32>) outs(%y1 : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } loc("layer1")
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%y2 : memref<8x16xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  } loc("layer2")
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%y1, %w2 : memref<8x16xf32>, memref<16x16xf32>) outs(%y2 : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } loc("layer2")
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%y3 : memref<8x24xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  } loc("layer3")
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%y2, %w3 : memref<8x16xf32>, memref<16x24xf32>) outs(%y3 : memref<8x24xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } loc("layer3")
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%y4 : memref<8x16xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  } loc("layer4")
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w1 : memref<8x16xf32>, memref<16x16xf32>) outs(%y4 : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } loc("layer4")
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%y5 : memref<8x16xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  } loc("layer5")
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%y4, %w2 : memref<8x16xf32>, memref<16x16xf32>) outs(%y5 : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b fastmath<fast> : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } loc("layer5")
  func.return
}

// -----

// What stays where it is: an elementwise generic, a matmul of at most 4 columns (the
// plain loops take it), and a matmul inside a loop of the model (its panels are packed
// once before the loop, `hoisted_panels`).

// CHECK-LABEL: func.func @kept
// CHECK:         linalg.generic {{.*}} ins(%{{.+}} : memref<8x16xf32>) outs(%{{.+}} : memref<8x16xf32>)
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : memref<8x16xf32>, memref<16x4xf32>)
// CHECK:         scf.for
// CHECK-NEXT:      linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : memref<8x16xf32>, memref<16x16xf32>)
// CHECK-NOT:   func.call
// CHECK-NOT:   func.func private

// REPEATED-LABEL: func.func @kept
// REPEATED-NOT:   func.call
#mk = affine_map<(d0, d1, d2) -> (d0, d1)>
#kn = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @kept(%x: memref<8x16xf32>, %w: memref<16x16xf32>, %n: memref<16x4xf32>, %y: memref<8x16xf32>, %z: memref<8x4xf32>, %t: index) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %n : memref<8x16xf32>, memref<16x4xf32>) outs(%z : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %t step %c1 {
    linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<8x16xf32>, memref<16x16xf32>) outs(%y : memref<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
    }
  }
  func.return
}

// -----

// Dynamic rows: the kernel takes the buffers as they are typed, `?` included; kernels
// in two functions are merged across them.

// CHECK-LABEL: func.func @first
// CHECK:         func.call @first_kernel0(%{{.+}}, %{{.+}}, %{{.+}}) : (memref<?x16xf32>, memref<16x16xf32>, memref<?x16xf32>) -> ()
// CHECK:       func.func private @first_kernel0(%{{.+}}: memref<?x16xf32>, %{{.+}}: memref<16x16xf32>, %{{.+}}: memref<?x16xf32>) attributes {mlc.kernel}
// CHECK-LABEL: func.func @second
// CHECK:         func.call @first_kernel0(
// CHECK-NOT:   func.func private @second_kernel0

// REPEATED-LABEL: func.func @first
// REPEATED:         func.call @first_kernel0(
// REPEATED-LABEL: func.func @second
// REPEATED:         func.call @first_kernel0(
#mk = affine_map<(d0, d1, d2) -> (d0, d1)>
#kn = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @first(%x: memref<?x16xf32>, %w: memref<16x16xf32>, %y: memref<?x16xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<?x16xf32>, memref<16x16xf32>) outs(%y : memref<?x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
func.func @second(%x: memref<?x16xf32>, %w: memref<16x16xf32>, %y: memref<?x16xf32>) {
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<?x16xf32>, memref<16x16xf32>) outs(%y : memref<?x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A depthwise convolution takes what linalg-tile's nest absorbs into its kernel: the
// padded copy of the image (from its allocation to its free) and the bias broadcast
// into y. The free of the image, between the copy and the convolution, waits for the
// call.

// CHECK-LABEL: func.func @depthwise_padded
// CHECK:         %[[X:.+]] = memref.alloc() {{.*}} : memref<1x4x5x5xf32>
// CHECK:         math.exp
// CHECK-NOT:     memref.alloc() {{.*}} : memref<1x4x7x7xf32>
// CHECK:         %[[Y:.+]] = memref.alloc() {{.*}} : memref<1x4x5x5xf32>
// CHECK-NEXT:    func.call @[[KERNEL:[a-z_0-9]+]](%[[X]], %{{.*}}, %[[Y]], %{{.*}})
// CHECK-NEXT:    memref.dealloc %[[X]]
// CHECK-NEXT:    func.return %[[Y]]
// CHECK:       func.func private @[[KERNEL]](
// CHECK-SAME:    attributes {mlc.kernel}
// CHECK-NEXT:    %[[PADDED:.+]] = memref.alloc() {{.*}} : memref<1x4x7x7xf32>
// CHECK:         outs(%[[PADDED]]
// CHECK:         %[[INNER:.+]] = memref.subview %[[PADDED]]
// CHECK:         outs(%[[INNER]]
// CHECK:         ins(%{{.*}} : memref<4xf32>)
// CHECK:         arith.mulf
// CHECK:         memref.dealloc %[[PADDED]]
// CHECK-NEXT:    func.return

func.func @depthwise_padded(%src: memref<1x4x5x5xf32>, %w: memref<4x3x3xf32>, %bias: memref<4xf32>) -> memref<1x4x5x5xf32> {
  %x = memref.alloc() {alignment = 64 : i64} : memref<1x4x5x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%src : memref<1x4x5x5xf32>) outs(%x : memref<1x4x5x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x4x7x7xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%padded : memref<1x4x7x7xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.000000e+00 : f32
    linalg.yield %zero : f32
  }
  %inner = memref.subview %padded[0, 0, 1, 1] [1, 4, 5, 5] [1, 1, 1, 1] : memref<1x4x7x7xf32> to memref<1x4x5x5xf32, strided<[196, 49, 7, 1], offset: 8>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x4x5x5xf32>) outs(%inner : memref<1x4x5x5xf32, strided<[196, 49, 7, 1], offset: 8>>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %x : memref<1x4x5x5xf32>
  %y = memref.alloc() {alignment = 64 : i64} : memref<1x4x5x5xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : memref<4xf32>) outs(%y : memref<1x4x5x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d3), (d5 + d4))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%padded, %w : memref<1x4x7x7xf32>, memref<4x3x3xf32>) outs(%y : memref<1x4x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %padded : memref<1x4x7x7xf32>
  func.return %y : memref<1x4x5x5xf32>
}

// -----

// A convolution packing its panels from the image before its zero padding
// (`conv_gemm.absorb_padding`) takes the padded copy into its kernel, as a depthwise
// one does, so that linalg-tile still finds it beside the convolution; the free of
// the image waits for the call.

// CHECK-LABEL: func.func @conv_padded
// CHECK:         %[[X:.+]] = memref.alloc() {{.*}} : memref<1x2x5x6xf32>
// CHECK-NEXT:    "memref.copy"
// CHECK-NEXT:    func.call @[[KERNEL:[a-z_0-9]+]](%[[X]], %{{.*}}, %{{.*}})
// CHECK-NEXT:    memref.dealloc %[[X]]
// CHECK-NEXT:    func.return
// CHECK:       func.func private @[[KERNEL]](
// CHECK-SAME:    attributes {mlc.kernel}
// CHECK-NEXT:    %[[PADDED:.+]] = memref.alloc() {{.*}} : memref<1x2x7x8xf32>
// CHECK:         outs(%[[PADDED]]
// CHECK:         %[[INNER:.+]] = memref.subview %[[PADDED]]
// CHECK:         outs(%[[INNER]]
// CHECK:         ins(%[[PADDED]], %{{.*}} : memref<1x2x7x8xf32>, memref<4x2x3x3xf32>)
// CHECK:         memref.dealloc %[[PADDED]]
// CHECK-NEXT:    func.return

func.func @conv_padded(%in: memref<1x2x5x6xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x5x6xf32>) {
  %x = memref.alloc() {alignment = 64 : i64} : memref<1x2x5x6xf32>
  "memref.copy"(%in, %x) : (memref<1x2x5x6xf32>, memref<1x2x5x6xf32>) -> ()
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
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x7x8xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x5x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<1x2x7x8xf32>
  func.return
}

// -----

// The same with an image that views another buffer (a reshape, as a weight gradient's
// transposed image is): the free of that buffer, between the padded copy and the
// convolution, waits for the call too.

// CHECK-LABEL: func.func @conv_padded_view
// CHECK:         %[[T:.+]] = memref.alloc() {{.*}} : memref<2x1x5x6xf32>
// CHECK:         %[[X:.+]] = memref.expand_shape
// CHECK-NEXT:    func.call @{{[a-z_0-9]+}}(%[[X]], %{{.*}}, %{{.*}})
// CHECK-NEXT:    memref.dealloc %[[T]]
// CHECK-NEXT:    func.return

func.func @conv_padded_view(%in: memref<2x1x5x6xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x5x6xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<2x1x5x6xf32>
  "memref.copy"(%in, %t) : (memref<2x1x5x6xf32>, memref<2x1x5x6xf32>) -> ()
  %c = memref.collapse_shape %t [[0, 1, 2, 3]] : memref<2x1x5x6xf32> into memref<60xf32>
  %x = memref.expand_shape %c [[0, 1, 2, 3]] output_shape [1, 2, 5, 6] : memref<60xf32> into memref<1x2x5x6xf32>
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
  memref.dealloc %t : memref<2x1x5x6xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%p, %w : memref<1x2x7x8xf32>, memref<4x2x3x3xf32>) outs(%y : memref<1x4x5x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<1x2x7x8xf32>
  func.return
}

// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// An LSTM step's tail: the cell update in place, the hidden state into a new buffer,
// its copy into the output sequence. Three elementwise loops over 8x256 that share
// buffers element by element: one loop; the alloc and subview between them go before
// it, the dealloc of the gates after it. (Function arguments may alias each other, so
// the gates and the cell are the step's own buffers here, as in the LSTM's loop.)

// CHECK-LABEL: func.func @lstm_tail
// CHECK:         %[[H:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8x256xf32>
// CHECK:         %[[ROW:.+]] = memref.subview %y
// CHECK:         "scf.parallel"
// CHECK-NEXT:    ^{{.+}}(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK:           memref.store %{{.+}}, %[[CELL:.+]][%[[I]], %[[J]]]
// CHECK:           %[[C:.+]] = memref.load %[[CELL]][%[[I]], %[[J]]]
// CHECK:           memref.store %{{.+}}, %[[H]][%[[I]], %[[J]]]
// CHECK:           %[[V:.+]] = memref.load %[[H]][%[[I]], %[[J]]]
// CHECK:           memref.store %[[V]], %[[ROW]][%[[I]], %[[J]]]
// CHECK:           scf.reduce
// CHECK-NOT:     "scf.parallel"
// CHECK:         memref.dealloc %[[GATES:.+]] : memref<8x512xf32>
// LOC-LABEL:   func.func @lstm_tail
// LOC:           memref.store {{.+}} loc("copy")
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @lstm_tail(%y: memref<64x256xf32>, %t: index) -> memref<8x256xf32> {
  %gates = memref.alloc() : memref<8x512xf32>
  %c = memref.alloc() : memref<8x256xf32>
  %f = memref.subview %gates[0, 0] [8, 256] [1, 1] : memref<8x512xf32> to memref<8x256xf32, strided<[512, 1]>>
  %o = memref.subview %gates[0, 256] [8, 256] [1, 1] : memref<8x512xf32> to memref<8x256xf32, strided<[512, 1], offset: 256>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%f : memref<8x256xf32, strided<[512, 1]>>) outs(%c : memref<8x256xf32>) {
  ^bb0(%a: f32, %old: f32):
    %n = arith.mulf %a, %old : f32
    linalg.yield %n : f32
  }
  %h = memref.alloc() {alignment = 64 : i64} : memref<8x256xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%o, %c : memref<8x256xf32, strided<[512, 1], offset: 256>>, memref<8x256xf32>) outs(%h : memref<8x256xf32>) {
  ^bb0(%a: f32, %b: f32, %_: f32):
    %e = math.tanh %b : f32
    %n = arith.mulf %a, %e : f32
    linalg.yield %n : f32
  }
  memref.dealloc %gates : memref<8x512xf32>
  %row = memref.subview %y[%t, 0] [8, 256] [1, 1] : memref<64x256xf32> to memref<8x256xf32, strided<[256, 1], offset: ?>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : memref<8x256xf32>) outs(%row : memref<8x256xf32, strided<[256, 1], offset: ?>>) {
  ^bb0(%a: f32, %_: f32):
    linalg.yield %a : f32
  } loc("copy")
  memref.dealloc %c : memref<8x256xf32>
  func.return %h : memref<8x256xf32>
}

// -----

// A loop that reads what the one before wrote at another element stays apart.

// CHECK-LABEL: func.func @shifted_read_stays_apart
// CHECK-COUNT-2: "scf.parallel"
#id = affine_map<(d0) -> (d0)>
#next = affine_map<(d0) -> (d0 + 1)>
func.func @shifted_read_stays_apart(%a: memref<9xf32>, %b: memref<8xf32>) {
  %s = memref.subview %a[0] [8] [1] : memref<9xf32> to memref<8xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%s : memref<8xf32, strided<[1]>>) {
  ^bb0(%x: f32):
    %n = arith.addf %x, %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#next, #id], iterator_types = ["parallel"]} ins(%a : memref<9xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%x: f32, %_: f32):
    linalg.yield %x : f32
  }
  func.return
}

// -----

// Function arguments may alias each other: a write to one and a read of another keep
// their loops apart; loops over other spaces, and a row reduction's, are never merged.

// CHECK-LABEL: func.func @arguments_may_alias
// CHECK-COUNT-2: "scf.parallel"
#id = affine_map<(d0) -> (d0)>
func.func @arguments_may_alias(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%a : memref<8xf32>) {
  ^bb0(%x: f32):
    %n = arith.addf %x, %x : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%b : memref<8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%x: f32, %_: f32):
    linalg.yield %x : f32
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @other_spaces_and_reductions_stay_apart
// CHECK-COUNT-3: "scf.parallel"
#id = affine_map<(d0) -> (d0)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @other_spaces_and_reductions_stay_apart(%x: memref<8x16xf32>, %s: memref<8xf32>, %t: memref<4xf32>) {
  %a = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%a : memref<8xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 0.0 : f32
    linalg.yield %z : f32
  }
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x16xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.addf %acc, %v : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%t : memref<4xf32>) {
  ^bb0(%o: f32):
    %z = arith.constant 1.0 : f32
    linalg.yield %z : f32
  }
  func.return
}

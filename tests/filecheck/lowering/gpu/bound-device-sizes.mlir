// RUN: mlc-opt %s --split-input-file -p bound-device-sizes | filecheck %s

// A count the device computed sizes a slice of a static dim (`NonZero`'s columns): it
// is at most 65. The host uses 65 for it (buffers, views, grids); the launch that uses
// it loads it from the device, clamped into [0, 65], and recomputes what it uses (the
// guard `i < 2 * n`); its check reads it once after the launches; its buffer is freed
// at the end.

// CHECK-LABEL: func.func @count
// CHECK-NOT:     memref.load
// CHECK:         %[[B0:.+]] = arith.constant 65 : index
// CHECK-NEXT:    %[[B:.+]] = arith.index_cast %[[B0]] : index to i64
// CHECK-NEXT:    %[[S:.+]] = arith.index_cast %[[B]] : i64 to index
// CHECK-NEXT:    %[[V:.+]] = memref.subview %{{.+}}[0, 0] [2, %[[S]]] [1, 1]
// CHECK-NEXT:    %[[R:.+]] = memref.alloc(%[[S]]) : memref<?x2xi64>
// CHECK-NEXT:    %[[T:.+]] = arith.muli %[[S]], %{{.+}} : index
// CHECK-NEXT:    %[[G:.+]] = arith.divui %[[T]], %{{.+}} : index
// CHECK-NEXT:    "gpu.launch"(%[[G]],
// CHECK-NEXT:    ^{{.+}}(
// CHECK-NEXT:      %[[K:.+]] = memref.load %[[N:.+]][] : memref<i64>
// CHECK-NEXT:      %[[LOW:.+]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[A:.+]] = arith.maxsi %[[K]], %[[LOW]] : i64
// CHECK-NEXT:      %[[C:.+]] = arith.minsi %[[A]], %[[B]] : i64
// CHECK-NEXT:      %[[KS:.+]] = arith.index_cast %[[C]] : i64 to index
// CHECK-NEXT:      %[[KT:.+]] = arith.muli %[[KS]], %{{.+}} : index
// CHECK-NEXT:      %{{.+}} = arith.addi
// CHECK-NEXT:      %{{.+}} = arith.cmpi ult, %{{.+}}, %[[KT]] : index
// CHECK:         memref.dealloc %[[R]]
// CHECK-NOT:     cf.assert
// CHECK:         %[[E:.+]] = memref.load %[[N]][] : memref<i64>
// CHECK-NEXT:    %[[POS:.+]] = arith.cmpi sge, %[[E]], %{{.+}} : i64
// CHECK-NEXT:    cf.assert %[[POS]], "count below 0"
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<1xi64>
// CHECK-NEXT:    func.return
func.func @count(%cols: memref<2x65xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %w = memref.alloc() : memref<1xi64>
  %count = memref.collapse_shape %w [] : memref<1xi64> into memref<i64>
  %n = memref.load %count[] : memref<i64>
  %s = arith.index_cast %n : i64 to index
  %v = memref.subview %cols[0, 0] [2, %s] [1, 1] : memref<2x65xi64> to memref<2x?xi64, strided<[65, 1]>>
  %d = memref.dim %v, %c1 : memref<2x?xi64, strided<[65, 1]>>
  %r = memref.alloc(%d) : memref<?x2xi64>
  %t = arith.muli %d, %c2 : index
  %g = arith.divui %t, %c256 : index
  "gpu.launch"(%g, %c1, %c1, %c256, %c1, %c1) <{operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>}> ({
  ^bb0(%bx: index, %by: index, %bz: index, %tx: index, %ty: index, %tz: index, %gx: index, %gy: index, %gz: index, %sx: index, %sy: index, %sz: index):
    %i = arith.addi %bx, %tx : index
    %ok = arith.cmpi ult, %i, %t : index
    scf.if %ok {
      %row = arith.divui %i, %c2 : index
      %col = arith.remui %i, %c2 : index
      %x = memref.load %v[%col, %row] : memref<2x?xi64, strided<[65, 1]>>
      memref.store %x, %r[%row, %col] : memref<?x2xi64>
    }
    "gpu.terminator"() : () -> ()
  }) : (index, index, index, index, index, index) -> ()
  memref.dealloc %r : memref<?x2xi64>
  %z = arith.constant 0 : i64
  %pos = arith.cmpi sge, %n, %z : i64
  cf.assert %pos, "count below 0"
  memref.dealloc %w : memref<1xi64>
  func.return
}

// -----

// The room in a buffer of a dynamic size (NonZero's columns on a dynamic input: its
// element count plus one) bounds the count as well: the size the buffer was made with,
// computed again before the count is read where it was computed after.

// CHECK-LABEL: func.func @dynamic_room
// CHECK-SAME:    (%[[M:.+]]: index)
// CHECK-NOT:     memref.load
// CHECK:         %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ROOM:.+]] = arith.addi %[[M]], %[[ONE]] : index
// CHECK-NEXT:    %[[B:.+]] = arith.index_cast %[[ROOM]] : index to i64
// CHECK-NEXT:    %[[S:.+]] = arith.index_cast %[[B]] : i64 to index
// CHECK:         memref.alloc(%{{.+}}) : memref<2x?xi64>
// CHECK-NEXT:    memref.subview %{{.+}}[0, 0] [2, %[[S]]] [1, 1] : memref<2x?xi64> to memref<2x?xi64, strided<[?, 1]>>
// CHECK-NEXT:    memref.alloc(%[[S]]) : memref<?xf32>
func.func @dynamic_room(%m: index) {
  %w = memref.alloc() : memref<i64>
  %n = memref.load %w[] : memref<i64>
  %s = arith.index_cast %n : i64 to index
  %one = arith.constant 1 : index
  %room = arith.addi %m, %one : index
  %cols = memref.alloc(%room) : memref<2x?xi64>
  %v = memref.subview %cols[0, 0] [2, %s] [1, 1] : memref<2x?xi64> to memref<2x?xi64, strided<[?, 1]>>
  %r = memref.alloc(%s) : memref<?xf32>
  memref.dealloc %r : memref<?xf32>
  memref.dealloc %cols : memref<2x?xi64>
  memref.dealloc %w : memref<i64>
  func.return
}

// -----

// A size of an inner dim of a row-major buffer places its elements: allocated at the
// bound, the rows would lie where a buffer of the true size has none. Left alone.

// CHECK-LABEL: func.func @inner_dim
// CHECK:         %[[N:.+]] = memref.load
// CHECK-NEXT:    %[[S:.+]] = arith.index_cast %[[N]]
// CHECK:         memref.alloc(%[[S]]) : memref<4x?xf32>
func.func @inner_dim(%cols: memref<2x65xi64>) {
  %w = memref.alloc() : memref<i64>
  %n = memref.load %w[] : memref<i64>
  %s = arith.index_cast %n : i64 to index
  %v = memref.subview %cols[0, 0] [2, %s] [1, 1] : memref<2x65xi64> to memref<2x?xi64, strided<[65, 1]>>
  %r = memref.alloc(%s) : memref<4x?xf32>
  memref.dealloc %r : memref<4x?xf32>
  memref.dealloc %w : memref<i64>
  func.return
}

// -----

// A function that returns a buffer of a dynamic size gives the caller its true size:
// the host reads it, as before. So does a size with no static bound, and one that
// places a view (an offset) rather than sizing it.

// CHECK-LABEL: func.func @returned
// CHECK:         memref.load
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    memref.subview %{{.+}}[0, 0] [2, %{{.+}}]
func.func @returned(%cols: memref<2x65xi64>) -> memref<2x?xi64, strided<[65, 1]>> {
  %w = memref.alloc() : memref<i64>
  %n = memref.load %w[] : memref<i64>
  %s = arith.index_cast %n : i64 to index
  %v = memref.subview %cols[0, 0] [2, %s] [1, 1] : memref<2x65xi64> to memref<2x?xi64, strided<[65, 1]>>
  memref.dealloc %w : memref<i64>
  func.return %v : memref<2x?xi64, strided<[65, 1]>>
}

// CHECK-LABEL: func.func @unbounded
// CHECK:         memref.load
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    memref.alloc(%{{.+}}) : memref<?xf32>
func.func @unbounded() {
  %w = memref.alloc() : memref<i64>
  %n = memref.load %w[] : memref<i64>
  %s = arith.index_cast %n : i64 to index
  %r = memref.alloc(%s) : memref<?xf32>
  memref.dealloc %r : memref<?xf32>
  memref.dealloc %w : memref<i64>
  func.return
}

// CHECK-LABEL: func.func @offset
// CHECK:         memref.load
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    memref.subview %{{.+}}[0, %{{.+}}] [2, %{{.+}}]
func.func @offset(%cols: memref<2x65xi64>) {
  %w = memref.alloc() : memref<i64>
  %n = memref.load %w[] : memref<i64>
  %s = arith.index_cast %n : i64 to index
  %v = memref.subview %cols[0, %s] [2, %s] [1, 1] : memref<2x65xi64> to memref<2x?xi64, strided<[65, 1], offset: ?>>
  memref.dealloc %w : memref<i64>
  func.return
}

// RUN: mlc-opt %s --split-input-file -p lower-affine | filecheck %s

// mlc's `lower-affine` lowers what xDSL's does, as it does: `affine.for` to `scf.for`
// (its `affine.yield` to `scf.yield`), `affine.apply` to index arithmetic, and
// `affine.load`/`store` to `memref` accesses at the computed indices; like xDSL's
// applier it erases the ops nobody uses on the way (the dead `arith.addi`).

// CHECK-LABEL: func.func @nest
// CHECK-NOT:     affine.
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:      %[[TWO:.+]] = arith.constant 2 : index
// CHECK-NEXT:      %[[J:.+]] = arith.muli %[[I]], %[[TWO]] : index
// CHECK-NEXT:      %[[X:.+]] = memref.load %{{.+}}[%[[J]]] : memref<16xf32>
// CHECK-NEXT:      memref.store %[[X]], %{{.+}}[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     arith.addi
// CHECK-NOT:     affine.
func.func @nest(%a: memref<16xf32>, %b: memref<8xf32>, %n: index) {
  %unused = arith.addi %n, %n : index
  affine.for %i = 0 to 8 {
    %j = affine.apply affine_map<(d0) -> (d0 * 2)>(%i)
    %x = memref.load %a[%j] : memref<16xf32>
    "affine.store"(%x, %b, %i) <{map = affine_map<(d0) -> (d0)>}> : (f32, memref<8xf32>, index) -> ()
  }
  func.return
}

// -----

// An `affine.load` through its map.


// CHECK-LABEL: func.func @load
// CHECK-NEXT:    %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[K:.+]] = arith.addi %{{.+}}, %[[ONE]] : index
// CHECK-NEXT:    %[[X:.+]] = memref.load %{{.+}}[%[[K]]] : memref<8xf32>
// CHECK-NEXT:    func.return %[[X]] : f32
func.func @load(%a: memref<8xf32>, %k: index) -> f32 {
  %x = "affine.load"(%a, %k) <{map = affine_map<(d0) -> (d0 + 1)>}> : (memref<8xf32>, index) -> f32
  func.return %x : f32
}

// -----

// With no affine op the pass only erases the dead ops, as xDSL's does.

// CHECK-LABEL: func.func @plain
// CHECK-NEXT:    func.return %{{.+}} : index
func.func @plain(%n: index) -> index {
  %dead = arith.muli %n, %n : index
  func.return %n : index
}

// RUN: mlc-opt %s --split-input-file -p cse | filecheck %s

// Pure ops equal up to their names become one, in the region that defines the first and
// in the regions nested in it; a load is shared only with no store between the two in
// one block; an op in a sibling region, or in another function, is not shared.

// CHECK-LABEL: func.func @shared
// CHECK:         %[[A:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    %[[L:.+]] = memref.load
// CHECK-NEXT:    %[[M:.+]] = arith.muli %[[A]], %[[A]] : index
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      memref.store %[[L]], %{{.+}}[%[[M]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[L]]
// CHECK-NEXT:    %[[L2:.+]] = memref.load
// CHECK-NEXT:    func.return %[[A]], %[[L2]], %[[M]]
func.func @shared(%n: index, %m: memref<16xf32>) -> (index, f32, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = arith.addi %n, %c1 : index
  %l = memref.load %m[%c0] : memref<16xf32>
  %b = arith.addi %n, %c1 : index
  %l1 = memref.load %m[%c0] : memref<16xf32>
  %p = arith.muli %a, %b : index
  scf.for %i = %c0 to %n step %c1 {
    %q = arith.muli %a, %a : index
    memref.store %l1, %m[%q] : memref<16xf32>
  }
  memref.store %l, %m[%c1] : memref<16xf32>
  %l2 = memref.load %m[%c0] : memref<16xf32>
  %unused = arith.addi %n, %n : index
  func.return %b, %l2, %p : index, f32, index
}

// -----

// CHECK-LABEL: func.func @siblings
// CHECK:         scf.if
// CHECK-NEXT:      %[[X:.+]] = arith.addi
// CHECK-NEXT:      scf.yield %[[X]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[Y:.+]] = arith.addi
// CHECK-NEXT:      scf.yield %[[Y]]
// CHECK-LABEL: func.func @other
// CHECK:         arith.addi
func.func @siblings(%c: i1, %n: index) -> index {
  %r = scf.if %c -> (index) {
    %x = arith.addi %n, %n : index
    scf.yield %x : index
  } else {
    %y = arith.addi %n, %n : index
    scf.yield %y : index
  }
  func.return %r : index
}
func.func @other(%n: index) -> index {
  %x = arith.addi %n, %n : index
  func.return %x : index
}

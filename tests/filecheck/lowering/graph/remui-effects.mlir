// RUN: mlc-opt %s --split-input-file -p cse | filecheck %s --check-prefix=CSE
// RUN: mlc-opt %s --split-input-file -p canonicalize | filecheck %s --check-prefix=DCE
// RUN: mlc-opt %s --split-input-file -p licm | filecheck %s --check-prefix=LICM

// `arith.remui` has no memory effect (as `divui`): two equal ones are one, a dead one
// goes; ones of other operands stay apart; a live one stays.

// CSE-LABEL: func.func @remainders
// CSE:         %[[R:.+]] = arith.remui %[[N:.+]], %[[D:.+]] : index
// CSE-NEXT:    %[[S:.+]] = arith.remui %[[D]], %[[N]] : index
// CSE-NEXT:    func.return %[[R]], %[[R]], %[[S]]
// DCE-LABEL: func.func @remainders
// DCE-COUNT-3: arith.remui %{{[a-z]+}}, %{{[a-z]+}} : index
// DCE-NEXT:    func.return
func.func @remainders(%n: index, %d: index) -> (index, index, index) {
  %r = arith.remui %n, %d : index
  %same = arith.remui %n, %d : index
  %swapped = arith.remui %d, %n : index
  %dead = arith.remui %n, %n : index
  func.return %r, %same, %swapped : index, index, index
}

// -----

// A remainder by a divisor that may be zero stays under the loop that guards it.

// LICM-LABEL: func.func @guarded
// LICM:         scf.for
// LICM-NEXT:      arith.remui %{{.+}}, %{{.+}} : index
func.func @guarded(%n: index, %d: index, %m: memref<16xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %d step %c1 {
    %r = arith.remui %n, %d : index
    memref.store %r, %m[%i] : memref<16xindex>
  }
  func.return
}

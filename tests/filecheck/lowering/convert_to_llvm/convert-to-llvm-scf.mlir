// RUN: mlc-opt %s -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// scf.while becomes a loop of blocks: the entry branches to the `before` region with
// the initial values, scf.condition to the `after` region or out with the forwarded
// values, and the `after` region's yield back to `before`.

// CHECK-LABEL: llvm.func @count_up
// CHECK-SAME:    (%{{.*}}: i64, %[[N:[a-z0-9_]+]]: i64) -> i64
// CHECK:         llvm.br ^[[BEFORE:.*]](%{{.*}} : i64)
// CHECK:       ^[[BEFORE]](%[[I:.*]]: i64):
// CHECK-NEXT:    %[[GO:.*]] = llvm.icmp "slt" %[[I]], %[[N]] : i64
// CHECK-NEXT:    llvm.cond_br %[[GO]], ^[[AFTER:.*]](%[[I]] : i64), ^[[EXIT:.*]](%[[I]] : i64)
// CHECK:       ^[[AFTER]](%[[J:.*]]: i64):
// CHECK:         %[[NEXT:.*]] = llvm.add %[[J]], %{{.*}} : i64
// CHECK-NEXT:    llvm.br ^[[BEFORE]](%[[NEXT]] : i64)
// CHECK:       ^[[EXIT]](%[[R:.*]]: i64):
// CHECK-NEXT:    llvm.return %[[R]] : i64

// LOC: llvm.cond_br {{.*}} loc("loops.py":3:7)
func.func @count_up(%start: i64, %n: i64) -> i64 {
  %r = scf.while (%i = %start) : (i64) -> i64 {
    %go = arith.cmpi slt, %i, %n : i64
    scf.condition(%go) %i : i64
  } do {
  ^bb0(%j: i64):
    %one = arith.constant 1 : i64
    %next = arith.addi %j, %one : i64
    scf.yield %next : i64
  } loc("loops.py":3:7)
  func.return %r : i64
}

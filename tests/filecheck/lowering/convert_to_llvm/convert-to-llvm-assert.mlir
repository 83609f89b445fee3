// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s -p convert-to-llvm | mlc-translate --mlir-to-llvmir | filecheck %s --check-prefix=IR

// cf.assert branches to a block that reports the located message to the JIT-bound
// mlc_assert_failed and goes on (mlc.backend.assertions raises it after the call).

// CHECK:       llvm.func @mlc_assert_failed(!llvm.ptr)
// CHECK:       llvm.mlir.global internal constant @__mlc_assert_message_0("model.py:3:5: error: 'ml.add' op operand #0 dim 0 must be 1 or 4\00")
// CHECK-LABEL: llvm.func @check
// CHECK:         %[[OK:.+]] = llvm.icmp "eq"
// CHECK-NEXT:    llvm.cond_br %[[OK]], ^[[CONTINUE:.+]], ^[[FAILED:[a-z0-9]+]]
// CHECK-NEXT:  ^[[FAILED]]:
// CHECK-NEXT:    %[[MESSAGE:.+]] = llvm.mlir.addressof @__mlc_assert_message_0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @mlc_assert_failed(%[[MESSAGE]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.br ^[[CONTINUE]]
// CHECK-NEXT:  ^[[CONTINUE]]:
// CHECK-NEXT:    llvm.add

// LOC:         llvm.call @mlc_assert_failed({{.*}} loc("model.py":3:5)

// IR:          @"__mlc_assert_message_0" = internal constant [65 x i8] c"model.py:3:5: error: 'ml.add' op operand #0 dim 0 must be 1 or 4\00"
// IR:          declare void @"mlc_assert_failed"(ptr
// IR:          call {{.*}} @"mlc_assert_failed"({{.*}} @"__mlc_assert_message_0")
func.func @check(%n: index) -> index {
  %c4 = arith.constant 4 : index
  %ok = arith.cmpi eq, %n, %c4 : index
  cf.assert %ok, "'ml.add' op operand #0 dim 0 must be 1 or 4" loc("model.py":3:5)
  %r = arith.addi %n, %c4 : index
  func.return %r : index
}

// -----

// Inside a loop (lowered to cf first) and twice with one text: one message global.

// CHECK-LABEL: llvm.mlir.global internal constant @__mlc_assert_message_0("f.py:1:1: error: n must be positive\00")
// CHECK-NOT:     __mlc_assert_message_1
// CHECK-LABEL: llvm.func @in_loop
// CHECK-COUNT-2: llvm.call @mlc_assert_failed
func.func @in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ok = arith.cmpi sgt, %n, %c0 : index
  cf.assert %ok, "n must be positive" loc("f.py":1:1)
  scf.for %i = %c0 to %n step %c1 {
    cf.assert %ok, "n must be positive" loc("f.py":1:1)
  }
  func.return
}

// -----

// A check that reports a value (mlc.reports_value) passes the cmpi's left operand, as an
// i64, to mlc_assert_failed_value, which puts it in the message's {}.

// CHECK:       llvm.func @mlc_assert_failed_value(!llvm.ptr, i64)
// CHECK-LABEL: llvm.func @reports_index
// CHECK:         llvm.cond_br %{{.+}}, ^[[CONTINUE:.+]], ^[[FAILED:[a-z0-9]+]]
// CHECK-NEXT:  ^[[FAILED]]:
// CHECK-NEXT:    %[[MESSAGE:.+]] = llvm.mlir.addressof @__mlc_assert_message_0 : !llvm.ptr
// CHECK-NEXT:    llvm.call @mlc_assert_failed_value(%[[MESSAGE]], %{{.+}}) : (!llvm.ptr, i64) -> ()
// CHECK-NEXT:    llvm.br ^[[CONTINUE]]
func.func @reports_index(%i: index, %n: index) {
  %ok = arith.cmpi eq, %i, %n : index
  cf.assert %ok, "index {} is out of range" {mlc.reports_value}
  func.return
}

// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// math.ipowi: a squaring loop on the exponent (negative exponents counted as 0),
// then the result for negative exponents: 1 for base 1, +-1 for base -1, else 0.
// Its constants are made once, in the entry block, and used in the loop's body too.

// CHECK-LABEL: llvm.func @ipowi(%x: i32, %e: i32) -> i32
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[MONE:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:    %[[NEG:.*]] = llvm.icmp "slt" %e, %[[ZERO]] : i32
// CHECK-NEXT:    %[[COUNT:.*]] = llvm.select %[[NEG]], %[[ZERO]], %e : i1, i32
// CHECK-NEXT:    llvm.br ^[[HEAD:.*]](%[[ONE]], %x, %[[COUNT]] : i32, i32, i32)
// CHECK-NEXT:  ^[[HEAD]](%[[R:.*]]: i32, %[[B:.*]]: i32, %[[E:.*]]: i32):
// CHECK:         %[[MORE:.*]] = llvm.icmp "ne" %[[E]], %{{.*}} : i32
// CHECK-NEXT:    llvm.cond_br %[[MORE]], ^[[BODY:.*]](%[[R]], %[[B]], %[[E]] : i32, i32, i32), ^[[EXIT:.*]](%[[R]], %[[B]], %[[E]] : i32, i32, i32)
// CHECK-NEXT:  ^[[BODY]](%[[R2:.*]]: i32, %[[B2:.*]]: i32, %[[E2:.*]]: i32):
// CHECK-NEXT:    %[[LOW:.*]] = llvm.and %[[E2]], %[[ONE]] : i32
// CHECK-NEXT:    %[[SET:.*]] = llvm.icmp "eq" %[[LOW]], %[[ONE]] : i32
// CHECK-NEXT:    %[[P:.*]] = llvm.mul %[[R2]], %[[B2]] : i32
// CHECK-NEXT:    %[[R3:.*]] = llvm.select %[[SET]], %[[P]], %[[R2]] : i1, i32
// CHECK-NEXT:    %[[SQ:.*]] = llvm.mul %[[B2]], %[[B2]] : i32
// CHECK-NEXT:    %[[E3:.*]] = llvm.lshr %[[E2]], %[[ONE]] : i32
// CHECK-NEXT:    llvm.br ^[[HEAD]](%[[R3]], %[[SQ]], %[[E3]] : i32, i32, i32)
// CHECK-NEXT:  ^[[EXIT]](%[[POW:.*]]: i32, %{{.*}}: i32, %{{.*}}: i32):
// CHECK:         %[[RES:.*]] = llvm.select %[[NEG]], %{{.*}}, %[[POW]] : i1, i32
// CHECK-NEXT:    llvm.return %[[RES]] : i32

// LOC-LABEL: llvm.func @ipowi
// LOC:         llvm.icmp "slt" %e, %{{.*}} : i32 loc("{{.*}}convert-to-llvm-power.mlir":[[# @LINE + 2]]:3)
func.func @ipowi(%x: i32, %e: i32) -> i32 {
  %0 = math.ipowi %x, %e : i32
  func.return %0 : i32
}

// -----

// i8 and i64 alike; no call to any library.

// CHECK-LABEL: llvm.func @ipowi_widths(%x: i8, %e: i8, %y: i64, %f: i64)
// CHECK:         llvm.mul %{{.*}}, %{{.*}} : i8
// CHECK-NOT:     llvm.call
// CHECK:         llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK-NOT:     llvm.call
// CHECK:         llvm.return
func.func @ipowi_widths(%x: i8, %e: i8, %y: i64, %f: i64) -> (i8, i64) {
  %0 = math.ipowi %x, %e : i8
  %1 = math.ipowi %y, %f : i64
  func.return %0, %1 : i8, i64
}

// -----

// math.fpowi: the same loop with fmul on |e|, then 1 / x^|e| for negative e, instead of
// llvm.powi (a call to compiler-rt's __powidf2).

// CHECK-LABEL: llvm.func @fpowi(%x: f64, %e: i32) -> f64
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f64) : f64
// CHECK-NEXT:    %{{.*}} = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[NEG:.*]] = llvm.icmp "slt" %e, %[[ZERO]] : i32
// CHECK-NEXT:    %[[MINUS:.*]] = llvm.sub %[[ZERO]], %e : i32
// CHECK-NEXT:    %[[MAG:.*]] = llvm.select %[[NEG]], %[[MINUS]], %e : i1, i32
// CHECK-NEXT:    llvm.br ^{{.*}}(%[[ONE]], %x, %[[MAG]] : f64, f64, i32)
// CHECK:         llvm.fmul
// CHECK:         llvm.fmul
// CHECK:       ^{{.*}}(%[[POW:.*]]: f64, %{{.*}}: f64, %{{.*}}: i32):
// CHECK-NEXT:    %[[INV:.*]] = llvm.fdiv %[[ONE]], %[[POW]] : f64
// CHECK-NEXT:    %[[RES:.*]] = llvm.select %[[NEG]], %[[INV]], %[[POW]] : i1, f64
// CHECK-NEXT:    llvm.return %[[RES]] : f64
// CHECK-NOT:     llvm.powi
func.func @fpowi(%x: f64, %e: i32) -> f64 {
  %0 = math.fpowi %x, %e : f64, i32
  func.return %0 : f64
}

// RUN: mlc-opt %s --split-input-file -p convert-scf-to-cf,convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-scf-to-cf,convert-to-llvm \
// RUN:   | mlc-opt --split-input-file --verify-roundtrip | filecheck %s --check-prefix=LOOP
// RUN: mlc-opt %s --split-input-file -p convert-scf-to-cf,convert-to-llvm --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// Scalar func + arith: one llvm op per arith op, flags dropped, locations kept.

// CHECK-LABEL: llvm.func @scalar(%{{.*}}: f64, %{{.*}}: f64) -> f64
// CHECK-NEXT:    %[[C:.*]] = llvm.mlir.constant(2.500000e+00 : f64) : f64
// CHECK-NEXT:    %[[M:.*]] = llvm.fmul %a, %b : f64
// CHECK-NEXT:    %[[S:.*]] = llvm.fadd %[[M]], %[[C]] : f64
// CHECK-NEXT:    %[[D:.*]] = llvm.fdiv %[[S]], %b : f64
// CHECK-NEXT:    %[[X:.*]] = llvm.fsub %[[D]], %a : f64
// CHECK-NEXT:    %[[MAX:.*]] = llvm.intr.maxnum(%[[X]], %a) : (f64, f64) -> f64
// CHECK-NEXT:    %[[MIN:.*]] = llvm.intr.minnum(%[[MAX]], %b) : (f64, f64) -> f64
// CHECK-NEXT:    %[[LT:.*]] = llvm.fcmp "olt" %a, %b : f64
// CHECK-NEXT:    %[[SEL:.*]] = llvm.select %[[LT]], %[[MIN]], %b : i1, f64
// CHECK-NEXT:    llvm.return %[[SEL]] : f64
// LOC-LABEL:   llvm.func @scalar
// LOC:           llvm.fmul {{.*}} loc("scalar.py":3:7)
func.func @scalar(%a: f64, %b: f64) -> f64 {
  %c = arith.constant 2.5 : f64
  %0 = arith.mulf %a, %b : f64 loc("scalar.py":3:7)
  %1 = arith.addf %0, %c : f64
  %2 = arith.divf %1, %b : f64
  %3 = arith.subf %2, %a : f64
  %4 = arith.maxnumf %3, %a : f64
  %5 = arith.minnumf %4, %b : f64
  %6 = arith.cmpf olt, %a, %b : f64
  %7 = arith.select %6, %5, %b : f64
  func.return %7 : f64
}

// -----

// Integers and index (index is i64), casts, calls and declarations.

// CHECK-LABEL: llvm.func @ints(%{{.*}}: i32, %{{.*}}: i64) -> i64
// CHECK-NEXT:    llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT:    llvm.add
// CHECK-NEXT:    llvm.sub
// CHECK-NEXT:    llvm.mul
// CHECK-NEXT:    llvm.sdiv
// CHECK-NEXT:    llvm.udiv
// CHECK-NEXT:    llvm.srem
// CHECK-NEXT:    llvm.icmp "sle"
// CHECK-NEXT:    %[[SEL:.*]] = llvm.select
// CHECK-NEXT:    %[[W:.*]] = llvm.sext %[[SEL]] : i32 to i64
// CHECK-NEXT:    %[[N:.*]] = llvm.trunc %n : i64 to i16
// CHECK-NEXT:    %[[Z:.*]] = llvm.zext %[[N]] : i16 to i64
// CHECK-NEXT:    llvm.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT:    llvm.fpext %{{.*}} : f32 to f64
// CHECK-NEXT:    llvm.fptrunc %{{.*}} : f64 to f32
// CHECK:         llvm.fptrunc %{{.*}} : f32 to f16
// CHECK-NEXT:    llvm.fpext %{{.*}} : f16 to f64
// CHECK-NEXT:    %[[FI:.*]] = llvm.call_intrinsic "llvm.fptosi.sat.i64.f64"(%{{.*}}) : (f64) -> i64
// CHECK-NEXT:    %[[CALL:.*]] = llvm.call @ext(%[[W]]) : (i64) -> i64
// CHECK-NEXT:    %[[A:.*]] = llvm.add %[[CALL]], %[[FI]] : i64
// CHECK-NEXT:    %[[B:.*]] = llvm.add %[[A]], %[[Z]] : i64
// CHECK-NEXT:    llvm.return %[[B]] : i64
// CHECK:       llvm.func @ext(i64) -> i64
// CHECK-NOT:   arith.
func.func @ints(%x: i32, %n: index) -> i64 {
  %c = arith.constant 7 : i32
  %0 = arith.addi %x, %c : i32
  %1 = arith.subi %0, %x : i32
  %2 = arith.muli %1, %c : i32
  %3 = arith.divsi %2, %c : i32
  %4 = arith.divui %3, %c : i32
  %5 = arith.remsi %4, %c : i32
  %6 = arith.cmpi sle, %5, %x : i32
  %7 = arith.select %6, %5, %x : i32
  %8 = arith.index_cast %7 : i32 to index
  %9 = arith.index_cast %n : index to i16
  %10 = arith.extui %9 : i16 to i64
  %11 = arith.sitofp %7 : i32 to f32
  %12 = arith.extf %11 : f32 to f64
  %13 = arith.truncf %12 : f64 to f16
  %14 = arith.extf %13 : f16 to f64
  %15 = arith.fptosi %14 : f64 to i64
  %16 = arith.index_cast %8 : index to i64
  %17 = func.call @ext(%16) : (i64) -> i64
  %18 = arith.addi %17, %15 : i64
  %19 = arith.addi %18, %10 : i64
  func.return %19 : i64
}
func.func private @ext(i64) -> i64

// -----

// scf.for after convert-scf-to-cf: block arguments (index) become i64 phis.

// LOOP-LABEL: llvm.func @sum_to(%{{.*}}: i64) -> i64
// LOOP:         llvm.br ^[[HEAD:.*]](%{{.*}}, %{{.*}} : i64, i64)
// LOOP:       ^[[HEAD]](%[[I:.*]]: i64, %[[ACC:.*]]: i64):
// LOOP-NEXT:    %[[CMP:.*]] = llvm.icmp "slt" %[[I]], %{{.*}} : i64
// LOOP-NEXT:    llvm.cond_br %[[CMP]], ^[[BODY:.*]], ^[[EXIT:.*]]
// LOOP:       ^[[BODY]]:
// LOOP:         llvm.br ^[[HEAD]]
// LOOP:       ^[[EXIT]]:
// LOOP-NEXT:    llvm.return %[[ACC]] : i64
// LOOP-NOT:   {{arith|cf|scf|func}}\.
func.func @sum_to(%n: i64) -> i64 {
  %lo = arith.constant 0 : index
  %one = arith.constant 1 : index
  %hi = arith.index_cast %n : i64 to index
  %zero = arith.constant 0 : i64
  %r = scf.for %i = %lo to %hi step %one iter_args(%acc = %zero) -> (i64) {
    %ii = arith.index_cast %i : index to i64
    %s = arith.addi %acc, %ii : i64
    scf.yield %s : i64
  }
  func.return %r : i64
}

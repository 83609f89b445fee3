// RUN: mlc-opt %s -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s -p convert-to-llvm | mlc-translate --mlir-to-llvmir | filecheck %s --check-prefix=IR

// Loops that LLVM would otherwise unroll and vectorise around with gathers keep their
// loop: the back edge of a short scalar loop (2 to 16 iterations) inside another loop
// carries `mlc.unroll_disable`, which the LLVM IR translation spells
// `!llvm.loop !{self, !{!"llvm.loop.unroll.disable"}}`. Longer loops, loops with
// unknown bounds, loops computing on vectors, loops around calls, a loop inside no
// other loop and a short loop inside a short loop are left to LLVM.

// A row reduction over 64 x 10 (a loss backward's): the inner loop keeps its loop.
// CHECK-LABEL: llvm.func @rows(
// CHECK:         llvm.br ^[[INNER:bb[0-9]+]](%{{.*}}, %{{.*}} : i64, f32)
// CHECK:         llvm.br ^[[INNER]](%{{.*}}, %{{.*}} : i64, f32) {mlc.unroll_disable}
// CHECK-NOT:     mlc.unroll_disable
// CHECK:         llvm.return
func.func @rows(%a: memref<64x10xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %s = scf.for %j = %c0 to %c10 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<64x10xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[%i] : memref<64xf32>
  }
  func.return
}

// 1024 rows of 10: likewise.
// CHECK-LABEL: llvm.func @many_rows(
// CHECK:         {mlc.unroll_disable}
// CHECK-NOT:     {mlc.unroll_disable}
// CHECK:         llvm.return
func.func @many_rows(%a: memref<1024x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c1024 = arith.constant 1024 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c1024 step %c1 {
    scf.for %j = %c0 to %c10 step %c1 {
      %v = memref.load %a[%i, %j] : memref<1024x10xf32>
      %n = arith.mulf %v, %two : f32
      memref.store %n, %a[%i, %j] : memref<1024x10xf32>
    }
  }
  func.return
}

// A 2 x 2 window inside 4 outputs inside 32 images: the outputs' loop keeps its loop,
// the window's loops (inside a short loop) are left to LLVM to unroll.
// CHECK-LABEL: llvm.func @windows(
// CHECK:         {mlc.unroll_disable}
// CHECK-NOT:     {mlc.unroll_disable}
// CHECK:         llvm.return
func.func @windows(%a: memref<32x8x8xf32>, %out: memref<32x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %low = arith.constant -1.0e30 : f32
  scf.for %n = %c0 to %c32 step %c1 {
    scf.for %o = %c0 to %c4 step %c1 {
      %m = scf.for %kh = %c0 to %c2 step %c1 iter_args(%acc = %low) -> (f32) {
        %r = scf.for %kw = %c0 to %c2 step %c1 iter_args(%acc2 = %acc) -> (f32) {
          %h = arith.addi %o, %kh : index
          %w = arith.addi %o, %kw : index
          %v = memref.load %a[%n, %h, %w] : memref<32x8x8xf32>
          %x = arith.maximumf %acc2, %v : f32
          scf.yield %x : f32
        }
        scf.yield %r : f32
      }
      memref.store %m, %out[%n, %o] : memref<32x4xf32>
    }
  }
  func.return
}

// A column sum over 64 x 512: no short loop; no mark.
// CHECK-LABEL: llvm.func @columns(
// CHECK-NOT:     mlc.unroll_disable
// CHECK:         llvm.return
func.func @columns(%a: memref<64x512xf32>, %out: memref<512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c512 step %c1 {
      %v = memref.load %a[%i, %j] : memref<64x512xf32>
      %s = memref.load %out[%j] : memref<512xf32>
      %n = arith.addf %s, %v : f32
      memref.store %n, %out[%j] : memref<512xf32>
    }
  }
  func.return
}

// Unknown bounds, a vector body and a call: no mark.
// CHECK-LABEL: llvm.func @left_to_llvm(
// CHECK-NOT:     mlc.unroll_disable
// CHECK:         llvm.return
func.func private @kernel(%i: index)
func.func @left_to_llvm(%a: memref<8x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      memref.store %one, %a[%i, %j] : memref<8x16xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = vector.load %a[%i, %c0] : memref<8x16xf32>, vector<16xf32>
      vector.store %v, %a[%j, %c0] : memref<8x16xf32>, vector<16xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      func.call @kernel(%j) : (index) -> ()
    }
  }
  func.return
}

// A short loop inside no other loop, around an `scf.while` (lowered to blocks before
// the loops are looked at): no mark.
// CHECK-LABEL: llvm.func @around_a_while(
// CHECK-NOT:     mlc.unroll_disable
// CHECK:         llvm.return
func.func @around_a_while(%n: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %r = scf.while (%k = %n) : (i64) -> i64 {
      %zero = arith.constant 0 : i64
      %go = arith.cmpi sgt, %k, %zero : i64
      scf.condition(%go) %k : i64
    } do {
    ^bb0(%j: i64):
      %one = arith.constant 1 : i64
      %next = arith.subi %j, %one : i64
      scf.yield %next : i64
    }
  }
  func.return
}

// IR:      define void @"rows"(
// IR:        br label %{{.*}}, !llvm.loop ![[L1:[0-9]+]]
// IR:      define void @"many_rows"(
// IR:        br label %{{.*}}, !llvm.loop ![[L2:[0-9]+]]
// IR:      define void @"left_to_llvm"(
// IR-NOT:    !llvm.loop
// IR:      }
// IR-DAG:  ![[D:[0-9]+]] = !{ !"llvm.loop.unroll.disable" }
// IR-DAG:  ![[L1]] = !{ ![[L1]], ![[D]] }
// IR-DAG:  ![[L2]] = !{ ![[L2]], ![[D]] }

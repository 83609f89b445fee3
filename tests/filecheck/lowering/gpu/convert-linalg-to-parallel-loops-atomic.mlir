// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-linalg-to-parallel-loops --print-debuginfo \
// RUN:   | filecheck %s --check-prefix=LOC

// A loop over a scatter's updates (`mlc.atomic_updates`, bufferized) becomes a parallel
// loop, one iteration an update, whose read-combine-write is one `red` atomic at the
// destination's generic address.

// CHECK-LABEL: func.func @add_f32
// CHECK:         "scf.parallel"(%c0, %n, %c1)
// CHECK-NEXT:    ^{{.+}}(%[[T:.+]]: index):
// CHECK:           %[[U:.+]] = memref.load %u[%[[T]]] : memref<?xf32>
// CHECK-NOT:       memref.load %out
// CHECK:           %[[BASE:.+]] = "memref.extract_aligned_pointer_as_index"(%out)
// CHECK:           %[[AT:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:           llvm.inline_asm has_side_effects "red.add.f32 [$0], $1;", "l,f,~{memory}" %[[AT]], %[[U]] : (i64, f32) -> ()
// CHECK-NOT:       memref.store
// CHECK:           scf.reduce
// CHECK:         func.return %out
// LOC-LABEL:   func.func @add_f32
// LOC:           llvm.inline_asm {{.+}} loc("store")
func.func @add_f32(%out: memref<8x4xf32>, %u: memref<?xf32>, %p: memref<?xindex>, %n: index) -> memref<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<8x4xf32>) {
    %row = memref.load %p[%t] : memref<?xindex>
    %v = memref.load %u[%t] : memref<?xf32>
    %old = memref.load %acc[%row, %c3] : memref<8x4xf32>
    %new = arith.addf %old, %v : f32
    memref.store %new, %acc[%row, %c3] : memref<8x4xf32> loc("store")
    scf.yield %acc : memref<8x4xf32>
  } {mlc.atomic_updates}
  func.return %r : memref<8x4xf32>
}

// -----

// Float max and min work on the bits: a signed max where the update is not negative,
// an unsigned min where it is.

// CHECK-LABEL: func.func @max_f64
// CHECK:         %[[BITS:.+]] = arith.bitcast %{{.+}} : f64 to i64
// CHECK:         llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ge.s64 p, $1, 0; @p red.max.s64 [$0], $1; @!p red.min.u64 [$0], $1; }", "l,l,~{memory}" %{{.+}}, %[[BITS]]
func.func @max_f64(%out: memref<?xf64>, %u: memref<?xf64>, %p: memref<?xindex>, %n: index) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<?xf64>) {
    %at = memref.load %p[%t] : memref<?xindex>
    %v = memref.load %u[%t] : memref<?xf64>
    %old = memref.load %acc[%at] : memref<?xf64>
    %new = arith.maximumf %v, %old : f64
    memref.store %new, %acc[%at] : memref<?xf64>
    scf.yield %acc : memref<?xf64>
  } {mlc.atomic_updates}
  func.return %r : memref<?xf64>
}

// -----

// CHECK-LABEL: func.func @min_i32
// CHECK:         llvm.inline_asm has_side_effects "red.min.s32 [$0], $1;", "l,r,~{memory}"
func.func @min_i32(%out: memref<?xi32>, %u: memref<?xi32>, %p: memref<?xindex>, %n: index) -> memref<?xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<?xi32>) {
    %at = memref.load %p[%t] : memref<?xindex>
    %v = memref.load %u[%t] : memref<?xi32>
    %old = memref.load %acc[%at] : memref<?xi32>
    %new = arith.minsi %old, %v : i32
    memref.store %new, %acc[%at] : memref<?xi32>
    scf.yield %acc : memref<?xi32>
  } {mlc.atomic_updates}
  func.return %r : memref<?xi32>
}

// -----

// Reduction `none`'s writes: the select of the update over the old value becomes a
// store under the condition (the winner writes alone).

// CHECK-LABEL: func.func @winners_write
// CHECK:         "scf.parallel"
// CHECK:           %[[HIT:.+]] = arith.cmpi eq
// CHECK-NOT:       arith.select
// CHECK:           scf.if %[[HIT]] {
// CHECK-NEXT:        memref.store %{{.+}}, %out[%{{.+}}] : memref<?xi1>
// CHECK-NEXT:      }
func.func @winners_write(%out: memref<?xi1>, %u: memref<?xi1>, %p: memref<?xindex>, %w: memref<?xindex>, %n: index) -> memref<?xi1> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<?xi1>) {
    %at = memref.load %p[%t] : memref<?xindex>
    %v = memref.load %u[%t] : memref<?xi1>
    %winner = memref.load %w[%at] : memref<?xindex>
    %hit = arith.cmpi eq, %winner, %t : index
    %old = memref.load %acc[%at] : memref<?xi1>
    %new = arith.select %hit, %v, %old : i1
    memref.store %new, %acc[%at] : memref<?xi1>
    scf.yield %acc : memref<?xi1>
  } {mlc.atomic_updates}
  func.return %r : memref<?xi1>
}

// -----

// What no atomic applies (a product, a strided buffer, a read of another update's
// destination) runs as written on one thread, as `mlc.sequential` loops do.

// CHECK-LABEL: func.func @mul_on_one_thread
// CHECK:         "scf.parallel"(%{{.+}}, %{{.+}}, %{{.+}})
// CHECK-NEXT:    ^{{.+}}(%{{.+}}: index):
// CHECK-NEXT:      scf.for %{{.+}} = %c0 to %n step %c1 {
// CHECK:             arith.mulf
// CHECK:             memref.store
// CHECK-NOT:     inline_asm
func.func @mul_on_one_thread(%out: memref<?xf32>, %u: memref<?xf32>, %p: memref<?xindex>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<?xf32>) {
    %at = memref.load %p[%t] : memref<?xindex>
    %v = memref.load %u[%t] : memref<?xf32>
    %old = memref.load %acc[%at] : memref<?xf32>
    %new = arith.mulf %old, %v : f32
    memref.store %new, %acc[%at] : memref<?xf32>
    scf.yield %acc : memref<?xf32>
  } {mlc.atomic_updates}
  func.return %r : memref<?xf32>
}

// -----

// CHECK-LABEL: func.func @strided_on_one_thread
// CHECK:         scf.for
// CHECK-NOT:     inline_asm
func.func @strided_on_one_thread(%out: memref<4xf32, strided<[2]>>, %u: memref<?xf32>, %p: memref<?xindex>, %n: index) -> memref<4xf32, strided<[2]>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<4xf32, strided<[2]>>) {
    %at = memref.load %p[%t] : memref<?xindex>
    %v = memref.load %u[%t] : memref<?xf32>
    %old = memref.load %acc[%at] : memref<4xf32, strided<[2]>>
    %new = arith.addf %old, %v : f32
    memref.store %new, %acc[%at] : memref<4xf32, strided<[2]>>
    scf.yield %acc : memref<4xf32, strided<[2]>>
  } {mlc.atomic_updates}
  func.return %r : memref<4xf32, strided<[2]>>
}

// -----

// CHECK-LABEL: func.func @reads_another_destination
// CHECK:         scf.for
// CHECK-NOT:     inline_asm
func.func @reads_another_destination(%out: memref<?xf32>, %p: memref<?xindex>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %out) -> (memref<?xf32>) {
    %at = memref.load %p[%t] : memref<?xindex>
    %v = memref.load %acc[%t] : memref<?xf32>
    %old = memref.load %acc[%at] : memref<?xf32>
    %new = arith.addf %old, %v : f32
    memref.store %new, %acc[%at] : memref<?xf32>
    scf.yield %acc : memref<?xf32>
  } {mlc.atomic_updates}
  func.return %r : memref<?xf32>
}

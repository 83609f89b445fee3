// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm --print-debuginfo | filecheck %s --check-prefix=LOC

// bf16 is i16 in LLVM (its bits); arithmetic on it runs in f32 between an extension
// (the bits shifted into the high half of an f32) and a round-to-nearest-even
// truncation on the bit pattern, with NaN kept quiet. No `bfloat` and no library call.

// CHECK-LABEL: llvm.func @add(%x: i16, %y: i16) -> i16
// CHECK-NEXT:    %[[XW:.*]] = llvm.zext %x : i16 to i32
// CHECK-NEXT:    %[[S1:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[XH:.*]] = llvm.shl %[[XW]], %[[S1]] : i32
// CHECK-NEXT:    %[[X:.*]] = llvm.bitcast %[[XH]] : i32 to f32
// CHECK:         %[[Y:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    %[[SUM:.*]] = llvm.fadd %[[X]], %[[Y]] : f32
// CHECK-NEXT:    %[[BITS:.*]] = llvm.bitcast %[[SUM]] : f32 to i32
// CHECK-NEXT:    %[[S2:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT:    %[[KEPT:.*]] = llvm.lshr %[[BITS]], %[[S2]] : i32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:    %[[ODD:.*]] = llvm.and %[[KEPT]], %[[ONE]] : i32
// CHECK-NEXT:    %[[HALF:.*]] = llvm.mlir.constant(32767 : i32) : i32
// CHECK-NEXT:    %[[BIAS:.*]] = llvm.add %[[ODD]], %[[HALF]] : i32
// CHECK-NEXT:    %[[BIASED:.*]] = llvm.add %[[BITS]], %[[BIAS]] : i32
// CHECK:         %[[ROUNDED:.*]] = llvm.lshr %[[BIASED]], %{{.*}} : i32
// CHECK:         %[[QUIET:.*]] = llvm.or %[[KEPT]], %{{.*}} : i32
// CHECK:         llvm.icmp "ugt"
// CHECK:         %[[R:.*]] = llvm.trunc %{{.*}} : i32 to i16
// CHECK-NEXT:    llvm.return %[[R]] : i16
// CHECK-NOT:     bfloat

// LOC-LABEL: llvm.func @add
// LOC:         llvm.fadd {{.*}} loc("{{.*}}convert-to-llvm-bf16.mlir":[[# @LINE + 2]]:3)
func.func @add(%x: bf16, %y: bf16) -> bf16 {
  %0 = arith.addf %x, %y : bf16
  func.return %0 : bf16
}

// -----

// Constants are their bit patterns (1.0 is 0x3f80, -2.0 is 0xc000).

// CHECK-LABEL: llvm.func @constants() -> !llvm.struct<(i16, vector<4xi16>)>
// CHECK-NEXT:    llvm.mlir.constant(16256 : i16) : i16
// CHECK-NEXT:    llvm.mlir.constant(dense<-16384> : vector<4xi16>) : vector<4xi16>
func.func @constants() -> (bf16, vector<4xbf16>) {
  %0 = arith.constant 1.0 : bf16
  %1 = arith.constant dense<-2.0> : vector<4xbf16>
  func.return %0, %1 : bf16, vector<4xbf16>
}

// -----

// f64 -> bf16 rounds to odd in f32 first, so the second rounding is exact; casts to
// and from integers and compares go through f32.

// CHECK-LABEL: llvm.func @casts
// CHECK:         %[[W:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT:    llvm.fpext %[[W]] : f32 to f64
// CHECK-NEXT:    llvm.fptrunc %d : f64 to f32
// CHECK:         llvm.select
// CHECK:         llvm.trunc %{{.*}} : i32 to i16
// CHECK:         llvm.sitofp %i : i32 to f32
// CHECK:         llvm.trunc %{{.*}} : i32 to i16
// CHECK:         llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"
// CHECK:         llvm.fcmp "olt" %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     fptrunc {{.*}} to bf16
func.func @casts(%x: bf16, %d: f64, %i: i32) -> (f64, bf16, bf16, i32, i1) {
  %0 = arith.extf %x : bf16 to f64
  %1 = arith.truncf %d : f64 to bf16
  %2 = arith.sitofp %i : i32 to bf16
  %3 = arith.fptosi %x : bf16 to i32
  %4 = arith.cmpf olt, %x, %x : bf16
  func.return %0, %1, %2, %3, %4 : f64, bf16, bf16, i32, i1
}

// -----

// Loads and stores move i16 (vectors too); math runs on the f32 value.

// CHECK-LABEL: llvm.func @memory
// CHECK:         %[[V:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK-NEXT:    llvm.zext %[[V]] : i16 to i32
// CHECK:         llvm.call_intrinsic "llvm.roundeven.f32"
// CHECK:         llvm.store %{{.*}}, %{{.*}} : i16, !llvm.ptr
// CHECK:         %[[W:.*]] = llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<8xi16>
// CHECK-NEXT:    llvm.zext %[[W]] : vector<8xi16> to vector<8xi32>
// CHECK:         llvm.fmul %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         llvm.trunc %{{.*}} : vector<8xi32> to vector<8xi16>
// CHECK-NEXT:    llvm.extractvalue
// CHECK:         llvm.store %{{.*}}, %{{.*}} {alignment = 2 : i64} : vector<8xi16>, !llvm.ptr
func.func @memory(%m: memref<?xbf16>, %i: index) {
  %v = memref.load %m[%i] : memref<?xbf16>
  %e = math.exp %v : bf16
  memref.store %e, %m[%i] : memref<?xbf16>
  %w = vector.load %m[%i] : memref<?xbf16>, vector<8xbf16>
  %s = arith.mulf %w, %w : vector<8xbf16>
  vector.store %s, %m[%i] : memref<?xbf16>, vector<8xbf16>
  func.return
}

// -----

// A bf16 global holds the bit patterns.

// CHECK: llvm.mlir.global internal constant @weights(dense<[16256, -16640]> : tensor<2xi16>)
"memref.global"() <{sym_name = "weights", sym_visibility = "private", type = memref<2xbf16>, initial_value = dense<[1.0, -0.5]> : tensor<2xbf16>, constant}> : () -> ()

// -----

// A loop that only accumulates a bf16 sum carries it in f32 (a product multiplied in
// f32 too) and rounds once after the loop: the GPU's register-tiled matmuls sum so.

// CHECK-LABEL: llvm.func @dot
// CHECK:         llvm.br ^bb1(%{{.*}}, %{{.*}} : i64, f32)
// CHECK-NEXT:  ^bb1(%i: i64, %[[ACC:.*]]: f32):
// CHECK:         %[[P:.*]] = llvm.fmul %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
// CHECK-NEXT:    %[[S:.*]] = llvm.fadd %[[ACC]], %[[P]] {fastmathFlags = #llvm.fastmath<reassoc,contract>} : f32
// CHECK:         llvm.br ^bb1(%{{.*}}, %[[S]] : i64, f32)
// CHECK:         llvm.trunc %{{.*}} : i32 to i16
// CHECK-NOT:     llvm.fadd
func.func @dot(%a: memref<?xbf16>, %b: memref<?xbf16>, %n: index) -> bf16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : bf16
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (bf16) {
    %x = memref.load %a[%i] : memref<?xbf16>
    %y = memref.load %b[%i] : memref<?xbf16>
    %p = arith.mulf %x, %y fastmath<reassoc,contract> : bf16
    %t = arith.addf %acc, %p fastmath<reassoc,contract> : bf16
    scf.yield %t : bf16
  }
  func.return %s : bf16
}

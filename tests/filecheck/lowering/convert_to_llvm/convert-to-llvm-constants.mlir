// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p convert-to-llvm | mlc-opt --split-input-file --verify-roundtrip > /dev/null

// A function's scalar constants are made once per value and type, at the top of its
// entry block, in order of first use: the arith constants and the strides of the
// addresses alike, in the loop's body as well as before it. The same number of
// another type is another constant.

// CHECK-LABEL: llvm.func @shared(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %x: i32) -> i32
// CHECK-NEXT:    %[[C0:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[C1:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[C7:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT:    %[[C8:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NOT:     llvm.mlir.constant
// CHECK:         llvm.icmp "slt" %{{.*}}, %[[C8]] : i64
// CHECK:         llvm.add %{{.*}}, %[[C7]] : i32
// CHECK:         llvm.add %{{.*}}, %[[C1]] : i64
// CHECK-NOT:     llvm.mlir.constant
// CHECK:         llvm.getelementptr inbounds %{{.*}}[%[[C1]]]
// CHECK-NOT:     llvm.mlir.constant
// CHECK:         llvm.return
func.func @shared(%m: memref<8xi32>, %x: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : i32
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %x) -> (i32) {
    %v = memref.load %m[%i] : memref<8xi32>
    %s = arith.addi %v, %c7 : i32
    %t = arith.addi %acc, %s : i32
    scf.yield %t : i32
  }
  %c1_again = arith.constant 1 : index
  %v8 = memref.load %m[%c1_again] : memref<8xi32>
  %sum = arith.addi %r, %v8 : i32
  func.return %sum : i32
}

// -----

// Floats are shared by their bits: 0.0 and -0.0 stay two constants, 0.0 used twice
// is one. Each function has its own constants.

// CHECK-LABEL: llvm.func @zeros(%x: f32) -> f32
// CHECK-NEXT:    %[[Z:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    %[[NZ:.*]] = llvm.mlir.constant(-0.000000e+00 : f32) : f32
// CHECK-NEXT:    %[[A:.*]] = llvm.fadd %x, %[[Z]] : f32
// CHECK-NEXT:    %[[B:.*]] = llvm.fadd %[[A]], %[[NZ]] : f32
// CHECK-NEXT:    %[[C:.*]] = llvm.fmul %[[B]], %[[Z]] : f32
// CHECK-NEXT:    llvm.return %[[C]] : f32
// CHECK-LABEL: llvm.func @other(%y: f32) -> f32
// CHECK-NEXT:    %[[Z2:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT:    %[[D:.*]] = llvm.fadd %y, %[[Z2]] : f32
func.func @zeros(%x: f32) -> f32 {
  %z = arith.constant 0.0 : f32
  %nz = arith.constant -0.0 : f32
  %z2 = arith.constant 0.0 : f32
  %a = arith.addf %x, %z : f32
  %b = arith.addf %a, %nz : f32
  %c = arith.mulf %b, %z2 : f32
  func.return %c : f32
}
func.func @other(%y: f32) -> f32 {
  %z = arith.constant 0.0 : f32
  %d = arith.addf %y, %z : f32
  func.return %d : f32
}

// -----

// Vector constants stay where they are used: they are not shared.

// CHECK-LABEL: llvm.func @vectors
// CHECK:         llvm.fadd
// CHECK-NEXT:    llvm.mlir.constant(dense<1.000000e+00> : vector<4xf32>) : vector<4xf32>
// CHECK-NEXT:    llvm.fadd
func.func @vectors(%v: vector<4xf32>) -> vector<4xf32> {
  %a = arith.addf %v, %v : vector<4xf32>
  %one = arith.constant dense<1.0> : vector<4xf32>
  %b = arith.addf %a, %one : vector<4xf32>
  func.return %b : vector<4xf32>
}

// RUN: mlc-opt %s --verify-diagnostics -p convert-to-llvm

// Parallel loops with reductions are not lowered: a located error, the module untouched.

func.func @sum(%a: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{'scf.parallel' op with reductions is not supported by convert-to-llvm}}
  %r = "scf.parallel"(%c0, %n, %c1, %z) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %x = memref.load %a[%i] : memref<?xf32>
    "scf.reduce"(%x) ({
    ^bb1(%l: f32, %r2: f32):
      %s = arith.addf %l, %r2 : f32
      "scf.reduce.return"(%s) : (f32) -> ()
    }) : (f32) -> ()
  }) : (index, index, index, f32) -> f32
  func.return %r : f32
}

// RUN: mlc-opt %s -p convert-contractions-to-gpu | mlc-opt --verify-roundtrip | filecheck %s

// The kernels convert-contractions-to-gpu prints parse back and print the same. One
// contraction with a fused epilogue has every kind of op the f32 kernels are made of;
// convert-contractions-to-gpu.mlir checks their structure (its whole output, 2.6 MB,
// takes a minute to parse again).

// CHECK-LABEL: func.func @epilogue
// CHECK:         gpu.launch
// CHECK:           memref.alloca() : memref<{{.+}}, 3 : i64>
// CHECK:           llvm.inline_asm has_side_effects "{{.*}}cp.async
// CHECK:           gpu.barrier
// CHECK:           vector.load
// CHECK:           math.fma
// CHECK:           arith.maximumf
// CHECK:           gpu.terminator
func.func @epilogue(%a: memref<?x?xf32>, %b: memref<?x64xf32>, %bias: memref<?xf32>, %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (j)>, affine_map<(i, k, j) -> (i, j)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b, %bias : memref<?x?xf32>, memref<?x64xf32>, memref<?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    %last = arith.constant 63 : index
    %k = linalg.index 1 : index
    %is_last = arith.cmpi eq, %k, %last : index
    %r = scf.if %is_last -> (f32) {
      %zero = arith.constant 0.0 : f32
      %t = arith.addf %s, %z : f32
      %u = arith.maximumf %t, %zero : f32
      scf.yield %u : f32
    } else {
      scf.yield %s : f32
    }
    linalg.yield %r : f32
  }
  func.return
}

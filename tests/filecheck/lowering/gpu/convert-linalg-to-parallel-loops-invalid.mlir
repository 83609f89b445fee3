// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p convert-linalg-to-parallel-loops

func.func @tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{requires buffer semantics: run bufferize before this pass}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

func.func @named(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'linalg.matmul' is not supported by convert-linalg-to-parallel-loops (convert-ml-to-linalg emits linalg.generic only)}}
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  func.return
}

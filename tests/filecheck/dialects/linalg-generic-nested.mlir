// RUN: mlc-opt %s --verify-roundtrip | filecheck %s
// RUN: mlc-opt %s | mlc-opt | filecheck %s

// A linalg.generic in the body of another parses (the parenthesised result types
// of the outer one included) and round-trips.

#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @nested
// CHECK:         linalg.generic
// CHECK:           linalg.generic
// CHECK:             arith.addf
// CHECK:             linalg.yield
// CHECK:           } -> tensor<4xf32>
// CHECK:           tensor.extract
// CHECK:           linalg.yield
// CHECK:         } -> (tensor<4xf32>, tensor<4xf32>)
func.func @nested(%x: tensor<4xf32>, %o: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%o, %o : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %b2: f32):
    %e = tensor.empty() : tensor<4xf32>
    %in = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb1(%c: f32, %d: f32):
      %s = arith.addf %c, %a : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %i0 = arith.constant 0 : index
    %v = tensor.extract %in[%i0] : tensor<4xf32>
    linalg.yield %v, %a : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// RUN: mlc-opt %s -p 'convert-ml-to-linalg{scatter-group-pairs=100000}' | filecheck %s
// RUN: mlc-opt %s -p 'convert-ml-to-linalg{scatter-group-pairs=0}' | filecheck %s --check-prefix=ALL
// RUN: mlc-opt %s -p 'convert-ml-to-linalg{scatter-group-pairs=-1}' | filecheck %s --check-prefix=NEVER

// `scatter-group-pairs` moves the threshold of the grouped form: at 100000 pairs the
// 65 rows x 64 tuples of this scatter_nd keep the walk over every tuple; at 0 even a
// scatter of 4 x 3 pairs is grouped; at -1 (the GPU pipeline's) none is, not even one of
// sizes known only at run time. Grouped, a scatter of rows takes the loop over its tuples
// (scatter_rows.py), one of elements the three counting loops (scatter_grouped.py).

// CHECK-LABEL: func.func @scatter_nd_rows
// CHECK-NOT:     mlc.sequential
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT:     mlc.sequential
// CHECK-LABEL: func.func @scatter_nd_dynamic
// CHECK:         tensor.insert_slice
// CHECK-LABEL: func.func @scatter_nd_elements
// CHECK-COUNT-3: } {mlc.sequential}

// ALL-LABEL:   func.func @scatter_nd_rows
// ALL:           tensor.insert_slice
// ALL-LABEL:   func.func @scatter_nd_small
// ALL:           tensor.insert_slice
// ALL-LABEL:   func.func @scatter_nd_dynamic
// ALL:           tensor.insert_slice
// ALL-LABEL:   func.func @scatter_nd_elements
// ALL-COUNT-3:   } {mlc.sequential}

// NEVER-NOT:     mlc.sequential
// NEVER-NOT:     tensor.insert_slice
func.func @scatter_nd_rows(%x: tensor<65x3xf32>, %i: tensor<64x1xi64>, %u: tensor<64x3xf32>) -> tensor<65x3xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<65x3xf32>, tensor<64x1xi64>, tensor<64x3xf32>) -> tensor<65x3xf32>
  func.return %s : tensor<65x3xf32>
}

func.func @scatter_nd_small(%x: tensor<4x2xf32>, %i: tensor<3x1xi64>, %u: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %s = ml.scatter_nd %x, %i, %u : (tensor<4x2xf32>, tensor<3x1xi64>, tensor<3x2xf32>) -> tensor<4x2xf32>
  func.return %s : tensor<4x2xf32>
}

func.func @scatter_nd_dynamic(%x: tensor<?x3xf32>, %i: tensor<?x1xi64>, %u: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<?x3xf32>, tensor<?x1xi64>, tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %s : tensor<?x3xf32>
}

func.func @scatter_nd_elements(%x: tensor<4x3xf32>, %i: tensor<?x2xi64>, %u: tensor<?xf32>) -> tensor<4x3xf32> {
  %s = ml.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<4x3xf32>, tensor<?x2xi64>, tensor<?xf32>) -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}

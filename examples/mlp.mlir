// A two-layer perceptron over a batch of flattened 28x28 images (the batch size is
// dynamic): softmax(relu(x @ w1 + b1) @ w2 + b2).
func.func @mlp(%x: tensor<?x784xf32>, %w1: tensor<784x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x10xf32>, %b2: tensor<10xf32>) -> tensor<?x10xf32> {
  %h = ml.matmul %x, %w1 : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  %hb = ml.add %h, %b1 : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %a = ml.relu %hb : (tensor<?x128xf32>) -> tensor<?x128xf32>
  %o = ml.matmul %a, %w2 : (tensor<?x128xf32>, tensor<128x10xf32>) -> tensor<?x10xf32>
  %ob = ml.add %o, %b2 : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %p = ml.softmax %ob {axis = -1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  func.return %p : tensor<?x10xf32>
}

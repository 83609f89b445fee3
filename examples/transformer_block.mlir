// A pre-norm transformer block (one head, 64 tokens, width 128):
//   h = x + softmax(q k^T / sqrt(d)) v,   q, k, v = ln1(x) @ wq, wk, wv
//   y = h + gelu(ln2(h) @ w1) @ w2
func.func @block(%x: tensor<64x128xf32>,
                 %g1: tensor<128xf32>, %be1: tensor<128xf32>,
                 %wq: tensor<128x128xf32>, %wk: tensor<128x128xf32>, %wv: tensor<128x128xf32>,
                 %g2: tensor<128xf32>, %be2: tensor<128xf32>,
                 %w1: tensor<128x512xf32>, %w2: tensor<512x128xf32>) -> tensor<64x128xf32> {
  %scale = arith.constant dense<0.0883883461> : tensor<f32>
  %n1 = ml.layer_norm %x, %g1, %be1 {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %q = ml.matmul %n1, %wq : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
  %k = ml.matmul %n1, %wk : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
  %v = ml.matmul %n1, %wv : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
  %kt = ml.transpose %k {perm = array<i64: 1, 0>} : (tensor<64x128xf32>) -> tensor<128x64xf32>
  %s = ml.matmul %q, %kt : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
  %ss = ml.mul %s, %scale : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
  %p = ml.softmax %ss {axis = -1 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %att = ml.matmul %p, %v : (tensor<64x64xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %h = ml.add %x, %att : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %n2 = ml.layer_norm %h, %g2, %be2 {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %u = ml.matmul %n2, %w1 : (tensor<64x128xf32>, tensor<128x512xf32>) -> tensor<64x512xf32>
  %a = ml.gelu %u {approximate = "tanh"} : (tensor<64x512xf32>) -> tensor<64x512xf32>
  %d = ml.matmul %a, %w2 : (tensor<64x512xf32>, tensor<512x128xf32>) -> tensor<64x128xf32>
  %y = ml.add %h, %d : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  func.return %y : tensor<64x128xf32>
}

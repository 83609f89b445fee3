// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p matmul-chain-reorder
// RUN: mlc-opt %s --split-input-file -p matmul-chain-reorder --remarks 2>&1 >/dev/null \
// RUN:   | filecheck %s --check-prefix=REMARKS
// RUN: mlc-opt %s --split-input-file -p matmul-chain-reorder 2>&1 >/dev/null \
// RUN:   | filecheck %s --check-prefix=QUIET --allow-empty

// matmul-chain-reorder explains itself on the root of every chain it considers.
// Remarks are off by default; `--remarks` prints them on stderr (never stdout), and
// `--verify-diagnostics` always captures them, to match the expected-remark comments.

// REMARKS: matmul-chain-reorder-remarks.mlir:{{[0-9]+}}:3: remark: 'ml.matmul' op reordered a chain of 2 matmuls: 4000000 -> 4000 flops
// REMARKS: remark: 'ml.matmul' op reordered a chain of 3 matmuls: 240 -> 176 flops
// QUIET-NOT: remark
func.func @reordered(%e: tensor<1000x1xf32>, %u: tensor<1x1000xf32>, %p: tensor<1000x1xf32>) -> tensor<1000x1xf32> {
  %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
  // expected-remark @+1 {{reordered a chain of 2 matmuls: 4000000 -> 4000 flops}}
  %eup = ml.matmul %eu, %p : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
  func.return %eup : tensor<1000x1xf32>
}

// -----

func.func @four_chain(%a: tensor<2x10xf32>, %b: tensor<10x2xf32>, %c: tensor<2x10xf32>, %d: tensor<10x2xf32>) -> tensor<2x2xf32> {
  %ab = ml.matmul %a, %b : (tensor<2x10xf32>, tensor<10x2xf32>) -> tensor<2x2xf32>
  %abc = ml.matmul %ab, %c : (tensor<2x2xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  // expected-remark @+1 {{reordered a chain of 3 matmuls: 240 -> 176 flops}}
  %abcd = ml.matmul %abc, %d : (tensor<2x10xf32>, tensor<10x2xf32>) -> tensor<2x2xf32>
  func.return %abcd : tensor<2x2xf32>
}

// -----

func.func @already_optimal(%a: tensor<2x10xf32>, %b: tensor<10x2xf32>, %c: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %ab = ml.matmul %a, %b : (tensor<2x10xf32>, tensor<10x2xf32>) -> tensor<2x2xf32>
  // expected-remark @+1 {{chain not reordered: already optimal (160 flops)}}
  %abc = ml.matmul %ab, %c : (tensor<2x2xf32>, tensor<2x10xf32>) -> tensor<2x10xf32>
  func.return %abc : tensor<2x10xf32>
}

// -----

func.func @dynamic_decided(%e: tensor<?x1xf32>, %u: tensor<1x?xf32>, %p: tensor<?x1xf32>) -> tensor<?x1xf32> {
  %eu = ml.matmul %e, %u : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  // expected-remark @+1 {{reordered a chain of 2 matmuls: 4*d0*d2 -> 2*d0 + 2*d2 flops}}
  %eup = ml.matmul %eu, %p : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  func.return %eup : tensor<?x1xf32>
}

// -----

func.func @dynamic_undecided(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %ab = ml.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // expected-remark @+1 {{chain not reordered: the best order depends on dynamic dims (d0, d1, d2, d3)}}
  %abc = ml.matmul %ab, %c : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %abc : tensor<?x?xf32>
}

// -----

func.func @scalar_and_transpose(%a: tensor<100x1xf32>, %b: tensor<100x1xf32>, %s: tensor<f32>) -> tensor<100x1xf32> {
  %at = ml.transpose %a {perm = array<i64: 1, 0>} : (tensor<100x1xf32>) -> tensor<1x100xf32>
  %aat = ml.matmul %a, %at : (tensor<100x1xf32>, tensor<1x100xf32>) -> tensor<100x100xf32>
  %saat = ml.mul %s, %aat : (tensor<f32>, tensor<100x100xf32>) -> tensor<100x100xf32>
  // expected-remark @+1 {{reordered a chain of 2 matmuls: 50000 -> 401 flops}}
  %r = ml.matmul %saat, %b : (tensor<100x100xf32>, tensor<100x1xf32>) -> tensor<100x1xf32>
  func.return %r : tensor<100x1xf32>
}

// -----

func.func @broadcast_batch(%e: tensor<100x1xf32>, %u: tensor<4x1x100xf32>, %p: tensor<4x100x1xf32>) -> tensor<4x100x1xf32> {
  %eu = ml.matmul %e, %u : (tensor<100x1xf32>, tensor<4x1x100xf32>) -> tensor<4x100x100xf32>
  // expected-remark @+1 {{chain not reordered: batch dimensions differ}}
  %eup = ml.matmul %eu, %p : (tensor<4x100x100xf32>, tensor<4x100x1xf32>) -> tensor<4x100x1xf32>
  func.return %eup : tensor<4x100x1xf32>
}

// -----

func.func @intermediate_with_two_uses(%e: tensor<1000x1xf32>, %u: tensor<1x1000xf32>, %p: tensor<1000x1xf32>) -> (tensor<1000x1xf32>, tensor<1000x1000xf32>) {
  // expected-remark @+1 {{chain stops here: result has 2 uses}}
  %eu = ml.matmul %e, %u : (tensor<1000x1xf32>, tensor<1x1000xf32>) -> tensor<1000x1000xf32>
  %eup = ml.matmul %eu, %p : (tensor<1000x1000xf32>, tensor<1000x1xf32>) -> tensor<1000x1xf32>
  func.return %eup, %eu : tensor<1000x1xf32>, tensor<1000x1000xf32>
}

// -----

// A single product is not a chain: nothing to say.
func.func @single_product(%a: tensor<2x10xf32>, %b: tensor<10x2xf32>) -> tensor<2x2xf32> {
  %ab = ml.matmul %a, %b : (tensor<2x10xf32>, tensor<10x2xf32>) -> tensor<2x2xf32>
  func.return %ab : tensor<2x2xf32>
}

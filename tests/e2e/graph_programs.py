"""
Programs that exercise the graph passes together, for the pipeline's tests: the
examples, plus small ones where folding, shape inference, chain reordering and
hoisting enable one another.
"""

from pathlib import Path

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.mlir"))

# name -> MLIR text of a module whose first public function is the entry point.
PROGRAMS: dict[str, str] = {
    "folded_weights": """
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0],
                             [3.0, 1.0, -2.0, 1.0]]> : tensor<3x4xf32>
  %wt = ml.transpose %w {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %s = arith.constant dense<[2, -1]> : tensor<2xi64>
  %flat = ml.reshape %wt, %s : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %scaled = ml.mul %flat, %two : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %back = ml.reshape %scaled : (tensor<?x?xf32>) -> tensor<4x3xf32>
  %y = ml.matmul %x, %back : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %r = ml.relu %y : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %rr = ml.relu %r : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %rr : tensor<?x3xf32>
}
""",
    "chain_in_loop": """
func.func @f(%a: tensor<64x2xf32>, %b: tensor<2x64xf32>, %p0: tensor<64x3xf32>,
             %s: tensor<f32>) -> tensor<64x3xf32> {
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %step = arith.constant 1 : index
  %r = scf.for %i = %lo to %hi step %step iter_args(%p = %p0) -> (tensor<64x3xf32>) {
    %ab = ml.matmul %a, %b : (tensor<64x2xf32>, tensor<2x64xf32>) -> tensor<64x64xf32>
    %t = ml.transpose %ab {perm = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %st = ml.mul %t, %s : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
    %q = ml.matmul %st, %p : (tensor<64x64xf32>, tensor<64x3xf32>) -> tensor<64x3xf32>
    %n = ml.tanh %q : (tensor<64x3xf32>) -> tensor<64x3xf32>
    scf.yield %n : tensor<64x3xf32>
  }
  func.return %r : tensor<64x3xf32>
}
""",
    "integer_constants": """
func.func @f(%x: tensor<5xi32>) -> (tensor<5xi32>, tensor<5xi1>) {
  %a = arith.constant dense<[7, -7, 9, 100, -3]> : tensor<5xi32>
  %b = arith.constant dense<[2, 2, -4, 7, 3]> : tensor<5xi32>
  %q = ml.div %a, %b : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %z = ml.sub %x, %x : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %s = ml.add %q, %z : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %m = ml.mul %s, %x : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %c = ml.cmp "lt", %m, %q : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
  func.return %m, %c : tensor<5xi32>, tensor<5xi1>
}
""",
}

"""Short scalar loops inside a loop keep their loop in LLVM (`loop_hints`), same results."""

import numpy as np

import mlc
from mlc import ops
from mlc.backend.jit import JITModule
from mlc.ir import parse_module
from mlc.lowering.convert_to_llvm.loop_hints import UNROLL_DISABLE, mark_short_loops
from mlc.registry import make_context, parse_pipeline

ROWS = """
func.func @rows(%a: memref<64x10xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %s = scf.for %j = %c0 to %c10 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %a[%i, %j] : memref<64x10xf32>
      %e = math.exp %v : f32
      %n = arith.addf %acc, %e : f32
      scf.yield %n : f32
    }
    memref.store %s, %out[%i] : memref<64xf32>
  }
  func.return
}
"""

# The rows' loop of 10 inside a loop of 4 inside the 64.
NESTED = """
func.func @nested(%a: memref<64x4x10xf32>, %out: memref<64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %k = %c0 to %c4 step %c1 {
      %s = scf.for %j = %c0 to %c10 step %c1 iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %a[%i, %k, %j] : memref<64x4x10xf32>
        %n = arith.addf %acc, %v : f32
        scf.yield %n : f32
      }
      memref.store %s, %out[%i, %k] : memref<64x4xf32>
    }
  }
  func.return
}
"""


def _lowered(text: str):
    module = parse_module(text)
    for module_pass in parse_pipeline("convert-to-llvm"):
        module_pass.apply(make_context(), module)
    return module


def test_the_short_inner_loop_is_marked():
    module = parse_module(ROWS)
    assert mark_short_loops(module) == 1
    assert str(module).count(UNROLL_DISABLE) == 1


def test_a_short_loop_inside_a_short_loop_is_left_to_llvm():
    module = parse_module(NESTED)
    assert mark_short_loops(module) == 1  # the 4, not the 10 inside it


def test_kept_loops_have_no_gathers():
    optimized = JITModule(_lowered(ROWS)).optimized_ir
    assert "masked.gather" not in optimized
    assert "llvm.loop.unroll.disable" in optimized


def test_log_softmax_loss_and_gradient_match_numpy():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((64, 10)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]

    def loss(z, y):
        shifted = z - ops.max(z, axis=-1, keepdims=True)
        log_probs = shifted - ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
        return -ops.sum(y * log_probs) / z.shape[0]

    value, (grad,) = mlc.jit(mlc.value_and_grad(loss, (0,)))(logits, labels)
    z = logits.astype(np.float64)
    softmax = np.exp(z - z.max(-1, keepdims=True))
    softmax /= softmax.sum(-1, keepdims=True)
    expected = -np.sum(labels * np.log(softmax)) / 64
    np.testing.assert_allclose(value, expected, rtol=1e-5)
    np.testing.assert_allclose(grad, (softmax - labels) / 64, rtol=1e-4, atol=1e-6)

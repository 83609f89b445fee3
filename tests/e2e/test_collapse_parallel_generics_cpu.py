"""
Elementwise programs whose inner dim is short run as one flat loop
(`collapse-parallel-generics`) and give numpy's results: SGD-like updates with a
scalar, ranks 2 and 3, row counts that do and do not divide among threads, next to a
broadcast that stays a nest.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.ir import parse_module
from mlc.pipeline import run_stage

RNG = np.random.default_rng()


def update(p, g, v):
    v = 0.9 * v + g
    return p - 0.05 * v, v


def exp_plus_bias(x, b):
    return ops.exp(x) + b


@pytest.mark.parametrize("shape", [(1024, 10), (37, 3), (5, 7, 3), (1, 15)])
def test_update_matches_numpy(shape):
    p, g, v = (RNG.standard_normal(shape).astype(np.float32) for _ in range(3))
    new_p, new_v = mlc.jit(update)(p, g, v)
    want_v = 0.9 * v + g
    np.testing.assert_allclose(new_v, want_v, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(new_p, p - 0.05 * want_v, rtol=1e-6, atol=1e-6)


def test_broadcast_next_to_flat_loop():
    x = RNG.standard_normal((64, 10)).astype(np.float32)
    b = RNG.standard_normal(10).astype(np.float32)
    np.testing.assert_allclose(mlc.jit(exp_plus_bias)(x, b), np.exp(x) + b, rtol=1e-5, atol=1e-5)


def test_update_runs_as_one_loop():
    """The 1024x10 update reaches the loops as one flat generic, not a nest."""
    text = """
func.func @update(%p: tensor<1024x10xf32>, %g: tensor<1024x10xf32>) -> tensor<1024x10xf32> {
  %s = arith.constant dense<0.05> : tensor<f32>
  %d = ml.mul %s, %g : (tensor<f32>, tensor<1024x10xf32>) -> tensor<1024x10xf32>
  %r = ml.sub %p, %d : (tensor<1024x10xf32>, tensor<1024x10xf32>) -> tensor<1024x10xf32>
  func.return %r : tensor<1024x10xf32>
}
"""
    module = parse_module(text)
    for stage in ("mlc", "linalg", "loops"):
        run_stage(module, stage)
    printed = str(module)
    assert "into memref<10240xf32>" in printed

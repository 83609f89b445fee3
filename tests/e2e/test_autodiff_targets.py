"""A jitted training step (forward, backward, SGD update) on each target, against numpy."""

import numpy as np

import mlc
from mlc import ops
from tests.gpu.targets import compile_for, jit_for


def loss(w, b, x, y):
    return ops.mean((ops.tanh(x @ w + b) - y) ** 2)


def step(w, b, x, y):
    value, (dw, db) = mlc.value_and_grad(loss, argnums=(0, 1))(w, b, x, y)
    return value, w - 0.5 * dw, b - 0.5 * db


def step_numpy(w, b, x, y):
    t = np.tanh(x @ w + b)
    dz = 2 * (t - y) / t.size * (1 - t * t)
    return np.mean((t - y) ** 2), w - 0.5 * x.T @ dz, b - 0.5 * dz.sum(0)


def test_training_step(target):
    rng = np.random.default_rng()
    w, b = rng.standard_normal((17, 5)).astype(np.float32), np.zeros(5, np.float32)
    x = rng.standard_normal((33, 17)).astype(np.float32)
    y = rng.standard_normal((33, 5)).astype(np.float32)
    compiled = jit_for(target)(step)
    for _ in range(2):
        got, want = compiled(w, b, x, y), step_numpy(w, b, x, y)
        for g, v in zip(got, want, strict=True):
            np.testing.assert_allclose(g, v, rtol=2e-4, atol=1e-5)
        _, w, b = got
    assert compiled.cache_info().misses == 1


UNUSED_DYNAMIC = """
func.func @loss(%x: tensor<4xf32>, %unused: tensor<?x3xf32>) -> tensor<f32> {
  %s = ml.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = ml.reduce_sum %s {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  func.return %r : tensor<f32>
}
"""


def test_an_unused_dynamic_argument_gets_zeros_even_where_it_is_inf(target):
    """Its gradient is zeros of its run-time shape, not `x * 0` (NaN at inf)."""
    module = mlc.ir.parse_module(UNUSED_DYNAMIC)
    mlc.pipeline.run_pipeline(module, "autodiff{function=loss}")
    exe = compile_for(mlc.ir.print_module(module), target)
    x = np.arange(4, dtype=np.float32)
    unused = np.full((2, 3), np.inf, np.float32)
    unused[1, 1] = np.nan
    grad_x, grad_unused = exe["loss_grad"](x, unused)
    np.testing.assert_allclose(grad_x, 2 * x)
    np.testing.assert_array_equal(grad_unused, np.zeros((2, 3), np.float32))

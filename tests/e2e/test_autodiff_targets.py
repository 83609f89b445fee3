"""A jitted training step (forward, backward, SGD update) on each target, against numpy."""

import numpy as np

import mlc
from mlc import ops
from tests.finite_differences import numeric_grad
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


SCATTER = """
func.func @scatter_R(%d: tensor<?x5xf32>, %i: tensor<?x3xi64>, %u: tensor<?x3xf32>)
    -> tensor<?x5xf32> {
  %s = ml.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "R"}
    : (tensor<?x5xf32>, tensor<?x3xi64>, tensor<?x3xf32>) -> tensor<?x5xf32>
  func.return %s : tensor<?x5xf32>
}
"""

EMBED = """
func.func @embed(%table: tensor<6x3xf32>, %ids: tensor<?x4xi64>) -> tensor<?x4x3xf32> {
  %g = ml.gather %table, %ids {axis = 0 : i64}
    : (tensor<6x3xf32>, tensor<?x4xi64>) -> tensor<?x4x3xf32>
  func.return %g : tensor<?x4x3xf32>
}
"""


def scatter_numpy(reduction, data, indices, updates):
    combine = {"mul": np.multiply, "max": np.maximum}[reduction]
    out = data.copy()
    for r, c in np.ndindex(indices.shape):
        out[r, indices[r, c]] = combine(out[r, indices[r, c]], updates[r, c])
    return out


def test_indexing_vjps_compiled(target):
    """The scatter mul and max rules' ops compiled (dynamic rows, repeated indices, zeros
    for mul) against central differences, and a gather's from a dynamic batch of ids
    against their counts; one program for all, to compile once."""
    reductions = ("mul", "max")
    text = "".join(SCATTER.replace("R", r) for r in reductions) + EMBED
    module = mlc.ir.parse_module(text)
    for name, wrt in (("scatter_mul", "0,2"), ("scatter_max", "0,2"), ("embed", "0")):
        mlc.pipeline.run_pipeline(module, f"autodiff{{function={name} wrt={wrt} vjp=true}}")
    exe = compile_for(mlc.ir.print_module(module), target)
    rng = np.random.default_rng()
    ids = rng.integers(-6, 6, (5, 4))
    ct = rng.standard_normal((5, 4, 3)).astype(np.float32)
    grad = exe["embed_vjp"](np.zeros((6, 3), np.float32), ids, ct)
    want = np.zeros((6, 3))
    np.add.at(want, ids % 6, ct)
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-6)
    indices = np.array([[0, 0, 2], [4, 1, 4], [3, 3, 3], [1, 2, 0]], np.int64)
    for r in reductions:
        data, updates = rng.standard_normal((4, 5)), rng.standard_normal((4, 3))
        if r == "mul":
            data[0, 1] = updates[1, 0] = updates[2, 0] = updates[3, 2] = 0.0
        ct = rng.standard_normal((4, 5))
        f32 = [a.astype(np.float32) for a in (data, updates, ct)]
        got = exe[f"scatter_{r}_vjp"](f32[0], indices, f32[1], f32[2])

        def inner(d, u, r=r, ct=ct):
            return float(np.sum(ct * scatter_numpy(r, d, indices, u)))

        expected = [
            numeric_grad(lambda d: inner(d, updates), [data], 0),
            numeric_grad(lambda u: inner(data, u), [updates], 0),
        ]
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)

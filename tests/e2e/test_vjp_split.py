"""
`mlc.vjp`: the forward and backward halves `autodiff-partition` splits a joint program
into, each compiled, against `mlc.value_and_grad` (the joint form) and central
differences in float64 (an MLP, a small CNN, a loop), and the bytes the split keeps
where recomputing wins. The `cuda` twins compare float32 halves with the float64 CPU.
The CNN compiles for about 20 s (three programs of some 200 ops): it runs with
`MLC_TEST_SLOW=1` only.
"""

import os

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.autodiff import vjp as vjp_module
from tests.e2e.test_autodiff_programs import cnn_case, cnn_loss, loop_loss
from tests.finite_differences import numeric_grad
from tests.gpu.targets import compile_for


@pytest.fixture(autouse=True)
def halves_through_compile_for(monkeypatch):
    """Without a GPU, a cuda twin's halves have their PTX assembled, then it skips."""
    monkeypatch.setattr(
        vjp_module, "compile_module", lambda module, target: compile_for(module, target)
    )


def mlp_loss(x, w1, b1, w2):
    return ops.mean((ops.tanh(x @ w1 + b1) @ w2) ** 2)


def float_dtype(target):
    return np.float64 if target == "cpu" else np.float32


def tolerance(target):
    return 1e-6 if target == "cpu" else 2e-3


def check_against_joint(loss, args, target):
    """vjp_fn(1) equals value_and_grad's gradients, and central differences."""
    floats = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    value, vjp_fn = mlc.vjp(loss, *args, target=target)
    grads = vjp_fn(np.ones((), args[floats[0]].dtype))
    reference = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    joint_value, joint = mlc.value_and_grad(loss, argnums=floats)(*reference)
    compiled = mlc.jit(loss)
    rtol = tolerance(target)
    np.testing.assert_allclose(value, joint_value, rtol=rtol)
    scale = max(np.abs(g).max() for g in joint)
    for i, expected in zip(floats, joint, strict=True):
        np.testing.assert_allclose(grads[i], expected, rtol=rtol, atol=rtol * scale)
        numeric = numeric_grad(compiled, reference, i)
        loose = max(rtol, 1e-4)  # central differences are good to about 1e-6 relative
        np.testing.assert_allclose(grads[i], numeric, rtol=loose, atol=0.1 * loose * scale)
    assert all(grads[i] is None for i in range(len(args)) if i not in floats)
    return joint_value, joint


def test_mlp_loss(target):
    rng = np.random.default_rng()
    dtype = float_dtype(target)
    args = [rng.standard_normal(s).astype(dtype) for s in [(6, 5), (5, 9), (9,), (9, 3)]]
    joint_value, joint = check_against_joint(mlp_loss, args, target)
    if target != "cpu":
        return
    # value_and_grad(split=True) runs the same halves (compiled above: cached).
    value, (g1, g3) = mlc.value_and_grad(mlp_loss, argnums=(1, 3), split=True)(*args)
    np.testing.assert_allclose(value, joint_value, rtol=1e-12)
    np.testing.assert_allclose(g1, joint[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g3, joint[3], rtol=1e-10, atol=1e-12)
    g0 = mlc.grad(mlp_loss, split=True)(*args)
    np.testing.assert_allclose(g0, joint[0], rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(
    os.environ.get("MLC_TEST_SLOW") != "1", reason="compiles for 20 s: MLC_TEST_SLOW=1 runs it"
)
def test_small_cnn(target):
    args = cnn_case(np.random.default_rng(), float_dtype(target))
    check_against_joint(cnn_loss, args, target)


@pytest.mark.parametrize("trips", [4, 0])
def test_loop(target, trips):
    rng = np.random.default_rng()
    dtype = float_dtype(target)
    args = [
        (rng.standard_normal((3, 3)) * 0.5).astype(dtype),
        rng.standard_normal((2, 3)).astype(dtype),
        np.int64(trips),
    ]
    check_against_joint(loop_loss, args, target)


def chain(x):
    return ops.sum(ops.sigmoid(ops.tanh(ops.exp(x * 0.1))))


def test_recompute_wins():
    """A chain of elementwise ops keeps only its input for the backward."""
    x = np.random.default_rng().standard_normal((128, 96)).astype(np.float32)
    value, vjp_fn = mlc.vjp(chain, x)
    assert vjp_fn.saved_bytes == x.nbytes  # not the 4 intermediates the rules read
    (grad,) = vjp_fn(np.float32(1.0))
    s = np.tanh(np.exp(x.astype(np.float64) * 0.1))
    sig = 1 / (1 + np.exp(-s))
    expected = sig * (1 - sig) * (1 - s**2) * np.exp(x * 0.1) * 0.1
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(value, sig.sum(), rtol=1e-5)


def pair(x, w):
    h = x @ w
    return ops.relu(h), (ops.sum(h * h), x * 2.0)


def test_nested_outputs_and_cache():
    """Cotangents nest as the outputs; a second call reuses the compiled halves."""
    rng = np.random.default_rng()
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    (a, (b, c)), vjp_fn = mlc.vjp(pair, x, w)
    np.testing.assert_allclose(a, np.maximum(x @ w, 0))
    np.testing.assert_allclose(b, np.sum((x @ w) ** 2))
    cts = (rng.standard_normal(a.shape), (np.float64(0.5), rng.standard_normal(c.shape)))
    gx, gw = vjp_fn(cts)
    h = x @ w
    dh = cts[0] * (h > 0) + 0.5 * 2 * h
    np.testing.assert_allclose(gx, dh @ w.T + 2 * cts[1][1], rtol=1e-10)
    np.testing.assert_allclose(gw, x.T @ dh, rtol=1e-10)
    _, again = mlc.vjp(pair, x * 2, w)
    assert again.halves is vjp_fn.halves
    again_x, _ = again(cts)
    assert not np.allclose(again_x, gx)
    with pytest.raises(TypeError, match="must nest as the outputs do"):
        vjp_fn((cts[0], cts[1][0]))
    # has_aux: the aux outputs (here c, b's sibling) get no cotangent.
    (value, aux), gw_split = mlc.value_and_grad(
        lambda x, w: (ops.sum(ops.relu(x @ w)), x * 2.0), argnums=1, has_aux=True, split=True
    )(x, w)
    np.testing.assert_allclose(aux, 2 * x)
    np.testing.assert_allclose(value, np.maximum(h, 0).sum())
    np.testing.assert_allclose(gw_split, x.T @ (h > 0).astype(float))

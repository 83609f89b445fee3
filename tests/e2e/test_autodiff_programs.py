"""
Gradients of whole compiled programs against central differences: a small CNN (conv,
batch norm in training mode, relu, max pooling, a linear layer, cross-entropy; average
pooling's rule is checked in tests/unit/autodiff/test_vjp_windows.py), an embedding model
(gather, cumsum, top_k), loops and branches, on each target.

Central differences run on the CPU in float64; the `cuda` target's float32 gradients are
compared with the float64 ones.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from tests.finite_differences import numeric_grad
from tests.gpu.targets import jit_for


def cross_entropy(logits, labels):
    shifted = logits - ops.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
    return -ops.sum(labels * log_probs) / logits.shape[0]


def cnn_loss(w, b, gamma, beta, v, c, x, labels):
    h = ops.conv2d(x, w, b, padding=1)
    h = ops.relu(ops.batch_norm(h, gamma, beta, training=True))
    h = ops.max_pool2d(h, 2)
    logits = h.reshape(x.shape[0], -1) @ v + c
    return cross_entropy(logits, labels)


def pooled_loss(x, weights):
    return ops.sum(ops.max_pool2d(x, 2) * weights)


def first_maximum_routing(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The gradient of `pooled_loss` in x: each 2x2 window's weight at its first maximum."""
    grad = np.zeros_like(x)
    n, c, h, w = weights.shape
    for index in np.ndindex(n, c, h, w):
        window = x[index[0], index[1], 2 * index[2] : 2 * index[2] + 2, 2 * index[3] :][:, :2]
        i, j = np.unravel_index(np.argmax(window), window.shape)
        grad[index[0], index[1], 2 * index[2] + i, 2 * index[3] + j] = weights[index]
    return grad


def embedding_loss(table, x, ids):
    rows = ops.take(table, ids, axis=0)  # (B, T, D)
    running = ops.cumsum(rows, axis=1)
    best = ops.top_k(running * x, 2)[0]
    return ops.sum(ops.sin(best) * best)


def cnn_case(rng, dtype):
    args = [
        rng.standard_normal((3, 2, 3, 3)) * 0.4,
        rng.standard_normal(3) * 0.1,
        1.0 + rng.standard_normal(3) * 0.1,
        rng.standard_normal(3) * 0.1,
        rng.standard_normal((27, 4)) * 0.3,
        rng.standard_normal(4) * 0.1,
        rng.standard_normal((5, 2, 7, 6)),
        np.eye(4)[rng.integers(0, 4, 5)],
    ]
    return [a.astype(dtype) for a in args]


def check(loss, args, argnums, target, rtol):
    reference = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    value = mlc.jit(loss)
    expected = [numeric_grad(value, reference, i) for i in argnums]
    got = jit_for(target)(mlc.grad(loss, argnums=argnums))(*args)
    # A gradient that is exactly zero (a bias that batch statistics cancel) is checked
    # against the scale of all the gradients: f32 leaves rounding noise there.
    scale = max(np.abs(e).max() for e in expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * 0.1 * scale + 1e-9)


def test_small_cnn(target):
    dtype = np.float64 if target == "cpu" else np.float32
    args = cnn_case(np.random.default_rng(), dtype)
    check(cnn_loss, args, tuple(range(6)), target, 1e-5 if dtype == np.float64 else 2e-3)


def test_tiled_max_pool_routes_ties_to_the_first_maximum(target):
    """Windows that tile the input, many of them with tied maxima (small integers), and
    a row and a column past the last window: each window's cotangent goes to its first
    maximum in row-major order, as torch routes it."""
    rng = np.random.default_rng()
    x = rng.integers(0, 3, (2, 3, 7, 9)).astype(np.float32)
    weights = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
    got = jit_for(target)(mlc.grad(pooled_loss))(x, weights)
    np.testing.assert_array_equal(got, first_maximum_routing(x, weights))


def padded_conv_loss(x, w):
    return ops.sum(ops.relu(ops.conv2d(x, w, padding=1)) ** 2)


@pytest.mark.parametrize("x_shape", [(1, 4, 1, 1)])
def test_padded_conv_at_size_1(target, x_shape):
    """A 1x1 (or 1x2) image at batch 1: the input gradient's flipped weights stay unfused."""
    rng = np.random.default_rng()
    args = [rng.standard_normal(x_shape), rng.standard_normal((5, x_shape[1], 3, 3)) * 0.5]
    check(padded_conv_loss, args, (0, 1), target, 1e-5)


def test_embedding_gather_cumsum_top_k(target):
    rng = np.random.default_rng()
    table = rng.standard_normal((7, 5))
    x = rng.standard_normal((3, 4, 5))
    ids = rng.integers(-7, 7, (3, 4))
    check(embedding_loss, [table, x, ids], (0, 1), target, 1e-5)


def loop_loss(w, x, n):
    """A loop whose body branches on the (dynamic) counter: fori_loop over cond."""

    def body(i, h):
        return ops.cond(i % 2 == 0, lambda a: ops.tanh(a @ w), lambda a: ops.sin(a) * x, h)

    return ops.sum(ops.fori_loop(1, n, body, x) ** 2)


def scan_loss(w, xs, h0):
    def step(h, x):
        h = ops.tanh(h @ w + x)
        return h, ops.sin(h)

    h, ys = ops.scan(step, h0, xs)
    return ops.sum(h) + ops.sum(ys * ys)


def nested_loss(w, x):
    def outer(i, h):
        return ops.fori_loop(0, 2, lambda j, g: ops.tanh(g @ w) + h * 0.5, h)

    return ops.sum(ops.fori_loop(0, 3, outer, x))


@pytest.mark.parametrize("trips", [5, 0])
def test_loop_with_a_branch(target, trips):
    rng = np.random.default_rng()
    args = [rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((2, 3)), np.int64(trips)]
    check(loop_loss, args, (0, 1), target, 1e-5)


def test_scan_and_nested_loops(target):
    rng = np.random.default_rng()
    w = rng.standard_normal((3, 3)) * 0.5
    check(
        scan_loss,
        [w, rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 3))],
        (0, 1, 2),
        target,
        1e-5,
    )
    check(nested_loss, [w, rng.standard_normal((2, 3))], (0, 1), target, 1e-5)


def grow_loss(w, x):
    """A while loop whose trip count depends on x (zero when x starts large), with a
    branch on its integer counter, which the gradient carries too. At most 8 trips:
    longer runs of this map are chaotic, and central differences lose the digits the
    check needs (20 trips gave relative errors up to 1e-4 against 1e-5 allowed)."""

    def body(state):
        h, k = state
        h = ops.cond(k % 2 == 0, lambda a: ops.tanh(a @ w) + a * 1.5, lambda a: ops.sin(a) * 2, h)
        return h, k + 1

    h, k = ops.while_loop(lambda s: (ops.sum(s[0] * s[0]) < 40.0) & (s[1] < 8), body, (x, 0))
    return ops.sum(h * h) + ops.sum(x) * k


def nested_while_loss(w, x):
    def outer(i, h):
        return ops.while_loop(lambda g: ops.sum(g * g) < 10.0 * (i + 1), lambda g: g @ w + g, h)

    return ops.sum(ops.fori_loop(0, 3, outer, x) ** 2)


@pytest.mark.parametrize("scale", [1.0, 100.0])
def test_while_loop(target, scale):
    rng = np.random.default_rng()
    args = [rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((2, 3)) * scale]
    check(grow_loss, args, (0, 1), target, 1e-5)


def test_while_loop_in_a_for_loop(target):
    rng = np.random.default_rng()
    args = [rng.standard_normal((3, 3)) * 0.3, rng.standard_normal((2, 3))]
    check(nested_while_loss, args, (0, 1), target, 1e-5)

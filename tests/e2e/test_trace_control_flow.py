"""
Structured control flow in traced programs, run on the CPU and `cuda` against plain Python:
data-dependent while loops, nested conds down every path, fori_loop with captured
arrays and traced bounds. Each program compiles once and runs on several inputs.
"""

import numpy as np

import mlc
from mlc import ops
from tests.gpu.targets import compile_for

rng = np.random.default_rng()


def jacobi(a, b):
    """Solve a x = b by Jacobi iteration until the residual is small (or 200 steps)."""
    diagonal = (a * np.eye(a.shape[0], dtype=a.dtype)).sum(axis=1, keepdims=True)

    def not_done(state):
        x, k = state
        r = a @ x - b
        return ((r * r).sum() > 1e-10) & (k < 200)

    def step(state):
        x, k = state
        return x + (b - a @ x) / diagonal, k + 1

    return ops.while_loop(not_done, step, (b * 0.0, 0))


def jacobi_reference(a, b):
    d = np.diag(a)[:, None]
    x, k = np.zeros_like(b), 0
    while ((a @ x - b) ** 2).sum() > 1e-10 and k < 200:
        x, k = x + (b - a @ x) / d, k + 1
    return x, k


def test_while_loop_runs_a_data_dependent_number_of_times(target):
    n = 7
    a = rng.standard_normal((n, n)) + np.eye(n) * n * 2
    exe = compile_for(mlc.trace(jacobi, a, rng.standard_normal((n, 1))), target)
    counts = set()
    for scale in (1e-3, 1.0, 1e3):
        b = rng.standard_normal((n, 1)) * scale
        x, k = exe(a, b)
        want_x, want_k = jacobi_reference(a, b)
        assert k == want_k
        counts.add(int(k))
        np.testing.assert_allclose(x, want_x, rtol=1e-9, atol=1e-12)
    assert len(counts) > 1


def nested(x, t):
    def positive(x):
        return ops.cond(x.max() > t, lambda: x * 2.0, lambda: x + t)

    def negative(x):
        return ops.cond(x.min() < -t, lambda: -x, lambda: x - t)

    return ops.cond(x.sum() > 0, positive, negative, x)


def nested_reference(x, t):
    if x.sum() > 0:
        return x * 2.0 if x.max() > t else x + t
    return -x if x.min() < -t else x - t


def test_nested_conds_take_every_path(target):
    x0 = rng.standard_normal(5).astype(np.float32)
    exe = compile_for(mlc.trace(nested, x0, np.float32(1.0)), target)
    for x, t in [
        (np.full(5, 3.0), 1.0),
        (np.full(5, 0.5), 1.0),
        (np.full(5, -3.0), 1.0),
        (np.full(5, -0.5), 1.0),
    ]:
        x, t = x.astype(np.float32), np.float32(t)
        np.testing.assert_allclose(exe(x, np.asarray(t)), nested_reference(x, t), rtol=1e-6)


def test_fori_loop_with_captured_arrays_and_traced_bounds(target):
    w = rng.standard_normal((4, 4)).astype(np.float32) / 4
    bias = rng.standard_normal(4).astype(np.float32)

    def recurrence(h, n):
        return ops.fori_loop(0, n, lambda i, h: ops.tanh(h @ w + bias * i), h)

    h = rng.standard_normal((2, 4)).astype(np.float32)
    exe = compile_for(mlc.trace(recurrence, h, np.int64(3)), target)
    for n in (0, 1, 5):
        want = h
        for i in range(n):
            want = np.tanh(want @ w + bias * i)
        np.testing.assert_allclose(exe(h, np.asarray(n)), want, rtol=1e-5, atol=1e-6)


def test_while_loop_on_a_single_array_with_a_numpy_scalar_state(target):
    def halve_until_small(x):
        return ops.while_loop(lambda s: s.max() > 1.0, lambda s: s * 0.5, x), ops.while_loop(
            lambda c: c < 10, lambda c: c + np.int32(3), np.int32(1)
        )

    x = rng.uniform(0, 100, 6)
    got, count = compile_for(mlc.trace(halve_until_small, x), target)(x)
    want = x.copy()
    while want.max() > 1.0:
        want = want * 0.5
    np.testing.assert_allclose(got, want)
    assert count == 10 and count.dtype == np.int32

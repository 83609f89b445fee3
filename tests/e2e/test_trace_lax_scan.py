"""`mlc.ops.scan` (jax.lax.scan) traced and compiled, against a Python loop in numpy."""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.frontends.trace import TraceError
from tests.gpu.targets import compile_for

rng = np.random.default_rng()


def run(fn, target, *arrays):
    got = compile_for(mlc.trace(fn, *arrays), target)(*arrays)
    return got if isinstance(got, tuple) else (got,)


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def numpy_scan(f, init, xs, length=None, reverse=False):
    steps = length if xs is None else len(xs[0] if isinstance(xs, tuple) else xs)
    carry, ys = init, []
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    for t in order:
        x = None if xs is None else (tuple(a[t] for a in xs) if isinstance(xs, tuple) else xs[t])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, tuple(np.stack(column) for column in zip(*ys, strict=True))


def rnn_step(carry, x, w, u):
    h, n = carry
    h = np.tanh(x @ w + h @ u)
    return (h, n + 1), (h, (h * h).sum())


def test_an_rnn_run_backwards_over_time_matches_a_python_loop(target):
    reverse = True
    h0 = rng.standard_normal((3, 5)).astype(np.float32)
    xs = rng.standard_normal((7, 3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32) * 0.5
    u = rng.standard_normal((5, 5)).astype(np.float32) * 0.5
    n0 = np.array(0, np.int32)

    def f(h0, n0, xs, w, u):
        (h, n), (hs, energy) = ops.scan(
            lambda c, x: rnn_step(c, x, w, u), (h0, n0), xs, reverse=reverse
        )
        return h, n, hs, energy

    (h, n), (hs, energy) = numpy_scan(
        lambda c, x: rnn_step(c, x, w, u), (h0, n0), xs, None, reverse
    )
    assert_same(run(f, target, h0, n0, xs, w, u), (h, n, hs, energy))


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_several_xs_and_a_cumulative_product(target, dtype):
    a = rng.integers(1, 4, (6, 2)).astype(dtype)
    b = rng.integers(-3, 4, (6,)).astype(dtype)
    one = np.ones(2, dtype)

    def step(c, x):
        p = c * x[0] + x[1]
        return p, [p, x[1] % 3]

    def f(one, a, b):
        c, (ps, rs) = ops.scan(step, one, (a, b))
        return c, ps, rs

    c, (ps, rs) = numpy_scan(step, one, (a, b))
    assert_same(run(f, target, one, a, b), (c, ps, rs))


def test_length_without_xs_and_no_stacked_output(target):
    x = rng.standard_normal(5).astype(np.float32)

    def f(x):
        c, ys = ops.scan(lambda c, _: (c * 0.5 + 1.0, None), x, None, length=4)
        assert ys is None
        _, counts = ops.scan(lambda c, _: (c + 1, c), np.int64(0), length=3)
        return c, counts

    want = x.copy()
    for _ in range(4):
        want = want * np.float32(0.5) + np.float32(1.0)
    assert_same(run(f, target, x), (want, np.arange(3, dtype=np.int64)))


def test_a_leading_dim_known_only_at_run_time():
    @mlc.jit(target="cpu", dynamic=True)
    def running_max(xs):
        return ops.scan(lambda c, x: (np.maximum(c, x), np.maximum(c, x)), xs[0], xs)[1]

    for n in (3, 6):
        xs = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_allclose(running_max(xs), np.maximum.accumulate(xs, axis=0))


def test_scan_errors_name_the_line():
    x = np.zeros((4, 3), np.float32)
    with pytest.raises(TraceError, match=r"test_trace_lax_scan.py.*pair \(carry, y\)"):
        mlc.trace(lambda x: ops.scan(lambda c, x: c + x, x[0], x)[0], x)
    with pytest.raises(TraceError, match="changes state entry 0 from tensor<3xf32>"):
        mlc.trace(lambda x: ops.scan(lambda c, x: (c.sum(), x), x[0], x)[0], x)
    with pytest.raises(TraceError, match="different leading sizes"):
        mlc.trace(lambda x: ops.scan(lambda c, x: (c, None), x[0], (x, x[1:]))[0], x)
    with pytest.raises(TraceError, match=r"ops\.scan needs xs or length"):
        mlc.trace(lambda x: ops.scan(lambda c, x: (c, None), x)[0], x)

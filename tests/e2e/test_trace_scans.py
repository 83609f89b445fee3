"""`mlc.ops.argmax`, `argmin` and `cumsum` traced and compiled, against numpy, on both targets."""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.frontends.trace import TraceError
from tests.gpu.targets import compile_for

rng = np.random.default_rng()


def run(fn, target, *arrays):
    exe = compile_for(mlc.trace(fn, *arrays), target)
    got = exe(*arrays)
    return got if isinstance(got, tuple) else (got,)


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_arg_reductions_match_numpy(target, dtype):
    x = rng.integers(0, 4, (3, 5, 7)).astype(dtype)  # ties: numpy's first index

    def f(x):
        return (
            ops.argmax(x, axis=1),
            ops.argmin(x, axis=-1, keepdims=True),
            ops.argmax(x),
            np.argmin(x, 0),
        )

    want = (x.argmax(1), x.argmin(-1, keepdims=True), x.argmax(), x.argmin(0))
    assert_same(run(f, target, x), want)


def test_argmax_of_nan_is_the_first_nan(target):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    x[1, 2] = x[1, 4] = x[3, 0] = np.nan
    assert_same(
        run(lambda x: (ops.argmax(x, 1), ops.argmin(x, 1)), target, x), (x.argmax(1), x.argmin(1))
    )


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_cumsum_matches_numpy(target, dtype):
    x = (rng.standard_normal((4, 9, 3)) * 4).astype(dtype)

    def f(x):
        return ops.cumsum(x, axis=1), np.cumsum(x), ops.cumsum(x, axis=-1, dtype=np.float64)

    want = (np.cumsum(x, 1), np.cumsum(x), np.cumsum(x, -1, dtype=np.float64))
    assert_same(run(f, target, x), want)


def test_argmax_axis_out_of_range_is_an_error_at_the_call():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TraceError, match=r"test_trace_scans.py.*argmax: axis 2 is out of range"):
        mlc.trace(lambda x: ops.argmax(x, axis=2), x)

"""
The matmul kernel reading B in place (`tiling_model.reads_b_in_place`: few rows, B an
argument) against numpy, on one and two threads: row counts 1 to 70 (partial register
blocks), an odd K, f32 and f64, a bias and ReLU epilogue; and the shapes next to it
that pack B as before (N ending inside a panel, B read transposed, more rows than
`IN_PLACE_B_ROWS`).
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.tiling_model import IN_PLACE_B_ROWS

K, N = 257, 512


def _check(fn, a: np.ndarray, b: np.ndarray, want: np.ndarray) -> None:
    scale = np.sqrt(a.shape[1]) * (1e-12 if a.dtype == np.float64 else 2e-5)
    np.testing.assert_allclose(fn(a, b), want, rtol=1e-5, atol=10 * scale)


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_1_to_70_with_b_in_place(threads: str, dtype, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", threads)
    rng = np.random.default_rng(0)
    b = rng.standard_normal((K, N)).astype(dtype)
    for m in [1, 5, 8, 33, 64, 70]:
        a = rng.standard_normal((m, K)).astype(dtype)
        fn = mlc.jit(lambda x, y: ops.matmul(x, y))
        _check(fn, a, b, a.astype(np.float64) @ b)


def test_b_in_place_with_a_bias_and_relu_epilogue(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 784)).astype(np.float32)
    w = rng.standard_normal((784, 1024)).astype(np.float32)
    bias = rng.standard_normal(1024).astype(np.float32)
    fn = mlc.jit(lambda x, y, c: ops.relu(ops.add(ops.matmul(x, y), c)))
    want = np.maximum(a.astype(np.float64) @ w + bias, 0)
    np.testing.assert_allclose(fn(a, w, bias), want, rtol=1e-5, atol=2e-4 * np.sqrt(784))


@pytest.mark.parametrize(
    ("m", "n", "transposed"),
    [(33, 300, False), (64, N, True), (IN_PLACE_B_ROWS + 7, N, False)],
)
def test_neighbours_that_pack_b(m: int, n: int, transposed: bool, monkeypatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, K)).astype(np.float32)
    b = rng.standard_normal((n, K) if transposed else (K, n)).astype(np.float32)
    if transposed:
        fn = mlc.jit(lambda x, y: ops.matmul(x, ops.transpose(y, (1, 0))))
        want = a.astype(np.float64) @ b.T
    else:
        fn = mlc.jit(lambda x, y: ops.matmul(x, y))
        want = a.astype(np.float64) @ b
    _check(fn, a, b, want)


def test_b_a_view_of_a_wider_matrix(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, K - 1)).astype(np.float32)
    w = rng.standard_normal((K, 2 * N)).astype(np.float32)
    fn = mlc.jit(lambda x, y: ops.matmul(x, y[1:, N // 2 : N // 2 + N]))
    _check(fn, a, w, a.astype(np.float64) @ w[1:, N // 2 : N // 2 + N])

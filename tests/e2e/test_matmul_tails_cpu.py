"""
The matmul kernel's edges against numpy: N ending inside a column panel (masked
stores and loads), tasks split by column panels, rows per task chosen at run time for
a dynamic M, K blocks of equal depth; with and without a bias + ReLU epilogue, B read
plainly or transposed (ONNX Gemm's transB), on primes. The same programs run on `cuda`.
Small-M cases also in f64 (`test_small_m_f64_matches_numpy`).
"""

from typing import Any

import numpy as np
import pytest
from test_tiled_cpu import build_all

from tests.e2e.programs import matmul_text
from tests.gpu.targets import cpu_variants_and_cuda

# (M, K, N, epilogue, transposed B); M None: dynamic. N around one and two vectors (8
# floats on AVX2) and a panel (16); M and K primes.
CASES: list[tuple[int | None, int, int, bool, bool]] = [
    (13, 29, 1, False, False),
    (13, 29, 3, True, False),
    (67, 131, 7, False, True),
    (67, 131, 10, True, True),
    (64, 1031, 10, True, True),  # the MLP's last layer, K four blocks deep
    (13, 29, 15, False, False),
    (67, 131, 17, True, False),
    (None, 131, 10, True, False),
    (None, 29, 17, False, True),
    (None, 257, 160, True, True),  # two tasks of rows at run time for a larger M
    (61, 131, 160, True, False),  # two tasks of 5 panels each (column groups)
    (61, 131, 160, False, True),
    (7, 784, 40, False, False),  # K = 784: four blocks of 196
    (None, 64, 16, False, False),  # the widest narrow contraction (GPU: warps share rows)
    (None, 300, 3, False, True),  # narrow, B read along K (not staged in shared memory)
    # One register block of rows (an LSTM step's h @ R^T), worth two tasks: the panels
    # split between the threads, A read in place (not packed); N ends inside a panel.
    (5, 257, 811, True, False),
    (3, 509, 1031, False, True),
]
TILES = ["linalg-tile", "linalg-tile{tile-sizes=3,8,16,6 vector-length=4}"]


@pytest.fixture(scope="module", params=cpu_variants_and_cuda(TILES))
def functions(request: pytest.FixtureRequest) -> Any:
    # compiled for two threads (the column groups and the run-time row split need two)
    tile, target = request.param
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLC_NUM_THREADS", "2")
        text = "\n".join(matmul_text(case, f"case{i}", "f32") for i, case in enumerate(CASES))
        return build_all(text, tile, target)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_matmul_edges_match_numpy(functions: Any, index: int):
    m, k, n, epilogue, transposed = CASES[index]
    rng = np.random.default_rng(index)
    rows = [1, 5, 67, 300] if m is None else [m]
    for count in rows:
        a = rng.standard_normal((count, k), dtype=np.float32)
        b = rng.standard_normal((n, k) if transposed else (k, n), dtype=np.float32)
        bias = rng.standard_normal(n, dtype=np.float32)
        want = a.astype(np.float64) @ (b.T if transposed else b).astype(np.float64)
        if epilogue:
            want = np.maximum(want + bias, 0)
        got = functions[f"case{index}"](a, b, bias)
        atol = 2e-4 * (np.sqrt(k) + 1)
        np.testing.assert_allclose(
            got, want, rtol=0, atol=atol, err_msg=f"{CASES[index]} M={count}"
        )


# M of one register block, in f64 (4-byte tiles' register blocks halve: MR rows of 8 lanes)
F64_CASES: list[tuple[int | None, int, int, bool, bool]] = [
    (7, 131, 1543, True, False),
    (2, 1031, 1000, False, True),
]


@pytest.fixture(scope="module")
def f64_functions() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLC_NUM_THREADS", "2")
        text = "\n".join(matmul_text(c, f"case{i}", "f64") for i, c in enumerate(F64_CASES))
        return build_all(text, "linalg-tile")


@pytest.mark.parametrize("index", range(len(F64_CASES)))
def test_small_m_f64_matches_numpy(f64_functions: Any, index: int):
    m, k, n, epilogue, transposed = F64_CASES[index]
    assert m is not None
    rng = np.random.default_rng(100 + index)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((n, k) if transposed else (k, n))
    bias = rng.standard_normal(n)
    want = a @ (b.T if transposed else b)
    if epilogue:
        want = np.maximum(want + bias, 0)
    got = f64_functions[f"case{index}"](a, b, bias)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.sqrt(k))

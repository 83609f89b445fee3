"""
f16 matmuls on the CPU kernel against numpy: summed in f32 and rounded to f16 once, as
numpy's own f16 matmul does. Odd K (one element, under and over a vector, past a K
block of f32), N tails (1, 3 and 17 past the vectors and panels), a dynamic M, a
batch, a transposed B and a bias + ReLU epilogue, all in one module.

The error bound: the f32 sum of K products differs from the exact one by at most
K * 2^-24 * sum |a*b| (each product is exact in f32, each addition or FMA rounds
once), and rounding that to f16 adds half an f16 ulp: 2^-11 of the result (2^-25 in
f16's subnormal range). Summed in f16, as the plain loops did, the error grows with K
half-ulps of the partial sums instead.
"""

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from test_tiled_cpu import build_all

from tests.e2e.programs import matmul_text

# (M, K, N, epilogue, transposed B); M None: dynamic.
CASES: list[tuple[int | None, int, int, bool, bool]] = [
    (5, 1, 17, False, False),
    (9, 7, 3, False, False),
    (13, 32, 1, False, False),
    (31, 300, 17, False, False),
    (None, 32, 3, False, False),
    (None, 300, 40, True, True),
    (7, 7, 1, False, True),
    (64, 300, 33, True, False),
]
BATCH_SHAPES = ("3x?x45", "45x19", "3x?x19")  # batched A, shared B, dynamic M


def batched_source() -> str:
    a, b, c = (f"tensor<{shape}xf16>" for shape in BATCH_SHAPES)
    return f"""
    func.func @batched(%a: {a}, %b: {b}) -> {c} {{
      %c = ml.matmul %a, %b : ({a}, {b}) -> {c}
      func.return %c : {c}
    }}"""


@pytest.fixture(scope="module")
def functions() -> dict[str, Any]:
    text = "\n".join(matmul_text(case, f"case{i}", "f16") for i, case in enumerate(CASES))
    return build_all(text + batched_source())


def assert_summed_in_f32(
    got: NDArray[Any], a: NDArray[Any], b: NDArray[Any], relu: bool = False
) -> None:
    """`got` is `a @ b` (then ReLU) summed in f32 and rounded to f16 once (module
    docstring)."""
    assert got.dtype == np.float16
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = np.maximum(a64 @ b64, 0) if relu else a64 @ b64
    k = a.shape[-1]
    bound = k * 2.0**-24 * (np.abs(a64) @ np.abs(b64))
    bound += np.maximum(np.abs(exact) * 2.0**-11, 2.0**-25)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound)
    # numpy's f16 matmul sums in f32 too: the same result, bar an f32 rounding's ties.
    numpy = np.maximum(np.matmul(a, b), 0) if relu else np.matmul(a, b)
    assert np.count_nonzero(got != numpy) <= max(1, got.size // 100)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_f16_matmul_sums_in_f32(functions: dict[str, Any], index: int):
    m, k, n, epilogue, transposed = CASES[index]
    rng = np.random.default_rng()
    for rows in [1, 6, 67] if m is None else [m]:
        a = rng.standard_normal((rows, k)).astype(np.float16)
        b = rng.standard_normal((n, k) if transposed else (k, n)).astype(np.float16)
        bias = np.zeros(n, np.float16)  # exact: the sum is rounded once all the same
        got = functions[f"case{index}"](a, b, bias)
        assert_summed_in_f32(got, a, b.T if transposed else b, epilogue)


def test_batched_f16_matmul_with_a_dynamic_m(functions: dict[str, Any]):
    rng = np.random.default_rng()
    for rows in (1, 11):
        a = rng.standard_normal((3, rows, 45)).astype(np.float16)
        b = rng.standard_normal((45, 19)).astype(np.float16)
        assert_summed_in_f32(functions["batched"](a, b), a, b)

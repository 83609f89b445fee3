"""
Softmax and layer norm with their generics fused into blocks of rows (`linalg-tile`'s
row blocks) against the same programs without (`row-blocks=false`) and numpy: each row
is computed in the same order either way, so the results are the same bits, at one
thread and at two, on odd and dynamic row counts and rows wider than a block; the
programs also run on `cuda` against numpy.
"""

import numpy as np
import pytest

from tests.e2e.test_tiled_cpu import build_all
from tests.gpu.targets import TARGETS

RNG = np.random.default_rng()

SOURCE = """
func.func @softmax(%x: tensor<{rows}x{cols}xf32>) -> tensor<{rows}x{cols}xf32> {{
  %y = ml.softmax %x {{axis = -1 : i64}} : (tensor<{rows}x{cols}xf32>) -> tensor<{rows}x{cols}xf32>
  func.return %y : tensor<{rows}x{cols}xf32>
}}
func.func @layer_norm(%x: tensor<{rows}x{cols}xf32>, %g: tensor<{cols}xf32>, %b: tensor<{cols}xf32>)
    -> tensor<{rows}x{cols}xf32> {{
  %y = ml.layer_norm %x, %g, %b {{axis = -1 : i64, epsilon = 1.0e-05 : f32}}
    : (tensor<{rows}x{cols}xf32>, tensor<{cols}xf32>, tensor<{cols}xf32>)
    -> tensor<{rows}x{cols}xf32>
  func.return %y : tensor<{rows}x{cols}xf32>
}}
"""

CASES = [("3", 17), ("?", 48), ("301", 4104)]  # 4104 floats: rows of 16 KB, blocks of rows


@pytest.fixture(scope="module", params=CASES, ids=lambda case: f"{case[0]}x{case[1]}")
def case(request: pytest.FixtureRequest) -> tuple[str, int]:
    return request.param


@pytest.fixture(scope="module", params=TARGETS)
def compiled(request: pytest.FixtureRequest, case: tuple[str, int]):
    # On `cuda` (no row blocks) both are the one GPU compile: numpy is the comparison.
    rows, cols = case
    source = SOURCE.format(rows=rows, cols=cols)
    blocked = build_all(source, target=request.param)
    return rows, cols, blocked, build_all(source, "linalg-tile{row-blocks=false}", request.param)


def test_same_bits_as_generic_by_generic(compiled, monkeypatch: pytest.MonkeyPatch):
    rows, cols, blocked, plain = compiled
    for n in [int(rows)] if rows != "?" else [1, 37]:
        x = (RNG.standard_normal((n, cols)) * 4).astype(np.float32)
        g, b = (
            RNG.standard_normal(cols).astype(np.float32),
            RNG.standard_normal(cols).astype(np.float32),
        )
        wide = x.astype(np.float64)
        e = np.exp(wide - wide.max(axis=1, keepdims=True))
        softmax = e / e.sum(axis=1, keepdims=True)
        norm = (wide - wide.mean(axis=1, keepdims=True)) / np.sqrt(
            wide.var(axis=1, keepdims=True) + 1e-5
        )
        for threads in ("1", "2"):
            monkeypatch.setenv("MLC_NUM_THREADS", threads)
            y = blocked["softmax"](x)
            np.testing.assert_array_equal(y, plain["softmax"](x))
            np.testing.assert_allclose(y, softmax, rtol=1e-5, atol=1e-7)
            y = blocked["layer_norm"](x, g, b)
            np.testing.assert_array_equal(y, plain["layer_norm"](x, g, b))
            np.testing.assert_allclose(y, norm * g + b, rtol=1e-4, atol=1e-4)

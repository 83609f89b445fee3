"""
Reductions whose accumulators `promote-accumulators` keeps in registers (layer norm's
statistics, row sums and maxima, sums over two axes) against numpy in float64, on odd
and dynamic sizes, at one thread and two: the same bits either way (on `cuda`, two runs agree).
"""

import numpy as np
import pytest

from tests.gpu.targets import compile_for

RNG = np.random.default_rng()


def run_both(exe, *args: np.ndarray) -> np.ndarray:
    """`exe(*args)` at one thread and at two; asserts they agree exactly."""
    results = []
    with pytest.MonkeyPatch.context() as patch:
        for threads in ("1", "2"):
            patch.setenv("MLC_NUM_THREADS", threads)
            results.append(exe(*args))
    np.testing.assert_array_equal(results[0], results[1])
    return results[0]


LAYER_NORM = """
func.func @f(%x: tensor<{rows}x{cols}x{t}>, %g: tensor<{cols}x{t}>, %b: tensor<{cols}x{t}>)
    -> tensor<{rows}x{cols}x{t}> {{
  %y = ml.layer_norm %x, %g, %b {{axis = -1 : i64, epsilon = 1.0e-05 : f32}}
    : (tensor<{rows}x{cols}x{t}>, tensor<{cols}x{t}>, tensor<{cols}x{t}>)
    -> tensor<{rows}x{cols}x{t}>
  func.return %y : tensor<{rows}x{cols}x{t}>
}}
"""


@pytest.mark.parametrize(
    ("rows", "cols", "dtype"),
    [("7", 33, "f32"), ("?", 50, "f64"), ("1000", 257, "f32")],
)
def test_layer_norm(rows: str, cols: int, dtype: str, target: str):
    exe = compile_for(LAYER_NORM.format(rows=rows, cols=cols, t=dtype), target)
    np_type = np.float32 if dtype == "f32" else np.float64
    for n in [int(rows)] if rows != "?" else [1, 13]:
        x = (RNG.standard_normal((n, cols)) * 3 + 5).astype(np_type)
        g, b = RNG.standard_normal(cols).astype(np_type), RNG.standard_normal(cols).astype(np_type)
        wide = x.astype(np.float64)
        mean = wide.mean(axis=1, keepdims=True)
        var = wide.var(axis=1, keepdims=True)
        expected = (wide - mean) / np.sqrt(var + 1e-5) * g + b
        tolerance = 1e-4 if dtype == "f32" else 1e-9
        np.testing.assert_allclose(run_both(exe, x, g, b), expected, rtol=tolerance, atol=tolerance)


REDUCTIONS = """
func.func @f(%x: tensor<{rows}x{cols}xf32>) -> (tensor<{rows}xf32>, tensor<{rows}xf32>) {{
  %s = ml.reduce_sum %x {{axes = array<i64: 1>, keepdims = false}}
    : (tensor<{rows}x{cols}xf32>) -> tensor<{rows}xf32>
  %m = ml.reduce_max %x {{axes = array<i64: 1>, keepdims = false}}
    : (tensor<{rows}x{cols}xf32>) -> tensor<{rows}xf32>
  func.return %s, %m : tensor<{rows}xf32>, tensor<{rows}xf32>
}}
"""


@pytest.mark.parametrize(("rows", "cols"), [("5", 37), ("?", 1), ("997", 301)])
def test_row_sums_and_maxima(rows: str, cols: int, target: str):
    exe = compile_for(REDUCTIONS.format(rows=rows, cols=cols), target)
    for n in [int(rows)] if rows != "?" else [1, 6]:
        x = RNG.standard_normal((n, cols)).astype(np.float32)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("MLC_NUM_THREADS", "1")
            sums, maxima = exe(x)
            patch.setenv("MLC_NUM_THREADS", "2")
            sums2, maxima2 = exe(x)
        np.testing.assert_array_equal(sums, sums2)
        np.testing.assert_array_equal(maxima, maxima2)
        expected = x.astype(np.float64).sum(axis=1)
        np.testing.assert_allclose(sums, expected, rtol=1e-5, atol=1e-4 * np.sqrt(cols))
        np.testing.assert_array_equal(maxima, x.max(axis=1))


PLANES = """
func.func @f(%x: tensor<?x{h}x{w}xf64>) -> tensor<?xf64> {{
  %s = ml.reduce_sum %x {{axes = array<i64: 1, 2>, keepdims = false}}
    : (tensor<?x{h}x{w}xf64>) -> tensor<?xf64>
  func.return %s : tensor<?xf64>
}}
"""


def test_sums_over_two_axes(target: str):
    """The accumulator is invariant in both inner loops: it is carried by both."""
    exe = compile_for(PLANES.format(h=9, w=13), target)
    for n in (1, 4):
        x = RNG.standard_normal((n, 9, 13))
        np.testing.assert_allclose(run_both(exe, x), x.sum(axis=(1, 2)), rtol=1e-12, atol=1e-12)

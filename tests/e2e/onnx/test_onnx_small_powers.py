"""
ONNX `Pow` by a constant exponent against onnxruntime: squares and cubes run as
products (`ExpandSmallPower`), other exponents as `pow`; batch 1 and 8 of an odd
shape with a dynamic batch dim, with inf, NaN and signed zeros among the inputs.
"""

import numpy as np
import pytest

from tests.e2e.onnx.single_node import check


def base(batch: int, dtype: type) -> np.ndarray:
    rng = np.random.default_rng(batch)
    if dtype == np.int32:
        return rng.integers(-40, 40, (batch, 7, 13)).astype(np.int32)
    x = rng.normal(0.0, 3.0, (batch, 7, 13)).astype(dtype)
    x[0, 0, :5] = [np.inf, -np.inf, np.nan, -0.0, 0.0]
    return x


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("exponent", [2.0, 3.0, 0.5, 4.0])
def test_float_power(target: str, batch: int, exponent: float) -> None:
    x = base(batch, np.float32)
    if exponent == 0.5:
        x = np.abs(x)
    e = np.array(exponent, np.float32)
    check("Pow", [("x", x), ("e", e)], opset=15, target=target, known=["e"], dynamic=["x"])


@pytest.mark.parametrize("batch", [1, 8])
def test_integer_cube(target: str, batch: int) -> None:
    e = np.array(3, np.int32)
    check("Pow", [("x", base(batch, np.int32)), ("e", e)], opset=15, target=target, known=["e"])

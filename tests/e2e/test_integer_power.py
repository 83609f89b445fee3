"""
Integer `ml.pow` (`math.ipowi`) and `math.fpowi`, compiled for the CPU and `cuda`, against numpy.

Overflow wraps as in numpy. Negative integer exponents, an error in numpy, give
1 / base ** -e truncated: 1 for base 1, +-1 for base -1, 0 otherwise (0 for base 0 too).
"""

import numpy as np
import pytest
from xdsl.dialects import math
from xdsl.dialects.builtin import f32, f64, i32, i64

from mlc.dialects import ml
from tests.e2e.programs import program, tensor
from tests.gpu.targets import compile_for

SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def reference_power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """numpy's power where it is defined, and the documented values for e < 0."""
    negative = exponent < 0
    with np.errstate(over="ignore"):
        power = np.power(base, np.where(negative, 0, exponent))
    parity = np.where(exponent % 2 == 1, -1, 1).astype(base.dtype)
    unit = np.where(base == 1, 1, np.where(base == -1, parity, 0)).astype(base.dtype)
    return np.where(negative, unit, power)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_pow(rng, dtype, dynamic, target):
    info = np.iinfo(dtype)
    n = 257
    # Small bases (exact results), any base (wrapping), large exponents, the edges.
    base = np.concatenate(
        [
            rng.integers(-6, 7, n),
            rng.integers(info.min, info.max, n, endpoint=True),
            [0, 1, -1, 2, -2, info.min, info.max, 0, 1, -1, 2, 3, -1, 0],
        ]
    ).astype(dtype)
    exponent = np.concatenate(
        [
            rng.integers(0, 12, n),
            rng.integers(0, info.max, n, endpoint=True),
            [0, 0, 0, info.bits - 1, info.bits - 1, 2, 3, -1, -7, -8, -3, -1, info.min, info.min],
        ]
    ).astype(dtype)
    size = base.size
    module = program([tensor((size,), dtype, dynamic)] * 2, ml.PowOp)
    got = compile_for(module, target)(base, exponent)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, reference_power(base, exponent), err_msg=f"seed {SEED}")
    positive = exponent >= 0
    with np.errstate(over="ignore"):
        want = np.power(base[positive], exponent[positive])
    np.testing.assert_array_equal(got[positive], want, err_msg=f"numpy, seed {SEED}")


@pytest.mark.parametrize(("ftype", "itype"), [(f32, i32), (f64, i32), (f64, i64)])
def test_fpowi(rng, ftype, itype, target):
    function = compile_for(program([ftype, itype], lambda x, e: math.FPowIOp(x, e)), target)
    dtype = np.float32 if ftype == f32 else np.float64
    bases = [*rng.uniform(-3, 3, 20), 0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan]
    exponents = [0, 1, 2, 3, 7, 10, 31, -1, -2, -5, 64]
    for x in bases:
        for e in exponents:
            got = function(dtype(x), e)
            with np.errstate(all="ignore"):
                want = np.power(dtype(x), dtype(e))
            # Squaring rounds once per multiply: a few ulps from the correctly rounded pow.
            np.testing.assert_allclose(
                got, want, rtol=64 * np.finfo(dtype).eps, err_msg=f"{x}**{e}"
            )

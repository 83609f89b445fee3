"""
`mlc.ops`' trigonometric, rounding, isnan/isinf, sign, remainder and bitwise functions
(and numpy's names for them on traced arrays) against eager numpy, on the CPU and
`cuda`: float results within a few ulp over wide ranges with inf, NaN and -0 mixed in,
integer results exactly. One traced program per dtype holds every function.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.frontends.trace import TraceError
from tests.gpu.targets import compile_for

rng = np.random.default_rng()

FLOAT_FUNCTIONS = (
    "sin cos tan arcsin arccos arctan sinh cosh arcsinh arccosh arctanh floor ceil rint "
    "isnan isinf isfinite sign"
).split()

# Bounds in ulp of the result (relative, for results away from zero) that libm and
# libdevice keep; `tan` near its poles and the inverse functions near their edges are
# ill-conditioned in x, so their inputs' rounding dominates and numpy agrees as well.
ULP = {np.float32: 4, np.float64: 4}


def special(dtype, shape):
    """Wide-ranging values: normal, tiny, huge, and inf, -inf, NaN, +-0, +-1, halves."""
    x = rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape))
    flat = x.reshape(-1)
    extras = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -1.5, 1e-30, 30.0]
    flat[: len(extras)] = extras
    return x.astype(dtype)


def check_ulp(got, want, dtype, name):
    assert got.dtype == want.dtype, name
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    spacing = np.spacing(np.abs(want[finite]).astype(dtype))
    error = np.abs(got[finite].astype(np.float64) - want[finite].astype(np.float64))
    # A result smaller than the smallest normal is held to an absolute bound.
    tiny = np.finfo(dtype).tiny
    assert np.all(error <= ULP[dtype] * np.maximum(spacing, tiny)), (name, error.max())


def float_functions(m, x):
    return tuple(getattr(m, name)(x) for name in FLOAT_FUNCTIONS)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_functions_match_numpy(dtype, target):
    x = special(dtype, (7, 9))
    exe = compile_for(mlc.trace(lambda a: float_functions(ops, a), x), target)
    with np.errstate(all="ignore"):
        want = float_functions(np, x)
    for name, got, w in zip(FLOAT_FUNCTIONS, exe(x), want, strict=True):
        check_ulp(got, np.asarray(w), dtype, name)


def numpy_names(m, x, y):
    """The same functions called through numpy's names on traced arrays."""
    return np.sin(x), np.round(x), np.mod(x, y), np.fmod(x, y), np.arctanh(x / 8)


def test_numpy_names_dispatch_to_the_traced_functions(target):
    x = special(np.float32, (5, 3))
    y = (rng.standard_normal((5, 3)) * 3).astype(np.float32)
    exe = compile_for(mlc.trace(lambda a, b: numpy_names(np, a, b), x, y), target)
    with np.errstate(all="ignore"):
        want = numpy_names(np, x, y)
    for got, w in zip(exe(x, y), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=0, equal_nan=True)


def integer_functions(m, a, b, s):
    return (
        m.sign(a),
        m.remainder(a, b),
        m.mod(a, b),
        m.fmod(a, b),
        m.bitwise_and(a, b),
        m.bitwise_or(a, b),
        m.bitwise_xor(a, b),
        m.invert(a),
        m.left_shift(a, s),
        m.right_shift(a, s),
        m.floor(a),
        m.isnan(a),
    )


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.int64])
def test_integer_functions_match_numpy(dtype, target):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, (5, 7), dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, (5, 7), dtype=dtype, endpoint=True)
    b[b == 0] = 7
    s = rng.integers(0, info.bits + 4, (5, 7)).astype(dtype)  # past the width too
    exe = compile_for(mlc.trace(lambda x, y, z: integer_functions(ops, x, y, z), a, b, s), target)
    for i, (got, want) in enumerate(zip(exe(a, b, s), integer_functions(np, a, b, s), strict=True)):
        assert got.dtype == want.dtype, i
        np.testing.assert_array_equal(got, want, err_msg=f"result {i}")


def test_float_remainders_keep_numpy_signs(target):
    a = np.array([5.5, -5.5, 5.5, -5.5, 6.0, -6.0, 0.0, -0.0, 1e-20, np.inf], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, -2.0, 2.0, -1.0, 2.0], np.float32)
    exe = compile_for(mlc.trace(lambda x, y: (ops.remainder(x, y), ops.fmod(x, y)), a, b), target)
    with np.errstate(all="ignore"):
        want = (np.remainder(a, b), np.fmod(a, b))
    for got, w in zip(exe(a, b), want, strict=True):
        np.testing.assert_array_equal(got, w)
        number = ~np.isnan(w)
        np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(w[number]))


def test_bitwise_of_floats_is_a_trace_error():
    with pytest.raises(TraceError, match="bitwise_and of float32 arrays"):
        mlc.trace(lambda x: ops.bitwise_and(x, x), np.ones(3, np.float32))

"""The constant evaluator's corner cases, against Python's own integer and float rules."""

import numpy as np
import pytest
from xdsl.dialects.builtin import Float16Type, IntegerType, TensorType

from mlc.lowering.graph.patterns.evaluate import NotFoldable, divide, maximumf, power
from mlc.lowering.graph.patterns.fold import to_array, to_attr


def test_integer_division_truncates_at_the_extremes():
    a = np.array([-(2**63), -7, 7, -(2**63) + 1], np.int64)
    b = np.array([2, 2, -2, 3], np.int64)

    def truncating(x: int, y: int) -> int:
        quotient = abs(x) // abs(y)
        return quotient if (x < 0) == (y < 0) else -quotient

    want = [truncating(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert divide(a, b).tolist() == want


@pytest.mark.parametrize(("a", "b"), [([1, 0], [0, 1]), ([-128], [-1])])
def test_integer_division_undefined_cases_are_not_folded(a, b):
    with pytest.raises(NotFoldable):
        divide(np.array(a, np.int8), np.array(b, np.int8))


def test_integer_power_wraps_like_repeated_multiplication():
    a = np.array([3, -2, 7, 0], np.int8)
    b = np.array([5, 7, 0, 0], np.int8)
    want = [np.int8(((x**y) + 128) % 256 - 128) for x, y in zip(a.tolist(), b.tolist())]
    assert power(a, b).tolist() == want
    with pytest.raises(NotFoldable):
        power(a, np.array([1, -1, 1, 1], np.int8))


def test_maximumf_orders_signed_zeros_and_propagates_nan():
    a = np.array([-0.0, 0.0, np.nan, 1.0], np.float32)
    b = np.array([0.0, -0.0, 1.0, np.nan], np.float32)
    high, low = maximumf(a, b), maximumf(a, b, take_max=False)
    assert not np.signbit(high[:2]).any() and np.signbit(low[:2]).all()
    assert np.isnan(high[2:]).all() and np.isnan(low[2:]).all()


@pytest.mark.parametrize(
    ("element", "values"),
    [(IntegerType(1), [True, False, True]), (Float16Type(), [1.5, -0.0, 65504.0])],
)
def test_constants_round_trip_through_arrays(element, values):
    t = TensorType(element, [3])
    array = np.array(values, "bool" if element == IntegerType(1) else "float16")
    attr = to_attr(array, t)
    back = to_array(attr)
    assert back is not None and back.dtype == array.dtype
    assert back.tobytes() == array.tobytes()

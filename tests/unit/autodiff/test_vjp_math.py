"""VJP rules of the math ops (trigonometric, hyperbolic, rem, rounding) against differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlc.dialects import ml
from tests.unit.autodiff.vjp_cases import (
    check_vjp,
    f64_type,
    functions,
    hypothesis_settings,
    run,
    vjp_module,
)


def result(builder, op):
    return builder.insert(op).results[0]


# Each op with inputs drawn inside its domain, away from its singular points.
SMOOTH = [
    (ml.SinOp, -3.0, 3.0),
    (ml.CosOp, -3.0, 3.0),
    (ml.TanOp, -1.2, 1.2),
    (ml.AsinOp, -0.9, 0.9),
    (ml.AcosOp, -0.9, 0.9),
    (ml.AtanOp, -3.0, 3.0),
    (ml.SinhOp, -2.0, 2.0),
    (ml.CoshOp, -2.0, 2.0),
    (ml.AsinhOp, -3.0, 3.0),
    (ml.AcoshOp, 1.1, 3.0),
    (ml.AtanhOp, -0.9, 0.9),
]


@pytest.mark.parametrize(("op", "low", "high"), SMOOTH, ids=lambda v: getattr(v, "name", ""))
@hypothesis_settings
@given(shape=st.lists(st.integers(1, 4), max_size=3), seed=st.integers(0, 2**16))
def test_smooth_unary(op, low, high, shape, seed):
    x = np.random.default_rng(seed).uniform(low, high, shape)
    check_vjp(lambda bld, a: result(bld, op(a[0])), [x], rtol=1e-5, atol=1e-6)


def test_rem_broadcasting():
    rng = np.random.default_rng(1)
    a = rng.uniform(-5, 5, (3, 4))
    b = rng.uniform(0.7, 2.0, (4,)) * rng.choice([-1.0, 1.0], 4)
    # Central differences are exact away from the jumps of trunc(a / b).
    assert np.min(np.abs(a / b - np.round(a / b))) > 1e-3
    check_vjp(lambda bld, args: result(bld, ml.RemOp(*args)), [a, b])


@pytest.mark.parametrize("op", [ml.FloorOp, ml.CeilOp, ml.RoundOp])
def test_rounding_has_zero_gradient(op):
    module = vjp_module(lambda bld, a: result(bld, op(a[0])), [f64_type([3])])
    (grad,) = run(functions(module)["f_vjp"], [np.array([0.2, 1.7, -2.4]), np.ones(3)])
    np.testing.assert_array_equal(grad, np.zeros(3))

"""VJP rules of the elementwise ops against central differences, with broadcasting."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import TensorType, f32, f64

from mlc.dialects import ml
from tests.unit.autodiff.vjp_cases import check_vjp, hypothesis_settings


def result(builder, op):
    return builder.insert(op).results[0]


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: a common shape with dims dropped or set to 1."""
    full = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    shapes = []
    for _ in range(2):
        drop = draw(st.integers(0, len(full)))
        shapes.append(tuple(1 if draw(st.booleans()) else d for d in full[drop:]))
    return shapes


def positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def away_from_zero(rng, shape):
    return rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


BINARY = [
    (ml.AddOp, np.random.Generator.standard_normal, np.random.Generator.standard_normal),
    (ml.SubOp, np.random.Generator.standard_normal, np.random.Generator.standard_normal),
    (ml.MulOp, np.random.Generator.standard_normal, np.random.Generator.standard_normal),
    (ml.DivOp, np.random.Generator.standard_normal, positive),
    (ml.PowOp, positive, np.random.Generator.standard_normal),
    (ml.MaxOp, np.random.Generator.standard_normal, np.random.Generator.standard_normal),
    (ml.MinOp, np.random.Generator.standard_normal, np.random.Generator.standard_normal),
]


@pytest.mark.parametrize(("op", "lhs", "rhs"), BINARY, ids=lambda v: getattr(v, "name", ""))
@hypothesis_settings
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_binary_ops_broadcasting(op, lhs, rhs, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = lhs(rng, shapes[0]), rhs(rng, shapes[1])
    check_vjp(lambda bld, args: result(bld, op(args[0], args[1])), [a, b], seed=seed)


UNARY = [
    (ml.NegOp, np.random.Generator.standard_normal),
    (ml.AbsOp, away_from_zero),
    (ml.ReluOp, away_from_zero),
    (ml.ExpOp, np.random.Generator.standard_normal),
    (ml.LogOp, positive),
    (ml.SqrtOp, positive),
    (ml.RsqrtOp, positive),
    (ml.TanhOp, np.random.Generator.standard_normal),
    (ml.SigmoidOp, np.random.Generator.standard_normal),
    (ml.ErfOp, np.random.Generator.standard_normal),
    (lambda x: ml.GeluOp(x, "none"), np.random.Generator.standard_normal),
    (lambda x: ml.GeluOp(x, "tanh"), np.random.Generator.standard_normal),
]


@pytest.mark.parametrize(
    ("op", "draw"),
    UNARY,
    ids=[*(op.name for op, _ in UNARY[:-2]), "gelu-none", "gelu-tanh"],
)
@pytest.mark.parametrize("shape", [(), (1,), (3, 1, 4)])
def test_unary_ops(op, draw, shape):
    x = draw(np.random.default_rng(len(shape)), shape)
    check_vjp(lambda bld, args: result(bld, op(args[0])), [x])


def test_a_value_used_twice_sums_its_cotangents():
    def make(bld, args):
        x = args[0]
        return result(bld, ml.MulOp(result(bld, ml.TanhOp(x)), result(bld, ml.ExpOp(x))))

    check_vjp(make, [np.random.default_rng(1).standard_normal((2, 3))])


def test_select_sends_the_cotangent_to_the_chosen_side():
    rng = np.random.default_rng(2)
    cond = rng.random((3, 1)) > 0.5
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    check_vjp(lambda bld, args: result(bld, ml.SelectOp(*args)), [cond, a, b], wrt=[1, 2])


def test_float_cast_casts_the_cotangent_back():
    def make(bld, args):
        narrow = result(bld, ml.CastOp(args[0], TensorType(f32, [2, 3])))
        wide = result(bld, ml.CastOp(narrow, TensorType(f64, [2, 3])))
        return result(bld, ml.MulOp(wide, wide))

    x = np.random.default_rng(3).standard_normal((2, 3))
    check_vjp(make, [x], rtol=1e-4, atol=1e-5, eps=1e-3)


def test_a_mask_from_a_comparison_is_a_constant():
    # x * (x > 0) is relu: the comparison cuts the path, the product carries the gradient
    def make(bld, args):
        (x,) = args
        zero = result(bld, ml.SubOp(x, x))
        mask = result(bld, ml.CastOp(result(bld, ml.CmpOp("gt", x, zero)), x.type))
        return result(bld, ml.MulOp(x, mask))

    check_vjp(make, [away_from_zero(np.random.default_rng(4), (5,))])

"""VJP rules of matmul, reductions, normalisations and movement, against central differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import TensorType, f64

from mlc.dialects import ml
from tests.unit.autodiff.vjp_cases import (
    check_vjp,
    functions,
    hypothesis_settings,
    run,
    vjp_module,
)


def result(builder, op):
    return builder.insert(op).results[0]


def normal(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((3, 4), (4, 5)),
        ((1, 1), (1, 1)),
        ((2, 3, 4), (4, 2)),  # b broadcast over the batch
        ((3, 4), (2, 4, 5)),  # a broadcast over the batch
        ((2, 1, 3, 4), (1, 3, 4, 2)),  # both broadcast
    ],
)
def test_matmul(a, b):
    check_vjp(lambda bld, args: result(bld, ml.MatmulOp(*args)), [normal(0, *a), normal(1, *b)])


@st.composite
def reduction_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1), max_size=len(shape)))
    axes = list(dict.fromkeys(a % len(shape) for a in axes))
    return shape, axes, draw(st.booleans())


@pytest.mark.parametrize("op", [ml.ReduceSumOp, ml.ReduceMeanOp, ml.ReduceMaxOp, ml.ReduceMinOp])
@hypothesis_settings
@given(case=reduction_case(), seed=st.integers(0, 2**16), dynamic=st.booleans())
def test_reductions(op, case, seed, dynamic):
    # dynamic: the first dim typed `?`, broadcast back (and counted, for a mean) at run time
    shape, axes, keepdims = case
    check_vjp(
        lambda bld, args: result(bld, op(args[0], axes, keepdims)),
        [normal(seed, *shape)],
        dynamic=[0] if dynamic else [],
    )


def test_reduce_max_splits_ties_evenly():
    module = vjp_module(
        lambda bld, args: result(bld, ml.ReduceMaxOp(args[0], [0], False)),
        [TensorType(f64, [4])],
    )
    (grad,) = run(functions(module)["f_vjp"], [np.array([1.0, 3.0, 3.0, 0.0]), np.array(2.0)])
    np.testing.assert_array_equal(grad, [0.0, 1.0, 1.0, 0.0])


@pytest.mark.parametrize(("shape", "axis"), [((5,), 0), ((3, 4), -1), ((2, 3, 4), 1), ((1, 3), 0)])
def test_softmax(shape, axis):
    check_vjp(lambda bld, args: result(bld, ml.SoftmaxOp(args[0], axis)), [normal(2, *shape)])


@pytest.mark.parametrize(
    ("shape", "param", "axis"),
    [((3, 8), (8,), -1), ((2, 3, 4), (3, 4), 1), ((2, 3, 4), (1,), -1), ((4, 1), (1,), 1)],
)
def test_layer_norm(shape, param, axis):
    check_vjp(
        lambda bld, args: result(bld, ml.LayerNormOp(*args, axis=axis, epsilon=1e-3)),
        [normal(3, *shape), 1.0 + normal(4, *param), normal(5, *param)],
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("perm", [[1, 0], [2, 0, 1], [0, 2, 1]])
def test_transpose(perm):
    shape = (2, 3, 4)[: len(perm)]
    check_vjp(lambda bld, args: result(bld, ml.TransposeOp(args[0], perm)), [normal(6, *shape)])


def test_reshape():
    check_vjp(lambda bld, args: result(bld, ml.ReshapeOp(args[0], [3, 2, 2])), [normal(7, 4, 3)])


@pytest.mark.parametrize(("source", "target"), [((3, 1), (2, 3, 4)), ((), (2, 2)), ((4,), (4,))])
def test_broadcast_to(source, target):
    check_vjp(
        lambda bld, args: result(bld, ml.BroadcastToOp(args[0], TensorType(f64, list(target)))),
        [normal(8, *source)],
    )


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    shapes = [[2, 3], [2, 3], [2, 3]]
    for i, s in enumerate(shapes):
        s[axis] = i + 1
    inputs = [normal(9 + i, *s) for i, s in enumerate(shapes)]
    check_vjp(lambda bld, args: result(bld, ml.ConcatOp(list(args), axis)), inputs)


END = 2**63 - 1


@pytest.mark.parametrize(
    ("starts", "ends", "steps"),
    [
        ([1, 0], [3, END], [1, 1]),  # unit steps: zero padding
        ([0, 1], [END, 4], [2, 1]),  # a strided dim: one-hot matmul
        ([-1, 4], [-END - 1, 0], [-1, -2]),  # negative steps
        ([0, 0], [END, END], [1, 1]),  # everything
    ],
)
def test_slice(starts, ends, steps):
    check_vjp(
        lambda bld, args: result(bld, ml.SliceOp(args[0], starts, ends, steps)), [normal(12, 4, 5)]
    )

"""VJP rules of the indexing ops, scans and batch_norm against central differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import arith

from mlc.dialects import ml
from mlc.frontends.trace.tracer import dense
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


def normal(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def constant(bld, array):
    return result(bld, arith.ConstantOp(dense(array)))


@pytest.mark.parametrize(
    ("data", "indices", "axis"),
    [
        ((5, 3), [[0, 4], [4, -1]], 0),  # repeated and negative indices add up
        ((2, 4, 3), [3, 0, 3], 1),
        ((2, 3), [1], -1),
        ((4,), 2, 0),  # a scalar index
    ],
)
def test_gather_is_a_scatter_add(data, indices, axis):
    index = np.array(indices, np.int64)

    def make(bld, args):
        return result(bld, ml.GatherOp(args[0], constant(bld, index), axis))

    check_vjp(make, [normal(13, *data)])


def test_gather_with_indices_as_an_argument():
    # The integer argument is not differentiated: only the data gets a gradient.
    indices = np.array([2, 0, 2], np.int32)
    check_vjp(
        lambda bld, args: result(bld, ml.GatherOp(args[0], args[1], 0)),
        [normal(14, 3, 2), indices],
    )


@pytest.mark.parametrize(
    ("data", "indices", "axis", "dynamic"),
    [
        ((7, 3), (5, 4), 0, [1]),  # a batch of ids (?, 4) from a fixed table
        ((4, 5, 3), (2, 2), 1, [0]),  # rows before the axis (?, 5, 3)
        ((6, 2), (3,), -1, [0]),  # rows before the axis, a 1-D index
    ],
)
def test_gather_with_a_dynamic_dim(data, indices, axis, dynamic):
    # One dynamic dim in the data or the indices: the reshapes infer it at run time.
    rng = np.random.default_rng(24)
    index = rng.integers(-data[axis], data[axis], indices)
    check_vjp(
        lambda bld, a: result(bld, ml.GatherOp(a[0], a[1], axis)),
        [rng.standard_normal(data), index],
        dynamic=dynamic,
    )


@hypothesis_settings
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_gather_elements(shape, data, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    index_shape = list(shape)
    index_shape[axis] = data.draw(st.integers(1, 5))  # repeats when longer than the axis
    n = shape[axis]
    index = rng.integers(-n, n, index_shape)

    def make(bld, args):
        return result(bld, ml.GatherElementsOp(args[0], constant(bld, index), axis))

    check_vjp(make, [rng.standard_normal(shape)])


def test_gather_nd_with_repeated_tuples():
    index = np.array([[0, 1], [3, 4], [0, 1]], np.int64)
    check_vjp(
        lambda bld, a: result(bld, ml.GatherNdOp(a[0], constant(bld, index))),
        [normal(15, 4, 5, 2)],
    )


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_elements(reduction):
    # Repeated indices add up; with "none" they are distinct (the last write wins).
    rows = [[1, 3], [0, 0]] if reduction == "add" else [[1, 3], [0, 2]]
    index = np.array(rows, np.int64)

    def make(bld, a):
        op = ml.ScatterElementsOp(a[0], constant(bld, index), a[1], 1, reduction)
        return result(bld, op)

    check_vjp(make, [normal(16, 2, 4), normal(17, 2, 2)])


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd(reduction):
    index = np.array([[2], [0]], np.int64)
    check_vjp(
        lambda bld, a: result(bld, ml.ScatterNdOp(a[0], constant(bld, index), a[1], reduction)),
        [normal(18, 3, 4), normal(19, 2, 4)],
    )


@hypothesis_settings
@given(
    reduction=st.sampled_from(["mul", "max", "min"]),
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_scatter_elements_reductions(reduction, shape, data, seed):
    # Repeated indices combine; for mul, zeros (one or two at a place) among the data
    # and updates, where dividing the result by an update would lose the gradient.
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    index_shape = list(shape)
    index_shape[axis] = data.draw(st.integers(1, 5))
    n = shape[axis]
    index = rng.integers(-n, n, index_shape)
    x, u = rng.standard_normal(shape), rng.standard_normal(index_shape)
    if reduction == "mul":
        x[rng.random(shape) < 0.2] = 0.0
        u[rng.random(index_shape) < 0.3] = 0.0

    def make(bld, a):
        op = ml.ScatterElementsOp(a[0], constant(bld, index), a[1], axis, reduction)
        return result(bld, op)

    check_vjp(make, [x, u], seed=seed)


@pytest.mark.parametrize("reduction", ["mul", "max", "min"])
def test_scatter_nd_reductions(reduction):
    index = np.array([[2], [0], [2]], np.int64)  # row 2 combines twice
    u = normal(23, 3, 4)
    if reduction == "mul":
        u[0, 1] = u[2, 1] = u[1, 3] = 0.0  # two zeros at (2, 1), one at (0, 3)
    check_vjp(
        lambda bld, a: result(bld, ml.ScatterNdOp(a[0], constant(bld, index), a[1], reduction)),
        [normal(22, 3, 4), u],
    )


@pytest.mark.parametrize("reduction", ["max", "min"])
def test_scatter_ties_share_the_cotangent(reduction):
    # torch's scatter_reduce("amax"/"amin"): the elements equal to the result split its
    # cotangent evenly; here data[0] and both updates tie, data[1] wins alone.
    data, updates = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    index = np.array([0, 0], np.int64)

    def make(bld, a):
        return result(bld, ml.ScatterElementsOp(a[0], constant(bld, index), a[1], 0, reduction))

    module = vjp_module(make, [f64_type((2,)), f64_type((2,))], wrt=(0, 1))
    ct = np.array([3.0, 5.0])
    gdata, gupdates = run(functions(module)["f_vjp"], [data, updates, ct])
    np.testing.assert_allclose(gdata, [1.0, 5.0])
    np.testing.assert_allclose(gupdates, [1.0, 1.0])


@pytest.mark.parametrize(("k", "axis", "largest"), [(2, -1, True), (1, 0, False), (3, 1, True)])
def test_top_k_values(k, axis, largest):
    x = np.random.default_rng(20).permutation(12).reshape(3, 4) * 0.5  # no ties
    check_vjp(lambda bld, a: result(bld, ml.TopKOp(a[0], k, axis, largest)), [x])


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(("shape", "axis"), [((5,), 0), ((2, 3, 1), 1), ((3, 4), -1)])
def test_cumsum(shape, axis, exclusive, reverse):
    check_vjp(
        lambda bld, a: result(bld, ml.CumSumOp(a[0], axis, exclusive, reverse)),
        [normal(21, *shape)],
    )


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 2), (1, 3, 1)])
def test_batch_norm_every_operand(shape):
    c = shape[1]
    rng = np.random.default_rng(22)
    inputs = [
        rng.standard_normal(shape),
        rng.standard_normal(c),
        rng.standard_normal(c),
        rng.standard_normal(c),
        rng.uniform(0.5, 2.0, c),
    ]
    check_vjp(
        lambda bld, a: result(bld, ml.BatchNormOp(*a, epsilon=1e-3)), inputs, rtol=1e-5, atol=1e-6
    )


def test_batch_norm_training_mode():
    # Batch statistics computed from x with reductions: the gradient flows through them.
    rng = np.random.default_rng(23)

    def make(bld, a):
        x, scale, bias = a
        mean = result(bld, ml.ReduceMeanOp(x, [0, 2], False))
        centred = result(bld, ml.SubOp(x, result(bld, ml.ReshapeOp(mean, [3, 1]))))
        var = result(bld, ml.ReduceMeanOp(result(bld, ml.MulOp(centred, centred)), [0, 2], False))
        return result(bld, ml.BatchNormOp(x, scale, bias, mean, var, epsilon=1e-5))

    inputs = [rng.standard_normal((4, 3, 5)), rng.standard_normal(3), rng.standard_normal(3)]
    check_vjp(make, inputs, rtol=1e-5, atol=1e-6)

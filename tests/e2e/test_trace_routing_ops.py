"""
`mlc.ops.top_k`, `put_along_axis`, `scatter_add`, the `%` and `& | ^ ~` operators and the
`.argmax`/`.argmin`/`.cumsum` methods traced and compiled, against numpy, on both targets.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.frontends.trace import TraceError
from tests.gpu.targets import compile_for

rng = np.random.default_rng()


def run(fn, target, *arrays):
    got = compile_for(mlc.trace(fn, *arrays), target)(*arrays)
    return got if isinstance(got, tuple) else (got,)


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def numpy_top_k(x, k):
    order = np.argsort(-x, axis=-1, kind="stable") if x.dtype.kind != "u" else None
    if order is None:
        order = np.argsort(np.iinfo(x.dtype).max - x, axis=-1, kind="stable")
    index = order[..., :k]
    return np.take_along_axis(x, index, -1), index.astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_top_k_matches_a_stable_descending_sort(target, dtype):
    x = rng.integers(0, 6, (3, 5, 7)).astype(dtype)  # ties: the lower position first
    assert_same(run(lambda x: ops.top_k(x, 3), target, x), numpy_top_k(x, 3))


def test_top_k_of_a_vector_and_k_equal_to_the_size(target):
    x = rng.standard_normal(9).astype(np.float32)
    assert_same(run(lambda x: ops.top_k(x, 9), target, x), numpy_top_k(x, 9))


def test_top_k_refuses_k_above_the_axis_and_rank_0():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TraceError, match=r"test_trace_routing_ops.py.*top_k"):
        mlc.trace(lambda x: ops.top_k(x, 4), x)
    with pytest.raises(TraceError, match="top_k of a rank-0 array"):
        mlc.trace(lambda x: ops.top_k(x.sum(), 1), x)


def numpy_put(arr, indices, values, axis, add=False):
    out = arr.copy()
    if add:
        index = list(np.indices(indices.shape, sparse=True))
        index[axis] = indices
        np.add.at(out, tuple(index), np.broadcast_to(values, indices.shape).astype(arr.dtype))
    else:
        np.put_along_axis(out, indices, values, axis)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("axis", [1, -1])
def test_put_along_axis_and_scatter_add_match_numpy(target, dtype, axis):
    arr = (rng.standard_normal((4, 5, 3)) * 5).astype(dtype)
    shape = list(arr.shape)
    shape[axis] = 6  # more updates than slots: duplicate indices
    indices = rng.integers(-arr.shape[axis], arr.shape[axis], shape)
    updates = (rng.standard_normal(shape) * 5).astype(dtype)
    distinct = np.argsort(rng.random(arr.shape), axis=axis)[
        tuple(slice(0, 2) if k == axis % 3 else slice(None) for k in range(3))
    ]  # put_along_axis with duplicates is order-defined; keep numpy's order unambiguous

    def f(arr, indices, updates, distinct):
        values = updates[tuple(slice(0, 2) if k == axis % 3 else slice(None) for k in range(3))]
        return (
            ops.scatter_add(arr, indices, updates, axis),
            ops.put_along_axis(arr, distinct, values, axis),
        )

    values = updates[tuple(slice(0, 2) if k == axis % 3 else slice(None) for k in range(3))]
    want = (
        numpy_put(arr, indices % arr.shape[axis], updates, axis % 3, add=True),
        numpy_put(arr, distinct, values, axis),
    )
    assert_same(run(f, target, arr, indices, updates, distinct), want)


def test_put_along_axis_broadcasts_indices_and_values(target):
    arr = rng.standard_normal((3, 7)).astype(np.float32)
    best = np.argmax(arr, axis=1)[:, None]  # (3, 1)

    def f(arr, best):
        return ops.put_along_axis(arr, best, 0.0, 1), ops.put_along_axis(arr, best[:1], -1.0, 1)

    want = numpy_put(arr, best, 0.0, 1), numpy_put(arr, np.broadcast_to(best[:1], (3, 1)), -1.0, 1)
    assert_same(run(f, target, arr, best), want)


def test_scatter_add_with_axis_none_works_on_the_flat_array(target):
    arr = rng.standard_normal((3, 4)).astype(np.float32)
    indices = rng.integers(0, 12, 20)
    updates = rng.standard_normal(20).astype(np.float32)
    want = arr.copy().reshape(-1)
    np.add.at(want, indices, updates)
    got = run(lambda a, i, u: ops.scatter_add(a, i, u, None), target, arr, indices, updates)
    assert_same(got, (want.reshape(3, 4),))


def test_scatter_refuses_float_indices_and_bool_accumulation():
    arr = np.zeros((2, 3), np.float32)
    with pytest.raises(TraceError, match="put_along_axis: indices must be integers"):
        mlc.trace(lambda a: ops.put_along_axis(a, a, 1.0, 1), arr)
    with pytest.raises(TraceError, match="scatter_add of a bool array"):
        mlc.trace(lambda a: ops.scatter_add(a > 0, np.zeros((2, 1), np.int64), True, 1), arr)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_integer_operators_are_bitwise_and_remainders_floored(target, dtype):
    x = rng.integers(1, 100, (3, 5)).astype(dtype)
    y = rng.integers(1, 9, (5,)).astype(dtype)

    def f(x, y):
        return x & y, x | 6, 12 ^ x, ~x, x % y, 7 % y

    assert_same(run(f, target, x, y), (x & y, x | 6, 12 ^ x, ~x, x % y, 7 % y))


def test_bool_operators_stay_logical_and_float_remainder_follows_numpy(target):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    b = rng.standard_normal((6,)).astype(np.float32)

    def f(a, b):
        p, q = a > 0, b > 0
        return p & q, p | q, p ^ q, ~p, a % b, a % 0.5

    want = ((a > 0) & (b > 0), (a > 0) | (b > 0), (a > 0) ^ (b > 0), ~(a > 0), a % b, a % 0.5)
    assert_same(run(f, target, a, b), want)


def test_bitwise_operators_refuse_floats():
    x = np.zeros(3, np.float32)
    with pytest.raises(TraceError, match="bitwise_and of float32 arrays"):
        mlc.trace(lambda x: x & 1, x)


def test_array_methods_and_broadcasting_where(target):
    x = rng.standard_normal((4, 7)).astype(np.float32)
    c = rng.random((7,)) > 0.5

    def f(x, c):
        return x.argmax(), x.argmin(axis=1), x.cumsum(axis=0), x.cumsum(), np.where(c, x, 0.5)

    want = (x.argmax(), x.argmin(1), x.cumsum(0), x.cumsum(), np.where(c, x, np.float32(0.5)))
    assert_same(run(f, target, x, c), want)

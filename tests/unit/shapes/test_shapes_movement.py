"""Tests of `mlc.shapes.movement`: transpose, reshape, concat, slice, gather, against numpy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlc import shapes
from tests.unit.shapes.shape_cases import (
    D,
    hypothesis_settings,
    np_shape,
    raises_shape_error,
    shape_st,
)


@pytest.mark.parametrize(
    ("shape", "perm"),
    [((2, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((5,), (0,)), ((), ())],
)
def test_transpose_matches_numpy(shape: tuple[int, ...], perm: tuple[int, ...]):
    assert shapes.transpose(shape, perm) == np.transpose(np.empty(shape), perm).shape


def test_transpose_dynamic():
    assert shapes.transpose((D, 3, 4), (2, 0, 1)) == (4, D, 3)


@hypothesis_settings
@given(shape_st.flatmap(lambda s: st.tuples(st.just(s), st.permutations(range(len(s))))))
def test_transpose_hypothesis(case: tuple[tuple[int, ...], list[int]]):
    shape, perm = case
    assert shapes.transpose(shape, perm) == np.transpose(np.empty(shape), perm).shape


@pytest.mark.parametrize("perm", [(0,), (0, 0), (1, 2), (0, 1, 2), (-1, 0)])
def test_transpose_bad_perm(perm: tuple[int, ...]):
    with raises_shape_error(f"perm {list(perm)} is not a permutation of the 2 dimensions"):
        shapes.transpose((2, 3), perm)


def test_check_permutation():
    shapes.check_permutation((1, 2, 0), 3)
    shapes.check_permutation((), 0)
    with raises_shape_error("perm [0, 2] is not a permutation of the 2 dimensions"):
        shapes.check_permutation((0, 2), 2)


# ---------------------------------------------------------------------------
# Reshape
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "target"),
    [
        ((2, 3, 4), (6, 4)),
        ((2, 3, 4), (24,)),
        ((2, 3, 4), (-1,)),
        ((2, 3, 4), (-1, 4)),
        ((2, 3, 4), (2, -1, 2)),
        ((24,), (1, 2, 1, 12)),
        ((), (1, 1)),
        ((1, 1), ()),
        ((), (-1,)),
        ((0, 3), (-1, 3)),
        ((0, 3), (3, 0)),
    ],
)
def test_reshape_matches_numpy(shape: tuple[int, ...], target: tuple[int, ...]):
    expected = np_shape(np.reshape(np.empty(shape), target))
    assert shapes.reshape(shape, target) == expected


@pytest.mark.parametrize(
    ("shape", "target", "expected"),
    [
        ((D, 4), (2, 2, -1), (2, 2, D)),  # -1 of an unknown count stays unknown
        ((2, 3), (D, 2), (D, 2)),  # a run-time shape operand supplies the ?
        ((2, 3), (D, -1), (D, D)),
        ((D, 3), (3, D), (3, D)),
        ((D,), (4, 5), (4, 5)),
    ],
)
def test_reshape_dynamic(
    shape: tuple[int, ...], target: tuple[int, ...], expected: tuple[int, ...]
):
    assert shapes.reshape(shape, target) == expected


def test_reshape_count_mismatch():
    with pytest.raises(ValueError):
        np.reshape(np.empty((2, 3)), (4, 2))
    with raises_shape_error("element counts differ: (2x3) has 6, (4x2) has 8"):
        shapes.reshape((2, 3), (4, 2))


@pytest.mark.parametrize(
    ("shape", "target", "fragment"),
    [
        ((2, 3), (4, -1), "cannot reshape 6 elements into (4) with one inferred dimension"),
        ((0, 3), (0, -1), "cannot reshape 0 elements into (0) with one inferred dimension"),
    ],
)
def test_reshape_inferred_does_not_divide(
    shape: tuple[int, ...], target: tuple[int, ...], fragment: str
):
    with pytest.raises(ValueError):
        np.reshape(np.empty(shape), target)
    with raises_shape_error(fragment):
        shapes.reshape(shape, target)


def test_reshape_two_inferred():
    with pytest.raises(ValueError):
        np.reshape(np.empty((2, 3)), (-1, -1))
    with raises_shape_error("target shape [-1, -1] has more than one -1"):
        shapes.reshape((2, 3), (-1, -1))


def test_reshape_negative_dimension():
    with raises_shape_error("target shape [-2, 3] has a negative dimension"):
        shapes.reshape((2, 3), (-2, 3))


# ---------------------------------------------------------------------------
# Concat
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operands", "axis"),
    [
        ([(2, 3), (2, 5)], 1),
        ([(2, 3), (4, 3), (1, 3)], 0),
        ([(2, 3), (2, 5)], -1),
        ([(2, 3, 4)], 2),
        ([(0, 3), (2, 3)], 0),
        ([(4,), (5,)], -1),
    ],
)
def test_concat_matches_numpy(operands: list[tuple[int, ...]], axis: int):
    expected = np.concatenate([np.empty(s) for s in operands], axis=axis).shape
    assert shapes.concat(operands, axis) == expected


@pytest.mark.parametrize(
    ("operands", "axis", "expected"),
    [
        ([(D, 3), (2, 3)], 0, (D, 3)),  # an unknown length along the axis
        ([(D, 3), (2, D)], 1, (2, D)),  # other dims join: ? with 2 is 2
        ([(D, 3), (D, 4)], 1, (D, 7)),
        ([(2, D), (2, D)], -1, (2, D)),
    ],
)
def test_concat_dynamic(operands: list[tuple[int, ...]], axis: int, expected: tuple[int, ...]):
    assert shapes.concat(operands, axis) == expected


def test_concat_no_operands():
    with raises_shape_error("expects at least one operand"):
        shapes.concat([], 0)


def test_concat_rank_zero():
    with raises_shape_error("cannot concatenate rank-0 tensors"):
        shapes.concat([(), ()], 0)


def test_concat_ranks_differ():
    with raises_shape_error("expects operands of one rank, got ranks (2, 1)"):
        shapes.concat([(2, 3), (3,)], 0)


def test_concat_axis_out_of_range():
    with raises_shape_error("axis 2 is out of range for rank 2"):
        shapes.concat([(2, 3), (2, 3)], 2)


def test_concat_other_dimension_differs():
    with pytest.raises(ValueError):
        np.concatenate([np.empty((2, 3)), np.empty((2, 4))], axis=0)
    with raises_shape_error(
        "operand 1 differs from operand 0 in dimension 1 (4 vs 3), "
        "which is not the concatenation axis"
    ):
        shapes.concat([(2, 3), (2, 4)], 0)


# ---------------------------------------------------------------------------
# Slice
# ---------------------------------------------------------------------------

BIG = 2**63 - 1


@pytest.mark.parametrize(
    ("dim", "start", "end", "step"),
    [
        (10, 0, 10, 1),
        (10, 2, 8, 3),
        (10, -3, BIG, 1),  # negative start counts from the end
        (10, 0, -1, 1),
        (10, 20, 30, 1),  # clamped: empty
        (10, -20, 3, 1),  # clamped to 0
        (10, BIG, -(2**63), -1),  # the whole dim reversed
        (10, -1, -11, -2),
        (10, 8, 2, -3),
        (10, 2, 8, -1),  # empty with a negative step
        (0, 0, 5, 1),
        (5, 0, BIG, 7),
    ],
)
def test_slice_dim_matches_numpy(dim: int, start: int, end: int, step: int):
    expected = len(np.empty(dim)[start:end:step])
    assert shapes.slice_dim(dim, start, end, step) == expected


def test_slice_dim_dynamic():
    assert shapes.slice_dim(D, 0, 2, 1) == D
    assert shapes.slice_dim(D, 0, BIG, 1) == D


def test_slice_matches_numpy():
    x = np.empty((4, 6, 5))
    result = shapes.slice_((4, 6, 5), (0, 1, -1), (4, BIG, -(2**63)), (2, 1, -2))
    assert result == x[0:4:2, 1:BIG:1, -1 : -(2**63) : -2].shape


def test_slice_dynamic_dims_stay_dynamic():
    assert shapes.slice_((D, 6), (0, 1), (2, 4), (1, 1)) == (D, 3)


slice_bound = st.one_of(st.integers(-8, 8), st.sampled_from([BIG, -(2**63)]))
slice_step = st.integers(-3, 3).filter(lambda t: t != 0)


@hypothesis_settings
@given(shape_st, st.data())
def test_slice_hypothesis(shape: tuple[int, ...], data: st.DataObject):
    rank = len(shape)
    starts = data.draw(st.lists(slice_bound, min_size=rank, max_size=rank))
    ends = data.draw(st.lists(slice_bound, min_size=rank, max_size=rank))
    steps = data.draw(st.lists(slice_step, min_size=rank, max_size=rank))
    index = tuple(slice(*bounds) for bounds in zip(starts, ends, steps, strict=True))
    expected = np_shape(np.empty(shape)[index])
    assert shapes.slice_(shape, starts, ends, steps) == expected


@pytest.mark.parametrize(
    ("starts", "ends", "steps", "fragment"),
    [
        ((0,), (1, 1), (1, 1), "expects starts to have one entry per dimension (2), got 1"),
        ((0, 0), (1,), (1, 1), "expects ends to have one entry per dimension (2), got 1"),
        ((0, 0), (1, 1), (1, 1, 1), "expects steps to have one entry per dimension (2), got 3"),
        ((0, 0), (1, 1), (1, 0), "steps [1, 0] contain a zero"),
    ],
)
def test_slice_errors(
    starts: tuple[int, ...], ends: tuple[int, ...], steps: tuple[int, ...], fragment: str
):
    with raises_shape_error(fragment):
        shapes.slice_((4, 6), starts, ends, steps)


# ---------------------------------------------------------------------------
# Gather
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "indices", "axis"),
    [
        ((100, 16), (2, 5), 0),
        ((3, 4, 5), (2,), 1),
        ((3, 4, 5), (), 2),  # a scalar index drops the axis
        ((3, 4, 5), (6, 7), -1),
        ((3, 4), (2, 2, 2), -2),
        ((5,), (3,), 0),
    ],
)
def test_gather_matches_numpy_take(data: tuple[int, ...], indices: tuple[int, ...], axis: int):
    taken = np.take(np.empty(data), np.zeros(indices, dtype=np.int64), axis=axis)
    assert shapes.gather(data, indices, axis) == np_shape(taken)


def test_gather_dynamic():
    assert shapes.gather((D, 16), (2, D), 0) == (2, D, 16)
    assert shapes.gather((3, D, 5), (4,), 0) == (4, D, 5)


def test_gather_scalar_data():
    with raises_shape_error("expects data of rank >= 1"):
        shapes.gather((), (2,), 0)


def test_gather_axis_out_of_range():
    with raises_shape_error("axis -3 is out of range for rank 2"):
        shapes.gather((3, 4), (2,), -3)

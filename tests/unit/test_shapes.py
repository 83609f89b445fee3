"""
Tests for `mlc.shapes`, the shape function of every `ml` op.

Static results are checked against numpy wherever numpy has the operation (on
`np.empty` arrays, so only shapes are computed), convolution and pooling against a
direct count of window positions. Dynamic dimensions (`DYNAMIC`, printed `?`) are
checked to stay dynamic unless the rule pins them, and every error case to raise
`ShapeError` with a message that names the dimensions involved.
"""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlc import shapes
from mlc.shapes import DYNAMIC, ShapeError

D = DYNAMIC

# Small dims (0 included, as numpy allows empty tensors) keep `np.empty` cheap and make
# broadcast conflicts frequent enough to exercise the error path.
dims = st.integers(min_value=0, max_value=4)
shape_st = st.lists(dims, max_size=4).map(tuple)

# No example database, so test runs write nothing to the tree; no deadline, as numpy's
# first call may be slow on a loaded machine.
hypothesis_settings = settings(database=None, max_examples=200, deadline=None)


def np_shape(array: np.ndarray) -> tuple[int, ...]:
    return tuple(int(d) for d in array.shape)


def raises_shape_error(*fragments: str) -> pytest.RaisesExc[ShapeError]:
    """Expect a ShapeError whose message contains every fragment, in order."""
    return pytest.raises(ShapeError, match=".*".join(re.escape(f) for f in fragments))


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def test_dynamic_is_xdsl_dynamic_index():
    from xdsl.dialects.builtin import DYNAMIC_INDEX

    assert DYNAMIC == DYNAMIC_INDEX


def test_shape_error_is_a_value_error():
    assert issubclass(ShapeError, ValueError)


def test_is_static():
    assert shapes.is_static(0)
    assert shapes.is_static(7)
    assert not shapes.is_static(D)


@pytest.mark.parametrize(
    ("shape", "text"),
    [((), "scalar"), ((4,), "4"), ((2, D, 4), "2x?x4"), ((D,), "?"), ((0, 1), "0x1")],
)
def test_format_shape(shape: tuple[int, ...], text: str):
    assert shapes.format_shape(shape) == text


def test_format_dim():
    assert shapes.format_dim(3) == "3"
    assert shapes.format_dim(0) == "0"
    assert shapes.format_dim(D) == "?"


@pytest.mark.parametrize(
    ("shape", "count"),
    [((), 1), ((2, 3, 4), 24), ((5, 0), 0), ((2, D), None), ((D,), None)],
)
def test_num_elements(shape: tuple[int, ...], count: int | None):
    assert shapes.num_elements(shape) == count


@pytest.mark.parametrize(
    ("axis", "rank", "expected"),
    [(0, 1, 0), (2, 3, 2), (-1, 3, 2), (-3, 3, 0)],
)
def test_normalize_axis(axis: int, rank: int, expected: int):
    assert shapes.normalize_axis(axis, rank) == expected


@pytest.mark.parametrize(("axis", "rank"), [(3, 3), (-4, 3), (0, 0)])
def test_normalize_axis_out_of_range(axis: int, rank: int):
    with raises_shape_error(f"axis {axis} is out of range for rank {rank}"):
        shapes.normalize_axis(axis, rank)


def test_normalize_axis_names_what():
    with raises_shape_error("dim 5 is out of range for rank 2"):
        shapes.normalize_axis(5, 2, what="dim")


def test_normalize_axes():
    assert shapes.normalize_axes([], 3) == ()
    assert shapes.normalize_axes([-1, 0], 3) == (2, 0)


def test_normalize_axes_duplicate():
    with raises_shape_error("axes [1, -2] name a dimension twice"):
        shapes.normalize_axes([1, -2], 3)


def test_normalize_axes_out_of_range():
    with raises_shape_error("axis 3 is out of range for rank 3"):
        shapes.normalize_axes([0, 3], 3)


def test_join_dims():
    assert shapes.join_dims(4, 4, "unused") == 4
    assert shapes.join_dims(D, 4, "unused") == 4
    assert shapes.join_dims(4, D, "unused") == 4
    assert shapes.join_dims(D, D, "unused") == D
    with raises_shape_error("dims 3 and 4 differ"):
        shapes.join_dims(3, 4, "dims 3 and 4 differ")


@pytest.mark.parametrize(
    ("declared", "inferred", "ok"),
    [
        ((), (), True),
        ((2, 3), (2, 3), True),
        ((2, 3), (2, D), True),  # a refinement of the inferred type
        ((2, D), (2, 3), True),  # a declared type more dynamic than inferred
        ((D, D), (2, 3), True),
        ((2, 4), (2, 3), False),  # a static contradiction
        ((2, 3), (2, 3, 1), False),  # ranks differ
        ((6,), (2, 3), False),
    ],
)
def test_compatible(declared: tuple[int, ...], inferred: tuple[int, ...], ok: bool):
    assert shapes.compatible(declared, inferred) is ok


# ---------------------------------------------------------------------------
# Broadcasting
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (1, 5, 5),
        (5, 1, 5),
        (5, 5, 5),
        (1, 1, 1),
        (0, 1, 0),
        (0, 0, 0),
        (D, 5, 5),  # ? must be 1 or 5 at run time, so the result is 5
        (5, D, 5),
        (D, 1, D),  # ? stays unknown
        (1, D, D),
        (D, D, D),
        (D, 0, 0),
    ],
)
def test_broadcast_dims(a: int, b: int, expected: int):
    assert shapes.broadcast_dims(a, b) == expected


@pytest.mark.parametrize(("a", "b"), [(2, 3), (3, 2), (0, 2), (4, 0)])
def test_broadcast_dims_conflict(a: int, b: int):
    with raises_shape_error(f"dimensions {a} and {b} are not broadcast-compatible"):
        shapes.broadcast_dims(a, b)


@pytest.mark.parametrize(
    "operands",
    [
        [(4, 8), (8,)],
        [(4, 1), (1, 8)],
        [(2, 1, 3), (4, 1)],
        [(), (3, 2)],
        [(3, 2), ()],
        [(0, 3), (1, 3)],
        [(5, 1, 4), (1, 3, 1), (4,)],
        [(1,), (1, 1, 1)],
        [(7,)],
        [],
    ],
)
def test_broadcast_matches_numpy(operands: list[tuple[int, ...]]):
    assert shapes.broadcast(*operands) == np.broadcast_shapes(*operands)


@pytest.mark.parametrize(
    ("operands", "expected"),
    [
        ([(D, 8), (4, 8)], (4, 8)),
        ([(D, 8), (1, 8)], (D, 8)),
        ([(D, 8), (8,)], (D, 8)),
        ([(D,), (D,)], (D,)),
        ([(D, 1), (1, D)], (D, D)),
        ([(2, D, 1), (3, 4)], (2, 3, 4)),
        ([(D,), (1,), (6,)], (6,)),
    ],
)
def test_broadcast_dynamic(operands: list[tuple[int, ...]], expected: tuple[int, ...]):
    assert shapes.broadcast(*operands) == expected


def test_broadcast_error_names_shapes_and_dimension():
    with raises_shape_error("shapes (2x3, 4x3) are not broadcast-compatible in dimension -2"):
        shapes.broadcast((2, 3), (4, 3))
    with raises_shape_error("shapes (4x?, 3, 5) are not broadcast-compatible", "-1"):
        shapes.broadcast((4, D), (3,), (5,))


@hypothesis_settings
@given(st.lists(shape_st, min_size=1, max_size=3))
def test_broadcast_hypothesis(operands: list[tuple[int, ...]]):
    try:
        expected = np.broadcast_shapes(*operands)
    except ValueError:
        with pytest.raises(ShapeError):
            shapes.broadcast(*operands)
        return
    assert shapes.broadcast(*operands) == expected


@hypothesis_settings
@given(shape_st, shape_st, st.data())
def test_broadcast_dynamic_hypothesis(a: tuple[int, ...], b: tuple[int, ...], data: st.DataObject):
    """
    Hiding dims behind `?` never invents a conflict, and `?` stays unless pinned.

    For operands numpy broadcasts, replacing any dims by `?` must still broadcast.
    A result dim is static exactly when an operand holds a static dim other than 1
    there, or when no operand holds a `?` there; a static result dim is numpy's.
    """
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        return
    mask_a = data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    mask_b = data.draw(st.lists(st.booleans(), min_size=len(b), max_size=len(b)))
    dyn_a = tuple(D if m else d for d, m in zip(a, mask_a, strict=True))
    dyn_b = tuple(D if m else d for d, m in zip(b, mask_b, strict=True))
    result = shapes.broadcast(dyn_a, dyn_b)
    assert len(result) == len(expected)
    for i, dim in enumerate(result):
        offsets = [(s, i - len(result) + len(s)) for s in (dyn_a, dyn_b)]
        aligned = [s[j] for s, j in offsets if j >= 0]
        static = [d for d in aligned if shapes.is_static(d)]
        pinned = any(d != 1 for d in static) or len(static) == len(aligned)
        assert shapes.is_static(dim) == pinned
        if pinned:
            assert dim == expected[i]


@pytest.mark.parametrize(
    ("shape", "target"),
    [
        ((3, 1), (2, 3, 4)),
        ((), (2, 3)),
        ((4,), (4,)),
        ((1,), (0,)),
        ((1, 0), (5, 0)),
    ],
)
def test_broadcast_to_matches_numpy(shape: tuple[int, ...], target: tuple[int, ...]):
    expected = np_shape(np.broadcast_to(np.empty(shape), target))
    assert shapes.broadcast_to(shape, target) == expected


@pytest.mark.parametrize(
    ("shape", "target"),
    [
        ((D, 4), (3, 4)),  # a dynamic operand dim may be 1 or 3 at run time
        ((3, 4), (D, 4)),  # the target is the op's choice: it stays dynamic
        ((1,), (D, D)),
        ((D,), (D,)),
    ],
)
def test_broadcast_to_dynamic(shape: tuple[int, ...], target: tuple[int, ...]):
    assert shapes.broadcast_to(shape, target) == target


def test_broadcast_to_lower_rank():
    with raises_shape_error("cannot broadcast rank 3 shape (2x3x4) to lower rank 2 (3x4)"):
        shapes.broadcast_to((2, 3, 4), (3, 4))


@pytest.mark.parametrize(
    ("shape", "target", "fragments"),
    [
        ((3,), (2, 4), ("cannot broadcast (3) to (2x4)", "dimension 0 is 3, expected 1 or 4")),
        ((2, 3), (2, 1), ("(2x3) to (2x1)", "dimension 1 is 3, expected 1 or 1")),
        ((3, 5), (D, 4), ("(3x5) to (?x4)", "dimension 1 is 5, expected 1 or 4")),
    ],
)
def test_broadcast_to_conflict(
    shape: tuple[int, ...], target: tuple[int, ...], fragments: tuple[str, ...]
):
    if all(shapes.is_static(d) for d in target):
        with pytest.raises(ValueError):
            np.broadcast_to(np.empty(shape), target)
    with raises_shape_error(*fragments):
        shapes.broadcast_to(shape, target)


# ---------------------------------------------------------------------------
# Matmul
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((4, 8), (8, 16)),
        ((1, 1), (1, 1)),
        ((2, 3, 4), (4, 5)),
        ((4, 5), (2, 5, 6)),
        ((2, 1, 3, 4), (5, 4, 6)),
        ((7, 1, 2, 3), (1, 6, 3, 2)),
        ((0, 3), (3, 2)),
        ((2, 0), (0, 3)),
    ],
)
def test_matmul_matches_numpy(a: tuple[int, ...], b: tuple[int, ...]):
    expected = np_shape(np.matmul(np.zeros(a), np.zeros(b)))
    assert shapes.matmul(a, b) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((D, 8), (8, 16), (D, 16)),
        ((4, D), (8, 16), (4, 16)),  # a dynamic inner dim must be 8
        ((4, 8), (D, D), (4, D)),
        ((D, 3, 4, 8), (8, 2), (D, 3, 4, 2)),
        ((D, 4, 8), (3, 8, 2), (3, 4, 2)),  # ? batch against 3 is 3
        ((D, 4, 8), (1, 8, 2), (D, 4, 2)),
    ],
)
def test_matmul_dynamic(a: tuple[int, ...], b: tuple[int, ...], expected: tuple[int, ...]):
    assert shapes.matmul(a, b) == expected


def test_matmul_contracting_mismatch():
    with pytest.raises(ValueError):
        np.matmul(np.empty((2, 3, 4)), np.empty((5, 6)))
    with raises_shape_error(
        "contracting dimensions differ: lhs dimension 2 is 4, rhs dimension 0 is 5"
    ):
        shapes.matmul((2, 3, 4), (5, 6))


def test_matmul_batch_mismatch():
    with pytest.raises(ValueError):
        np.matmul(np.empty((2, 3, 4)), np.empty((3, 4, 5)))
    with raises_shape_error("batch dimensions (2) and (3) are not broadcast-compatible"):
        shapes.matmul((2, 3, 4), (3, 4, 5))


@pytest.mark.parametrize(("a", "b"), [((4,), (4, 2)), ((2, 4), (4,)), ((), ())])
def test_matmul_rank_below_two(a: tuple[int, ...], b: tuple[int, ...]):
    with raises_shape_error(f"expects operands of rank >= 2, got ranks {len(a)} and {len(b)}"):
        shapes.matmul(a, b)


# ---------------------------------------------------------------------------
# Transpose
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Reductions and normalisations
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "axes"),
    [
        ((4, 8), (1,)),
        ((4, 8), (0, 1)),
        ((4, 8), (-1,)),
        ((2, 3, 4), (0, 2)),
        ((2, 3, 4), ()),  # nothing reduced, as numpy's axis=()
        ((), ()),
        ((0, 3), (0,)),
    ],
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_matches_numpy(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool):
    expected = np.sum(np.empty(shape), axis=axes, keepdims=keepdims).shape
    assert shapes.reduce(shape, axes, keepdims) == expected


def test_reduce_dynamic():
    assert shapes.reduce((D, 8, D), (1,), False) == (D, D)
    assert shapes.reduce((D, 8, D), (0,), True) == (1, 8, D)


@hypothesis_settings
@given(shape_st, st.data(), st.booleans())
def test_reduce_hypothesis(shape: tuple[int, ...], data: st.DataObject, keepdims: bool):
    rank = len(shape)
    chosen = data.draw(st.lists(st.integers(0, max(rank - 1, 0)), unique=True, max_size=rank))
    # Each axis may be written negatively, counting from the end.
    signs = data.draw(st.lists(st.booleans(), min_size=len(chosen), max_size=len(chosen)))
    axes = tuple(a - rank if neg else a for a, neg in zip(chosen, signs, strict=True))
    expected = np.sum(np.empty(shape), axis=axes, keepdims=keepdims).shape
    assert shapes.reduce(shape, axes, keepdims) == expected


def test_reduce_duplicate_axes():
    with raises_shape_error("axes [0, -2] name a dimension twice"):
        shapes.reduce((2, 3), (0, -2), False)


def test_reduce_axis_out_of_range():
    with raises_shape_error("axis 2 is out of range for rank 2"):
        shapes.reduce((2, 3), (2,), True)


def test_softmax():
    assert shapes.softmax((2, 10), -1) == (2, 10)
    assert shapes.softmax((D, 10), 0) == (D, 10)


def test_softmax_errors():
    with raises_shape_error("expects an operand of rank >= 1"):
        shapes.softmax((), 0)
    with raises_shape_error("axis 2 is out of range for rank 2"):
        shapes.softmax((2, 10), 2)


@pytest.mark.parametrize(
    ("shape", "scale", "bias", "axis"),
    [
        ((2, 8, 16), (16,), (16,), -1),
        ((2, 8, 16), (8, 16), (16,), 1),
        ((2, 8, 16), (1,), (), -2),
        ((2, 8, 16), (2, 8, 16), (2, 8, 16), 0),
        ((D, 8, D), (16,), (D,), 2),  # ? dims may hold any size
    ],
)
def test_layer_norm(
    shape: tuple[int, ...], scale: tuple[int, ...], bias: tuple[int, ...], axis: int
):
    assert shapes.layer_norm(shape, scale, bias, axis) == shape


def test_layer_norm_errors():
    with raises_shape_error("expects an operand of rank >= 1"):
        shapes.layer_norm((), (), (), 0)
    with raises_shape_error("axis 3 is out of range for rank 3"):
        shapes.layer_norm((2, 8, 16), (16,), (16,), 3)
    with raises_shape_error("scale shape (8) does not broadcast to the normalized shape (16)"):
        shapes.layer_norm((2, 8, 16), (8,), (16,), -1)
    with raises_shape_error("bias shape (8x16) does not broadcast to the normalized shape (16)"):
        shapes.layer_norm((2, 8, 16), (16,), (8, 16), -1)


def test_batch_norm():
    c = (3,)
    assert shapes.batch_norm((1, 3, 8, 8), c, c, c, c) == (1, 3, 8, 8)
    assert shapes.batch_norm((4, 3), c, c, c, c) == (4, 3)
    assert shapes.batch_norm((D, D, 8), c, (D,), c, c) == (D, D, 8)


def test_batch_norm_errors():
    c = (3,)
    with raises_shape_error("expects an input of rank >= 2 (N, C, ...), got rank 1"):
        shapes.batch_norm((3,), c, c, c, c)
    with raises_shape_error("expects mean of rank 1, got rank 2"):
        shapes.batch_norm((1, 3, 8, 8), c, c, (1, 3), c)
    with raises_shape_error("var size (4) does not match the channel dimension (3)"):
        shapes.batch_norm((1, 3, 8, 8), c, c, c, (4,))


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------


def count_windows(size: int, kernel: int, stride: int, dilation: int, lo: int, hi: int) -> int:
    """Count the window starts, stepping by `stride`, whose last tap is in the padded input."""
    span = dilation * (kernel - 1) + 1
    return sum(1 for p in range(-lo, size + hi, stride) if p + span <= size + hi)


WINDOW_CASES = [
    (size, kernel, stride, dilation, lo, hi)
    for size in (1, 4, 7, 8)
    for kernel in (1, 2, 3)
    for stride in (1, 2, 3)
    for dilation in (1, 2)
    for lo in (0, 1)
    for hi in (0, 2)
    if count_windows(size, kernel, stride, dilation, lo, hi) > 0
]


@pytest.mark.parametrize(("size", "kernel", "stride", "dilation", "lo", "hi"), WINDOW_CASES)
def test_window_output_counts_positions(
    size: int, kernel: int, stride: int, dilation: int, lo: int, hi: int
):
    expected = count_windows(size, kernel, stride, dilation, lo, hi)
    assert shapes.window_output(size, kernel, stride, dilation, lo, hi) == expected


def test_window_output_dynamic():
    assert shapes.window_output(D, 3, 1, 1, 0, 0) == D
    assert shapes.window_output(8, D, 1, 1, 0, 0) == D


def test_window_output_does_not_fit():
    with raises_shape_error(
        "window of size 3 (dilation 2) does not fit an input dimension of 4 padded by (0, 0)"
    ):
        shapes.window_output(4, 3, 1, 2, 0, 0)


def test_check_window_attrs_accepts():
    shapes.check_window_attrs(2, (1, 2), (0, 1, 2, 3), (2, 1))
    shapes.check_window_attrs(2, (1, 1), (0, 0, 0, 0), (1, 1))
    shapes.check_window_attrs(1, (3,), (0, 1), (2,))
    shapes.check_window_attrs(3, (1, 2, 1), (0, 1, 2, 3, 0, 0), (2, 1, 1))


@pytest.mark.parametrize(
    ("strides", "pads", "dilations", "fragment"),
    [
        ((1,), (0, 0, 0, 0), (1, 1), "expects 2 strides, got 1"),
        ((1, 1), (0, 0, 0, 0), (1, 1, 1), "expects 2 dilations, got 3"),
        ((1, 1), (0, 0), (1, 1), "expects 4 pads (the begins, then the ends of HxW), got 2"),
        ((1, 0), (0, 0, 0, 0), (1, 1), "strides [1, 0] must be positive"),
        ((1, 1), (0, 0, 0, 0), (0, 1), "dilations [0, 1] must be positive"),
        ((1, 1), (0, -1, 0, 0), (1, 1), "pads [0, -1, 0, 0] must be non-negative"),
    ],
)
def test_check_window_attrs_errors(
    strides: tuple[int, ...], pads: tuple[int, ...], dilations: tuple[int, ...], fragment: str
):
    with raises_shape_error(fragment):
        shapes.check_window_attrs(2, strides, pads, dilations)


def conv(
    x: tuple[int, ...],
    w: tuple[int, ...],
    bias: tuple[int, ...] | None = None,
    strides: tuple[int, int] = (1, 1),
    dilations: tuple[int, int] = (1, 1),
    pads: tuple[int, int, int, int] = (0, 0, 0, 0),
    groups: int = 1,
) -> shapes.Shape:
    return shapes.conv(len(strides), x, w, bias, strides, dilations, pads, groups)


@pytest.mark.parametrize(
    ("x", "w", "strides", "pads", "expected"),
    [
        # onnx Conv's documented examples (test_basic_conv_with_padding and friends)
        ((1, 1, 5, 5), (1, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1, 5, 5)),
        ((1, 1, 5, 5), (1, 1, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1, 3, 3)),
        ((1, 1, 7, 5), (1, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1, 4, 3)),
        ((1, 1, 7, 5), (1, 1, 3, 3), (2, 2), (0, 0, 0, 0), (1, 1, 3, 2)),
        ((1, 1, 7, 5), (1, 1, 3, 3), (2, 2), (1, 0, 1, 0), (1, 1, 4, 2)),
        # ResNet's stem: 7x7 stride 2 pad 3
        ((1, 3, 224, 224), (64, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 64, 112, 112)),
    ],
)
def test_conv2d_onnx_cases(
    x: tuple[int, ...],
    w: tuple[int, ...],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    expected: tuple[int, ...],
):
    assert conv(x, w, strides=strides, pads=pads) == expected


@pytest.mark.parametrize("stride", [(1, 1), (2, 3)])
@pytest.mark.parametrize("dilation", [(1, 1), (2, 1)])
@pytest.mark.parametrize("pads", [(0, 0, 0, 0), (1, 0, 2, 1)])
def test_conv2d_counts_positions(
    stride: tuple[int, int], dilation: tuple[int, int], pads: tuple[int, int, int, int]
):
    top, left, bottom, right = pads
    oh = count_windows(9, 3, stride[0], dilation[0], top, bottom)
    ow = count_windows(7, 2, stride[1], dilation[1], left, right)
    result = conv((2, 4, 9, 7), (6, 4, 3, 2), (6,), stride, dilation, pads)
    assert result == (2, 6, oh, ow)


def test_conv2d_groups():
    assert conv((1, 8, 5, 5), (4, 2, 3, 3), groups=4) == (1, 4, 3, 3)
    assert conv((1, 8, 5, 5), (8, 1, 3, 3), groups=8) == (1, 8, 3, 3)  # depthwise


def test_conv2d_dynamic():
    assert conv((D, 3, D, 8), (16, 3, 3, 3)) == (D, 16, D, 6)
    assert conv((1, D, 8, 8), (D, 3, 3, D), (16,)) == (1, D, 6, D)


@pytest.mark.parametrize(
    ("x", "w", "bias", "groups", "fragment"),
    [
        (
            (1, 3, 8),
            (16, 3, 3, 3),
            None,
            1,
            "expects a rank-4 input (NCHW) and rank-4 weights (OIHW), got ranks 3 and 4",
        ),
        ((1, 3, 8, 8), (16, 3, 3, 3), None, 0, "groups (0) must be positive"),
        (
            (1, 4, 8, 8),
            (6, 1, 3, 3),
            None,
            4,
            "output channels (6) are not divisible by groups (4)",
        ),
        (
            (1, 3, 8, 8),
            (16, 4, 3, 3),
            None,
            1,
            "input channels (3) do not match weight input channels (4) times groups (1)",
        ),
        ((1, 3, 8, 8), (16, 3, 3, 3), (16, 1), 1, "expects a rank-1 bias, got rank 2"),
        (
            (1, 3, 8, 8),
            (16, 3, 3, 3),
            (8,),
            1,
            "bias size (8) does not match the output channels (16)",
        ),
        (
            (1, 3, 2, 8),
            (16, 3, 3, 3),
            None,
            1,
            "window of size 3 (dilation 1) does not fit an input dimension of 2",
        ),
    ],
)
def test_conv2d_errors(
    x: tuple[int, ...],
    w: tuple[int, ...],
    bias: tuple[int, ...] | None,
    groups: int,
    fragment: str,
):
    with raises_shape_error(fragment):
        conv(x, w, bias, groups=groups)


def test_conv2d_checks_window_attrs():
    with raises_shape_error("strides [0, 1] must be positive"):
        conv((1, 3, 8, 8), (16, 3, 3, 3), strides=(0, 1))


def pool(
    x: tuple[int, ...],
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    pads: tuple[int, ...],
    dilations: tuple[int, ...] | None = None,
) -> shapes.Shape:
    return shapes.pool(len(kernel), x, kernel, strides, dilations or (1,) * len(kernel), pads)


@pytest.mark.parametrize(
    ("x", "kernel", "strides", "pads", "expected"),
    [
        # onnx MaxPool / AveragePool documented examples
        ((1, 3, 32, 32), (2, 2), (1, 1), (0, 0, 0, 0), (1, 3, 31, 31)),  # 2d_default
        ((1, 3, 28, 28), (3, 3), (1, 1), (2, 2, 2, 2), (1, 3, 30, 30)),  # 2d_pads
        ((1, 3, 32, 32), (5, 5), (3, 3), (0, 0, 0, 0), (1, 3, 10, 10)),  # 2d_strides
        ((1, 1, 5, 5), (5, 5), (1, 1), (2, 2, 2, 2), (1, 1, 5, 5)),  # precomputed_pads
        ((1, 1, 5, 5), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1, 3, 3)),  # precomputed_strides
        # ResNet's stem max pool: 3x3 stride 2 pad 1
        ((1, 64, 112, 112), (3, 3), (2, 2), (1, 1, 1, 1), (1, 64, 56, 56)),
    ],
)
def test_pool2d_onnx_cases(
    x: tuple[int, ...],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    expected: tuple[int, ...],
):
    assert pool(x, kernel, strides, pads) == expected


POOL_CASES = [
    (kernel, strides, pads)
    for kernel in ((1, 1), (2, 3), (3, 2))
    for strides in ((1, 1), (2, 2), (3, 1))
    for pads in ((0, 0, 0, 0), (1, 0, 0, 1), (1, 2, 1, 2))
    # pool2d requires each pad to be smaller than the kernel
    if max(pads[0], pads[2]) < kernel[0] and max(pads[1], pads[3]) < kernel[1]
]


@pytest.mark.parametrize(("kernel", "strides", "pads"), POOL_CASES)
def test_pool2d_counts_positions(
    kernel: tuple[int, int], strides: tuple[int, int], pads: tuple[int, int, int, int]
):
    top, left, bottom, right = pads
    oh = count_windows(8, kernel[0], strides[0], 1, top, bottom)
    ow = count_windows(5, kernel[1], strides[1], 1, left, right)
    assert pool((2, 3, 8, 5), kernel, strides, pads) == (2, 3, oh, ow)


def test_pool2d_dynamic():
    assert pool((D, D, D, 8), (2, 2), (2, 2), (0, 0, 0, 0)) == (D, D, D, 4)


def test_pool_1d_and_3d():
    assert pool((1, 3, 9), (3,), (2,), (1, 1)) == (1, 3, 5)
    assert pool((1, 3, 8, 8, 8), (2, 2, 2), (2, 2, 2), (0,) * 6) == (1, 3, 4, 4, 4)
    assert pool((1, 3, D, 8, 5), (3, 2, 1), (1, 2, 1), (1, 0, 0, 1, 1, 0)) == (1, 3, D, 4, 5)


def test_pool_dilations():
    # onnx test_maxpool_2d_dilations: 4x4, kernel 2, dilation 2 -> 2x2
    assert pool((1, 1, 4, 4), (2, 2), (1, 1), (0, 0, 0, 0), (2, 2)) == (1, 1, 2, 2)
    oh = count_windows(9, 3, 2, 3, 2, 1)
    assert pool((1, 1, 9, 9), (3, 3), (2, 2), (2, 0, 1, 0), (3, 1))[2] == oh
    # a pad may reach up to the dilated kernel's extent
    with raises_shape_error("must be smaller than the kernel [2, 2] dilated by [2, 1]"):
        pool((1, 1, 8, 8), (2, 2), (1, 1), (0, 0, 3, 0), (2, 1))


def test_conv_1d_and_3d():
    assert shapes.conv(1, (1, 3, 9), (4, 3, 3), None, (2,), (1,), (1, 1), 1) == (1, 4, 5)
    result = shapes.conv(
        3, (2, 4, 5, 6, 7), (8, 2, 3, 3, 3), (8,), (1, 2, 1), (1, 1, 2), (1,) * 6, 2
    )
    assert result == (2, 8, 5, 3, 5)
    with raises_shape_error("expects a rank-5 input (NCDHW) and rank-5 weights (OIDHW)"):
        shapes.conv(3, (1, 3, 8, 8), (4, 3, 3, 3), None, (1,) * 3, (1,) * 3, (0,) * 6, 1)


@pytest.mark.parametrize(
    ("x", "kernel", "strides", "pads", "fragment"),
    [
        ((1, 3, 8, 8), (2,), (1, 1), (0, 0, 0, 0), "expects 2 kernel sizes, got 1"),
        ((1, 3, 8, 8), (2, 0), (1, 1), (0, 0, 0, 0), "kernel [2, 0] must be positive"),
        ((1, 8, 8), (2, 2), (1, 1), (0, 0, 0, 0), "expects a rank-4 input (NCHW), got rank 3"),
        (
            (1, 3, 8, 8),
            (2, 2),
            (1, 1),
            (0, 0, 2, 0),
            "pads [0, 0, 2, 0] must be smaller than the kernel [2, 2]",
        ),
        ((1, 3, 8, 8), (2, 2), (1,), (0, 0, 0, 0), "expects 2 strides, got 1"),
        (
            (1, 3, 1, 8),
            (2, 2),
            (1, 1),
            (0, 0, 0, 0),
            "window of size 2 (dilation 1) does not fit an input dimension of 1",
        ),
    ],
)
def test_pool2d_errors(
    x: tuple[int, ...],
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    pads: tuple[int, ...],
    fragment: str,
):
    with raises_shape_error(fragment):
        shapes.pool(2, x, kernel, strides, (1, 1), pads)


# ---------------------------------------------------------------------------
# Refinement helpers (shape-inference)
# ---------------------------------------------------------------------------


def test_refine_keeps_static_and_fills_dynamic():
    assert shapes.refine((D, 4, D), (3, D, D), (7, D, 5)) == (3, 4, 5)


def test_join_keeps_agreeing_dims():
    assert shapes.join((2, 3, D), (2, 4, D)) == (2, D, D)
    with raises_shape_error("ranks 1 and 2"):
        shapes.join((1,), (1, 2))


def test_dim_unifier_merges_and_refuses_conflicts():
    u = shapes.DimUnifier[str]()
    u.add("a")
    u.add("b", 3)
    u.add("c", 5)
    assert u.unify("a", "b")
    assert u.size("a") == 3
    assert not u.unify("a", "c")
    assert u.size("c") == 5


@hypothesis_settings
@given(st.lists(shape_st, min_size=1, max_size=3))
def test_broadcast_equalities_name_equal_dims(operands: list[tuple[int, ...]]):
    try:
        result = shapes.broadcast(*operands)
    except ShapeError:
        return
    for (p, d), (_, r) in shapes.broadcast_equalities(operands, len(result)):
        assert operands[p][d] == result[r]


def test_matmul_and_gather_equalities():
    assert ((0, 1), (1, 0)) in shapes.matmul_equalities((4, 8), (8, 2))
    eq = shapes.gather_equalities(3, 2, 1)
    assert ((1, 1), (shapes.RESULT, 2)) in eq
    assert ((0, 2), (shapes.RESULT, 3)) in eq


@hypothesis_settings
@given(
    st.lists(st.lists(st.sampled_from([1, 2, 3]), max_size=3), min_size=1, max_size=3),
    st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=3, max_size=3),
)
def test_runtime_broadcast_equalities_hold_for_every_run_time_size(concrete, hidden):
    # Hide some sizes behind `?`: whatever the run-time sizes, the equalities must hold.
    try:
        result = shapes.broadcast(*concrete)
    except ShapeError:
        return
    declared = [
        tuple(D if hide else size for size, hide in zip(shape, hidden[i], strict=False))
        for i, shape in enumerate(concrete)
    ]
    for (p, d), (_, r) in shapes.broadcast_equalities(
        declared, len(result), runtime_broadcast=True
    ):
        assert concrete[p][d] == result[r]


def test_runtime_broadcast_equalities_keep_what_is_certain():
    eq = shapes.broadcast_equalities([(D, 4), (1, 4)], 2, runtime_broadcast=True)
    assert ((0, 0), (shapes.RESULT, 0)) in eq  # the only size in its dim
    eq = shapes.broadcast_equalities([(D, 4), (3, 4)], 2, runtime_broadcast=True)
    assert ((0, 0), (shapes.RESULT, 0)) not in eq  # may be 1
    assert ((1, 0), (shapes.RESULT, 0)) in eq  # a static 3 is the result's


def test_broadcast_to_equalities():
    # Without a shape operand a dynamic result dim follows the operand's.
    assert shapes.broadcast_to_equalities((D, 1), (2, D, 5), False) == [((0, 0), (-1, 1))]
    assert shapes.broadcast_to_equalities((D, 1), (2, D, 5), True) == []
    assert shapes.broadcast_to_equalities((D, 5), (2, 3, 5), False) == [((0, 1), (-1, 2))]

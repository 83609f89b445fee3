"""Tests of `mlc.shapes.broadcasting`: numpy broadcasting, checked against numpy."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlc import shapes
from mlc.shapes import ShapeError
from tests.unit.shapes.shape_cases import (
    D,
    hypothesis_settings,
    np_shape,
    raises_shape_error,
    shape_st,
)


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

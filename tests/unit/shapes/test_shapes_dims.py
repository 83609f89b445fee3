"""Tests of `mlc.shapes.dims`: the dimension vocabulary: `DYNAMIC`, printing, axes, `join_dims`."""

import pytest

from mlc import shapes
from mlc.shapes import DYNAMIC, ShapeError
from tests.unit.shapes.shape_cases import D, raises_shape_error


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

"""Tests of `mlc.shapes.reduction`: reductions and normalisations."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlc import shapes
from tests.unit.shapes.shape_cases import D, hypothesis_settings, raises_shape_error, shape_st


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
    # Zeros, not `np.empty`: a sum of uninitialised memory may overflow, which `-W error` fails.
    expected = np.sum(np.zeros(shape), axis=axes, keepdims=keepdims).shape
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
    expected = np.sum(np.zeros(shape), axis=axes, keepdims=keepdims).shape
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


@pytest.mark.parametrize(
    ("shape", "axis"), [((4, 8), 1), ((2, 3, 5), -1), ((7,), 0), ((2, 3, 5), 0)]
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_arg_reduce_matches_numpy(shape: tuple[int, ...], axis: int, keepdims: bool):
    expected = np.argmax(np.zeros(shape), axis=axis, keepdims=keepdims).shape
    assert shapes.arg_reduce(shape, axis, keepdims) == expected


def test_arg_reduce_dynamic_and_errors():
    assert shapes.arg_reduce((D, 8, D), 2, False) == (D, 8)
    assert shapes.arg_reduce((D, 8), 0, True) == (1, 8)
    with raises_shape_error("expects a non-empty dim 1 to take the index of, got size 0"):
        shapes.arg_reduce((3, 0), -1, False)
    with raises_shape_error("expects an operand of rank >= 1"):
        shapes.arg_reduce((), 0, False)
    with raises_shape_error("axis 2 is out of range for rank 2"):
        shapes.arg_reduce((3, 4), 2, False)


def test_scan():
    assert shapes.scan((D, 0, 3), 1) == (D, 0, 3)
    with raises_shape_error("expects an operand of rank >= 1"):
        shapes.scan((), 0)
    with raises_shape_error("axis -3 is out of range for rank 2"):
        shapes.scan((3, 4), -3)

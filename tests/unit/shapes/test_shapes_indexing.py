"""Shape rules of the indexing ops: top_k, scatter_elements, scatter_nd."""

import pytest

from mlc import shapes
from mlc.shapes import DYNAMIC as D
from mlc.shapes import ShapeError


@pytest.mark.parametrize(
    ("x", "k", "axis", "expected"),
    [
        ((5, 8), 2, -1, (5, 2)),
        ((5, 8), 5, 0, (5, 8)),
        ((D, 3), 7, 0, (7, 3)),
        ((4,), 0, 0, (0,)),
    ],
)
def test_top_k(x, k, axis, expected):
    assert shapes.top_k(x, k, axis) == expected


@pytest.mark.parametrize(
    ("x", "k", "axis", "message"),
    [
        ((5, 3), 4, 1, r"k \(4\) not to exceed dim 1 \(3\)"),
        ((5, 3), -1, 1, "k >= 0"),
        ((), 1, 0, "rank >= 1"),
        ((5, 3), 1, 2, "axis"),
    ],
)
def test_top_k_rejects(x, k, axis, message):
    with pytest.raises(ShapeError, match=message):
        shapes.top_k(x, k, axis)


def test_scatter_elements_is_the_data_shape():
    assert shapes.scatter_elements((3, D), (3, 2), (D, 2), 1) == (3, D)
    with pytest.raises(ShapeError, match=r"updates of shape 3x2 \(the indices'\), got 3x3"):
        shapes.scatter_elements((3, 5), (3, 2), (3, 3), 1)
    with pytest.raises(ShapeError, match="not to exceed"):
        shapes.scatter_elements((3, 5), (4, 2), (4, 2), 1)


def test_scatter_nd_is_the_data_shape():
    assert shapes.scatter_nd((4, 5, 6), (D, 2), (7, 6)) == (4, 5, 6)
    assert shapes.scatter_nd((4, 5), (2, 3, 2), (2, 3)) == (4, 5)
    with pytest.raises(ShapeError, match="updates of shape 3x6, got 3x5"):
        shapes.scatter_nd((4, 5, 6), (3, 2), (3, 5))
    with pytest.raises(ShapeError, match="static"):
        shapes.scatter_nd((4, 5), (3, D), (3,))
    with pytest.raises(ShapeError, match=r"in \[1, 2\], got 3"):
        shapes.scatter_nd((4, 5), (3, 3), (3,))

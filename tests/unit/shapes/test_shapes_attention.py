"""Tests of `mlc.shapes.attention`: q, k, v and mask shapes, grouped heads, the errors."""

import pytest

from mlc import shapes
from mlc.shapes import DYNAMIC as D
from mlc.shapes import Shape


@pytest.mark.parametrize(
    ("q", "k", "v", "mask", "expected"),
    [
        ((2, 8, 16, 64), (2, 2, 32, 64), (2, 2, 32, 32), None, (2, 8, 16, 32)),
        ((D, 8, D, 64), (3, 8, 7, D), (D, 8, D, 16), (1, 1, D), (3, 8, D, 16)),
        ((4, 5, 8), (1, 9, 8), (1, 9, 8), (4, 5, 9), (4, 5, 8)),
        ((4, 5, 8), (4, 9, 8), (4, 9, 8), (), (4, 5, 8)),
    ],
)
def test_attention_shape(q: Shape, k: Shape, v: Shape, mask: Shape | None, expected: Shape) -> None:
    assert shapes.attention(q, k, v, mask) == expected


@pytest.mark.parametrize(
    ("q", "k", "v", "mask", "message"),
    [
        ((4, 8), (4, 8), (4, 8), None, "of one rank >= 3, got ranks 2, 2 and 2"),
        ((6, 4, 8), (4, 4, 8), (4, 4, 8), None, "query heads (6) must be a multiple"),
        ((2, 4, 8), (2, 5, 8), (2, 6, 8), None, "key lengths differ"),
        ((2, 4, 8), (2, 5, 8), (3, 5, 8), None, "key/value heads differ: k is 2, v is 3"),
        ((2, 3, 4, 8), (5, 3, 5, 8), (5, 3, 5, 8), None, "batch dimension 0 differ"),
        ((2, 4, 8), (2, 5, 8), (2, 5, 8), (1, 1, 4, 5), "expects a mask of rank <= 3"),
        ((2, 4, 8), (2, 5, 8), (2, 5, 8), (3, 5), "mask (3x5) does not broadcast"),
    ],
)
def test_attention_shape_errors(
    q: Shape, k: Shape, v: Shape, mask: Shape | None, message: str
) -> None:
    with pytest.raises(shapes.ShapeError) as info:
        shapes.attention(q, k, v, mask)
    assert message in str(info.value)

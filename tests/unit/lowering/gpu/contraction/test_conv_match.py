"""The pure parts of the GPU's convolution matching: image index terms and tile choice."""

import pytest
from xdsl.ir.affine import AffineExpr

from mlc.lowering.gpu.contraction.conv_match import linear_terms
from mlc.lowering.gpu.convert_contractions_to_gpu import (
    BIG_TILE,
    CONV_TILES,
    HALF_CONV_SMALL_TILE,
    HALF_CONV_TILE,
    HALF_SMALL_TILE,
    HALF_TILE,
    SMALL_TILE,
    ContractionToTiledLaunch,
)

d = [AffineExpr.dimension(i) for i in range(7)]


@pytest.mark.parametrize(
    "expr, terms",
    [
        (d[2] + d[4], {2: 1, 4: 1}),
        (d[2] * 2 + d[4] * 3, {2: 2, 4: 3}),
        (d[6], {6: 1}),
    ],
)
def test_linear_terms_of_strided_windows(expr, terms):
    assert linear_terms(expr) == terms


@pytest.mark.parametrize(
    "expr",
    [d[2] + d[2], d[2] % 3, d[2] + 1, d[2] // 2, d[2] * 0 + d[4], d[2] * -1 + d[4]],
)
def test_linear_terms_decline_other_forms(expr):
    assert linear_terms(expr) is None


def test_conv_tiles_are_buildable_and_follow_the_filters():
    for _, shapes in CONV_TILES:
        for shape in shapes:
            assert shape.problem() is None, shape
    pattern = ContractionToTiledLaunch(BIG_TILE, SMALL_TILE, 264, 1)
    assert [pattern.conv_shapes(f)[0].rows for f in (3, 16, 17, 32, 33, 64)] == [
        16, 16, 32, 32, 64, 64,
    ]  # fmt: skip
    assert pattern.conv_shapes(65) == (BIG_TILE, SMALL_TILE)
    assert pattern.conv_shapes(-1) == (BIG_TILE, SMALL_TILE)  # dynamic: the matmul's


def test_half_conv_tiles_are_buildable_and_follow_the_filters():
    """16-bit convolutions: 64-row tiles up to 64 filters, the matmul's 128x128 beyond
    (and when the filters are dynamic); small grids take a 16-deep tile when the image
    is gathered, the 16-bit matmul's when it is copied (a 1x1 convolution)."""
    for shape in (HALF_CONV_TILE, HALF_CONV_SMALL_TILE):
        assert shape.problem() is None and shape.half, shape
    pattern = ContractionToTiledLaunch(BIG_TILE, SMALL_TILE, 264, 1)
    for filters in (3, 33, 64):
        assert pattern.conv_shapes(filters, True) == (HALF_CONV_TILE, HALF_CONV_SMALL_TILE)
        assert pattern.conv_shapes(filters, True, False) == (HALF_CONV_TILE, HALF_SMALL_TILE)
    for filters in (65, 2048, -1):
        assert pattern.conv_shapes(filters, True) == (HALF_TILE, HALF_CONV_SMALL_TILE)
        assert pattern.conv_shapes(filters, True, False) == (HALF_TILE, HALF_SMALL_TILE)

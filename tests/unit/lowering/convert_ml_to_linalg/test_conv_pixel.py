"""`conv_pixel.pixel_weight` against a convolution of one output pixel written out in
numpy: random images, weights, pads and dilations, and the windows it refuses."""

import numpy as np
import pytest

from mlc.lowering.convert_ml_to_linalg.conv_pixel import pixel_weight


def one_pixel_conv(x, w, pads, dilations):
    """y[n, o] of a convolution whose window's one position starts at -pads."""
    n, _, *image = x.shape
    y = np.zeros((n, w.shape[0]))
    for taps in np.ndindex(*w.shape[2:]):
        at = [t * d - p for t, d, p in zip(taps, dilations, pads, strict=True)]
        if all(0 <= a < s for a, s in zip(at, image, strict=True)):
            y += x[(slice(None), slice(None), *at)] @ w[(slice(None), slice(None), *taps)].T
    return y


# (in channels, image, out channels, kernel, pads before, dilations)
CASES = [
    (5, (1, 1), 7, (1, 1), (0, 0), (1, 1)),
    (3, (1, 1), 4, (3, 3), (1, 1), (1, 1)),
    (4, (2, 2), 6, (3, 3), (1, 1), (1, 1)),
    (2, (3, 2), 3, (3, 3), (1, 0), (1, 1)),
    (3, (1, 1), 2, (3, 3), (2, 2), (2, 2)),  # dilated: the centre tap
    (3, (1, 3), 2, (1, 3), (0, 0), (1, 2)),  # taps 2 apart: pixel 1 a zero row
    (2, (3,), 5, (3,), (0,), (1,)),
]


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_pixel_weight_is_the_convolution(case):
    c, image, o, kernel, pads, dilations = case
    rng = np.random.default_rng(len(image) * 10 + c)
    x = rng.standard_normal((4, c, *image))
    w = rng.standard_normal((o, c, *kernel))
    weight = pixel_weight(w, image, pads, dilations)
    assert weight is not None and weight.shape == (c * int(np.prod(image)), o)
    np.testing.assert_allclose(x.reshape(4, -1) @ weight, one_pixel_conv(x, w, pads, dilations))


def test_pixel_weight_refuses_a_window_that_reads_under_half_the_image():
    w = np.ones((2, 1, 2, 2))
    assert pixel_weight(w, (3, 3), (0, 0), (1, 1)) is None  # 4 of 9 pixels
    assert pixel_weight(w, (2, 3), (0, 0), (1, 1)) is not None  # 4 of 6

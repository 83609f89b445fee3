"""`conv_pixel.pixel_weight` against a convolution of one output pixel, and of a few,
written out in numpy: random images, weights, pads, strides and dilations, and the
windows it refuses."""

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


def few_pixel_conv(x, w, pads, dilations, output):
    """y[n, o, p...] of a convolution of `output` = (sizes, strides), flattened (n, o * P)."""
    sizes, strides = output
    columns = []
    for pixel in np.ndindex(*sizes):
        shifted = [p - q * s for p, q, s in zip(pads, pixel, strides, strict=True)]
        columns.append(one_pixel_conv(x, w, shifted, dilations))
    return np.stack(columns, axis=-1).reshape(x.shape[0], -1)


# (in channels, image, out channels, kernel, pads before, dilations, output sizes, strides)
FEW = [
    (4, (2, 2), 6, (3, 3), (1, 1), (1, 1), (2, 2), (1, 1)),  # ResNet's layer3 conv2
    (3, (3, 2), 5, (3, 3), (1, 1), (1, 1), (2, 1), (2, 2)),
    (2, (3,), 3, (3,), (2,), (2,), (3,), (1,)),  # dilated: 5 of 9 taps read
    (5, (3,), 2, (3,), (1,), (1,), (3,), (1,)),
]


@pytest.mark.parametrize("case", FEW, ids=[f"case{i}" for i in range(len(FEW))])
def test_pixel_weight_of_few_pixels_is_the_convolution(case):
    c, image, o, kernel, pads, dilations, sizes, strides = case
    rng = np.random.default_rng(len(image) * 10 + c)
    x = rng.standard_normal((3, c, *image))
    w = rng.standard_normal((o, c, *kernel))
    weight = pixel_weight(w, image, pads, dilations, (sizes, strides))
    assert weight is not None
    assert weight.shape == (c * int(np.prod(image)), o * int(np.prod(sizes)))
    want = few_pixel_conv(x, w, pads, dilations, (sizes, strides))
    np.testing.assert_allclose(x.reshape(3, -1) @ weight, want)


def test_pixel_weight_refuses_outputs_whose_windows_read_under_half():
    w = np.ones((2, 1, 3, 3))
    # a 4x4 output of a 4x4 image: 4 to 9 of 16 pixels, 39%
    assert pixel_weight(w, (4, 4), (1, 1), (1, 1), ((4, 4), (1, 1))) is None
    # stride 2 to 2x2: 4, 6, 6 and 9 of 16
    assert pixel_weight(w, (4, 4), (1, 1), (1, 1), ((2, 2), (2, 2))) is None
    assert pixel_weight(w, (2, 2), (1, 1), (1, 1), ((2, 2), (1, 1))) is not None


def test_pixel_weight_refuses_a_stem_before_building_anything():
    """ResNet-50's stem (7x7 taps, 224x224 image, 112x112 outputs): W' would be 12544
    columns of 150528 rows; the refusal comes from the sizes alone, at once."""
    import time

    weight = np.ones((64, 3, 7, 7), np.float32)
    start = time.perf_counter()
    assert pixel_weight(weight, (224, 224), (3, 3), (1, 1), ((112, 112), (2, 2))) is None
    assert time.perf_counter() - start < 0.05


def test_pixel_weight_refuses_outputs_that_would_grow_the_weights_past_the_cap():
    """A 7x7 window over a 9x9 image with 9x9 outputs reads about half the image per
    pixel, but W' would be 81 x 81 / 49 = 134 times the weights."""
    weight = np.ones((4, 2, 7, 7), np.float32)
    assert pixel_weight(weight, (9, 9), (3, 3), (1, 1), ((9, 9), (1, 1))) is None
    assert pixel_weight(weight, (7, 7), (0, 0), (1, 1)) is not None  # one pixel: 1x

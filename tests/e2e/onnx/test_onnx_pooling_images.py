"""
Stride-2 max and average pooling of small images (`mlc.lowering.cpu.pooling_images`:
each image row loaded once, the rows of a window combined before its columns) against
onnxruntime: padded and not, windows of 2 and 3, images whose rows fill the vector,
leave lanes over, or reach past the rows' loads (the tap-by-tap sweep), on the CPU and
`cuda`.
"""

import numpy as np
import pytest

from tests.e2e.onnx.test_onnx_pooling import check

SHAPES = [(8, 64, 16, 16), (2, 3, 8, 8), (3, 2, 7, 7), (2, 2, 8, 6), (1, 4, 4, 4), (2, 2, 5, 9)]


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"kernel_shape": [3, 3], "strides": [2, 2]},
        {"kernel_shape": [2, 2], "strides": [2, 2]},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 1, 1, 0]},
        {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1},
    ],
    ids=["3x3p1", "3x3", "2x2", "3x3-uneven-pads", "3x2-ceil"],
)
def test_stride2_pooling_of_small_images(op, attrs, target):
    if op == "AveragePool":
        attrs = {**attrs, "count_include_pad": 0}
    for shape in SHAPES:
        check(op, attrs, [shape], target)


def test_float64_pooling(target):
    """Half as many lanes a vector: other blocks, the same rows."""
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    check("MaxPool", attrs, [(2, 3, 16, 16), (1, 2, 8, 8)], target, dtype=np.float64)

"""
Padded convolutions whose B panels are packed from the image before its padding,
zeros written for the taps outside it (`mlc.lowering.cpu.conv_padded_packing`),
against numpy on random inputs: pads 0 to 3, asymmetric, strides 1 and 2, dilation,
groups, batch 1, 3 and 8, f32 and f64, images smaller than their padding; the padded
copy (its `memref.subview`) is gone exactly where the packing stands in for it.
"""

import numpy as np
import pytest

from mlc import pipeline
from mlc.dialects import ml
from mlc.tiling_model import matmul_tiles
from tests.e2e.programs import program, tensor
from tests.e2e.test_ml_ops_cpu import conv2d_reference
from tests.gpu.targets import compile_once

# (image, weight, strides, dilations, pads (top, left, bottom, right), groups, dtype)
CASES = [
    ((1, 3, 13, 11), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1, "float32"),
    ((3, 4, 9, 17), (6, 4, 3, 3), (1, 1), (1, 1), (0, 1, 2, 3), 1, "float32"),  # asymmetric
    ((8, 3, 20, 20), (8, 3, 7, 7), (2, 2), (1, 1), (3, 3, 3, 3), 1, "float32"),  # a stem
    ((2, 5, 15, 14), (7, 5, 3, 3), (2, 2), (1, 1), (1, 0, 1, 1), 1, "float32"),  # odd rows
    ((2, 6, 12, 19), (6, 3, 3, 3), (1, 1), (2, 2), (2, 2, 2, 2), 2, "float32"),  # dilated
    ((1, 4, 30, 37), (5, 4, 3, 3), (1, 2), (1, 1), (1, 1, 1, 1), 1, "float32"),  # long rows
    ((3, 4, 1, 1), (5, 4, 3, 3), (1, 1), (1, 1), (3, 3, 3, 3), 1, "float32"),  # pad > image
    ((1, 2, 2, 3), (3, 2, 7, 7), (2, 2), (1, 1), (3, 3, 3, 3), 1, "float32"),  # pad > image
    ((3, 5, 11, 9), (7, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1, "float64"),
    ((8, 3, 16, 15), (7, 3, 3, 3), (2, 2), (1, 1), (1, 1, 1, 2), 1, "float64"),
    ((2, 4, 6, 10), (4, 2, 3, 3), (1, 1), (1, 1), (0, 3, 1, 0), 2, "float64"),
    # kept padded: no padding, stride 3, rows that divide the vector (whole-row gathers)
    ((2, 3, 9, 13), (4, 3, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1, "float32"),
    ((1, 2, 10, 10), (3, 2, 3, 3), (3, 3), (1, 1), (1, 1, 1, 1), 1, "float32"),
    ((3, 5, 10, 8), (7, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1, "float32"),
]


def _absorbed(case) -> bool:
    """Whether `case`'s padding is packed by the kernel instead of copied."""
    x, w, (_, stride), (_, dilation), pads, _, dtype = case
    width = (x[3] + pads[1] + pads[3] - dilation * (w[3] - 1) - 1) // stride + 1
    vector = matmul_tiles(np.dtype(dtype).itemsize).vector
    whole_rows = stride == 1 and 2 <= width < vector and vector % width == 0
    return any(pads) and stride in (1, 2) and not whole_rows


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_padded_conv_matches_numpy(case):
    x_shape, w_shape, strides, dilations, pads, groups, dtype = case
    attrs = dict(strides=strides, dilations=dilations, pads=pads, groups=groups)
    rng = np.random.default_rng(sum(x_shape) * 37 + sum(w_shape))
    x = rng.uniform(-1, 1, x_shape).astype(dtype)
    w = rng.uniform(-1, 1, w_shape).astype(dtype)
    bias = rng.uniform(-1, 1, w_shape[0]).astype(dtype)
    want = np.maximum(conv2d_reference(x, w, bias, **attrs), 0)
    types = [tensor(a.shape, dtype) for a in (x, w, bias)]

    def build(x, w, b):
        conv = ml.Conv2dOp(x, w, b, **attrs)
        return [conv, ml.ReluOp(conv)]

    module = program(types, build)
    lowered = pipeline.lower(module.clone(), emit="loops")
    copied = any(op.name == "memref.subview" for op in lowered.walk())
    assert copied == (any(pads) and not _absorbed(case))
    got = compile_once(str(module), "cpu")(x, w, bias)
    tolerance = 1e-4 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.sqrt(w[0].size))

"""
Convolutions whose output rows are narrower than a vector, packed by whole rows
(`mlc.lowering.cpu.conv_packing._row_segments`), against numpy on random inputs: rows
of 2, 4 and 8 columns, odd channel counts, batch 1, 3 and 8, padding, dilation, groups,
f32 and f64, with a bias and a relu in the epilogue, panels below N and past it (rows
past N kept zero); the shapes that must keep the masked row pieces (stride 2 rows
narrower than a vector, rows that do not divide it); and stride-2 rows of whole
vectors, each the even lanes of two loads (`_whole_vectors`).
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
    ((8, 13, 8, 8), (8, 13, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1, "float32"),  # rows of 8
    ((3, 5, 10, 8), (7, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1, "float32"),  # N = 80
    ((1, 7, 9, 6), (5, 7, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1, "float32"),  # rows of 4
    ((3, 3, 17, 4), (9, 3, 3, 3), (1, 1), (1, 1), (1, 0, 1, 0), 1, "float32"),  # rows of 2
    ((2, 6, 12, 12), (6, 3, 3, 3), (1, 1), (2, 2), (2, 0, 2, 0), 2, "float32"),  # dilated
    ((8, 9, 8, 8), (5, 9, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1, "float64"),
    ((3, 5, 9, 6), (11, 5, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1, "float64"),  # rows of 4
    # stride 2 and rows of 7: masked row pieces; then panels past N (8 columns)
    ((3, 5, 16, 16), (7, 5, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1, "float32"),
    ((2, 5, 7, 7), (6, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1, "float32"),
    ((1, 4, 3, 8), (5, 4, 3, 3), (1, 1), (1, 1), (0, 1, 0, 1), 1, "float32"),
    # stride 2, rows of 20 and (f64) of 8: whole vectors, each the even lanes of two
    ((3, 3, 40, 40), (5, 3, 7, 7), (2, 2), (1, 1), (3, 3, 3, 3), 1, "float32"),
    ((8, 3, 16, 15), (7, 3, 3, 3), (2, 2), (1, 1), (1, 1, 1, 2), 1, "float64"),
]


def _output_width(case) -> int:
    x, w, (_, stride), (_, dilation), (_, left, _, right), _, _ = case
    return (x[3] + left + right - dilation * (w[3] - 1) - 1) // stride + 1


def _gathers_rows(case) -> bool:
    """Whether this host's kernel for `case` packs by whole rows."""
    _, _, (_, stride), _, _, _, dtype = case
    vector = matmul_tiles(np.dtype(dtype).itemsize).vector
    width = _output_width(case)
    return stride == 1 and 2 <= width < vector and vector % width == 0


def _side_by_side(op) -> bool:
    if op.name != "vector.shuffle":
        return False
    return op.operands[0].type.get_shape()[0] < op.results[0].type.get_shape()[0]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_narrow_rows_match_numpy(case):
    x_shape, w_shape, strides, dilations, pads, groups, dtype = case
    attrs = dict(strides=strides, dilations=dilations, pads=pads, groups=groups)
    rng = np.random.default_rng(sum(x_shape) * 31 + sum(w_shape))
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
    assert any(_side_by_side(op) for op in lowered.walk()) == _gathers_rows(case)
    got = compile_once(str(module), "cpu")(x, w, bias)
    tolerance = 1e-4 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.sqrt(w[0].size))

"""
Convolutions whose tasks pack the B panels they read (`mlc.lowering.cpu.conv_tasks`)
against numpy on random inputs: the batch dynamic (1, 3 and 8 images: per-thread panel
groups where it does not split evenly among the threads, whole images where it does),
the batch static, strided, padded, grouped, with bias and ReLU; and more output
channels than a block of A, whose panels are still packed up front.
"""

import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

from mlc.dialects import ml
from tests.e2e.programs import ELEMENT_TYPES, program, tensor
from tests.e2e.test_ml_ops_cpu import conv2d_reference
from tests.gpu.targets import compile_once

# (image (C, H, W), weight, stride, pad, groups, dtype): ResNet's and DenseNet's layers
# at small sizes, and M = 1400 output channels (more than MC rows)
CASES = [
    ((3, 32, 32), (64, 3, 7, 7), 2, 3, 1, "float32"),  # a stem: panel groups at batch 1
    ((32, 8, 8), (8, 32, 3, 3), 1, 1, 1, "float32"),  # rows of 8: whole-row gathers
    ((16, 9, 11), (12, 16, 3, 3), 1, 1, 1, "float32"),  # rows of 11, past N
    ((8, 15, 14), (16, 4, 3, 3), 2, 1, 2, "float32"),  # grouped, stride 2
    ((6, 10, 10), (9, 6, 3, 3), 3, 0, 1, "float64"),  # stride 3: element by element
    ((8, 4, 4), (1400, 8, 1, 1), 1, 0, 1, "float32"),  # M > MC: up-front packing
]


def _batch_dynamic(shape: tuple[int, ...], dtype: str) -> TensorType:
    return TensorType(ELEMENT_TYPES[np.dtype(dtype).name], [DYNAMIC_INDEX, *shape])


def _compiled(case, dynamic: bool, batch: int):
    image, w_shape, stride, pad, groups, dtype = case
    attrs = dict(strides=(stride,) * 2, pads=(pad,) * 4, groups=groups)
    x_type = _batch_dynamic(image, dtype) if dynamic else tensor((batch, *image), dtype)
    types = [x_type, tensor(w_shape, dtype), tensor(w_shape[:1], dtype)]

    def build(x, w, b):
        conv = ml.Conv2dOp(x, w, b, **attrs)
        return [conv, ml.ReluOp(conv)]

    return compile_once(str(program(types, build)), "cpu"), attrs


@pytest.mark.parametrize("dynamic", [True, False], ids=["dynamic", "static"])
@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_conv_tasks_match_numpy(case, dynamic):
    image, w_shape, _, _, _, dtype = case
    for batch in (1, 3, 8):
        run, attrs = _compiled(case, dynamic, batch)
        rng = np.random.default_rng(batch * 101 + sum(w_shape))
        x = rng.uniform(-1, 1, (batch, *image)).astype(dtype)
        w = rng.uniform(-1, 1, w_shape).astype(dtype)
        bias = rng.uniform(-1, 1, w_shape[0]).astype(dtype)
        want = np.maximum(conv2d_reference(x, w, bias, dilations=(1, 1), **attrs), 0)
        got = run(x, w, bias)
        tolerance = 1e-4 if dtype == "float32" else 1e-11
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * np.sqrt(w[0].size))

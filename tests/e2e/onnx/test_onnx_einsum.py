"""
ONNX Einsum (mlc/frontends/onnx/ops/einsum.py) against onnxruntime, on the CPU and
`cuda`: the contractions real models use, ellipses, implicit outputs, traces.
"""

import numpy as np
import pytest

from tests.e2e.onnx.single_node import check

rng = np.random.default_rng()

CASES = [
    ("bhid,bhjd->bhij", [(2, 3, 5, 4), (2, 3, 6, 4)], ("x0", "x1"), np.float32),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)], (), np.float64),
    ("bhqk,bhkd->bqhd", [(2, 3, 4, 5), (2, 3, 5, 6)], (), np.float32),
    ("bnd,de->bne", [(2, 7, 4), (4, 3)], ("x0",), np.float32),
    ("...ij,jk->...ik", [(2, 3, 4, 5), (5, 6)], (), np.float32),
    ("ij,jk", [(4, 5), (5, 3)], (), np.int64),
    ("i,j->ij", [(4,), (3,)], (), np.float32),
    ("ij,ij->i", [(3, 4), (3, 4)], (), np.float32),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)], (), np.float32),
    ("ii->i", [(4, 4)], (), np.float32),
    ("ii", [(5, 5)], (), np.float32),
    ("ijk->ki", [(3, 4, 2)], ("x0",), np.float32),
]


@pytest.mark.parametrize(
    ("equation", "shapes", "dynamic", "dtype"), CASES, ids=[c[0] for c in CASES]
)
def test_einsum(target, equation, shapes, dynamic, dtype):
    inputs = [(f"x{i}", rng.standard_normal(s).astype(dtype)) for i, s in enumerate(shapes)]
    if dtype == np.int64:
        inputs = [(name, rng.integers(-5, 5, a.shape)) for name, a in inputs]
    attrs = {"equation": equation}
    check("Einsum", inputs, attrs, opset=12, target=target, dynamic=dynamic, rtol=1e-4, atol=1e-5)

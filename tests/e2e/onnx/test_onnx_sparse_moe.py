"""
The sparse mixture-of-experts layer of `examples/sparse_moe.py` (TopK routing, NonZero
per expert, Gather of its tokens, the expert MLP, a scatter-add back) as torch's two
exporters write it, against onnxruntime and numpy: token counts per expert known only at
run time, an expert with no token, dynamic batch and sequence, odd sizes and k = 3.

`make test` compiles the dynamo graph for the CPU (a model's compile, seconds);
`MLC_ZOO=all` (`make zoo`, `make test-full`) adds the TorchScript graph and the odd
sizes, as it adds the zoo's other models. The cuda twins run on a GPU machine.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).parents[3] / "examples"))
import sparse_moe  # noqa: E402

# (batch, sequence): one token leaves most experts without any.
SHAPES = [(2, 7), (1, 1), (3, 5)]


def check(model, exe, w, k, dim):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for batch, sequence in SHAPES:
        x = rng.standard_normal((batch, sequence, dim)).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        got = exe(x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got, sparse_moe.reference(x, w, k), rtol=1e-4, atol=1e-5)


ALL = os.environ.get("MLC_ZOO") == "all"
SLOW = pytest.mark.skipif(not ALL, reason="a second model's compile: MLC_ZOO=all")


@pytest.mark.parametrize(
    ("exporter", "target"),
    [
        ("dynamo", "cpu"),
        pytest.param("torchscript", "cpu", marks=SLOW),
        pytest.param("dynamo", "cuda", marks=pytest.mark.gpu),
        pytest.param("torchscript", "cuda", marks=pytest.mark.gpu),
    ],
)
def test_sparse_moe_matches_onnxruntime(exporter, target):
    w = sparse_moe.random_weights(16, 32, 4, seed=1)
    model = sparse_moe.sparse_moe(exporter, w)
    check(model, compile_for(model, target), w, 2, 16)


@SLOW
def test_sparse_moe_odd_sizes_top_3():
    w = sparse_moe.random_weights(9, 13, 5, seed=2)
    model = sparse_moe.sparse_moe("dynamo", w, k=3)
    check(model, compile_for(model, "cpu"), w, 3, 9)

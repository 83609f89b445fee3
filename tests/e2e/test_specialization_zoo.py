"""
`mlc.compile(..., specialize=...)` on a zoo model whose batch and sequence dims are
dynamic (tests/zoo/rnn-torchscript): each static build agrees with the dynamic build
and with onnxruntime, at batch 1, 3 and 8 and at another sequence length; on `cuda`
too (without a GPU: the static build's PTX is assembled, then the test skips).
"""

from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc.compiler.source import Source
from mlc.compiler.specialization import static_source
from tests.gpu.targets import compile_for, gpu_unavailable_reason

MODEL = Path(__file__).parents[1] / "zoo" / "rnn-torchscript.onnx"


def features(batch: int, sequence: int) -> np.ndarray:
    rng = np.random.default_rng(batch * 100 + sequence)
    return rng.standard_normal((batch, sequence, 16), dtype=np.float32)


def test_static_builds_agree_with_the_dynamic_build_and_onnxruntime():
    onnxruntime = pytest.importorskip("onnxruntime")
    session = onnxruntime.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
    exe = mlc.compile(str(MODEL), specialize=3)
    shapes = [(1, 5), (3, 5), (8, 5), (3, 9)]  # the last: a dim other than the batch
    for batch, sequence in shapes:
        x = features(batch, sequence)
        got = exe(x)
        np.testing.assert_allclose(got, exe.entry.dynamic(x), rtol=1e-5, atol=1e-6)
        (expected,) = session.run(None, {"x": x})
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
        assert got.shape == (batch, sequence, 10)
    assert exe.entry.cache_info() == (4, 0, 3)  # four static builds, the first one dropped


@pytest.mark.gpu
def test_static_builds_on_cuda():
    x = features(3, 5)
    if gpu_unavailable_reason() is not None:
        fixed = static_source(Source.of(str(MODEL)), "main", [x])
        assert fixed is not None
        compile_for(fixed.value, "cuda")  # assembles the static build's PTX, then skips
    from pycuda import gpuarray  # pyright: ignore[reportMissingImports]

    exe = mlc.compile(str(MODEL), target="cuda", specialize=2)
    on_device = gpuarray.to_gpu(x)
    got = exe(on_device)
    np.testing.assert_allclose(got.get(), exe.entry.dynamic(on_device).get(), rtol=1e-5, atol=1e-6)
    again = exe(gpuarray.to_gpu(x))
    np.testing.assert_allclose(again.get(), got.get(), rtol=0, atol=0)
    assert exe.entry.cache_info() == (2, 0, 1)

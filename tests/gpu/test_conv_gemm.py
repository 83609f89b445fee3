"""
Convolutions as implicit GEMMs through the tiled contraction kernel
(`convert-contractions-to-gpu`, `mlc.lowering.gpu.contraction.conv_match`) on the GPU: odd channel
counts and image sizes, strides, dilations, padding read as a predicate, 1x1 and 7x7
windows, each filter-count tile, fused epilogues, against numpy in float64 on fresh
random inputs; the ResNet-style CNN against onnxruntime. The batch is dynamic, so every
convolution here takes the tiled kernel. Without a GPU each program's PTX is assembled
with ptxas (where it is installed) and the numerics skip with the reason.
"""

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc.backend.ptx import to_ptx
from tests.gpu.targets import assemble, compile_for, compile_once, gpu_unavailable_reason

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import onnx_models

pytestmark = pytest.mark.gpu


def _conv_program(c: int, f: int, kernel: int, strides: int, pads: int, dilation: int = 1) -> str:
    """conv2d + bias + relu on an NCHW image of dynamic batch and size."""
    return f"""
func.func @main(%x: tensor<?x{c}x?x?xf32>, %w: tensor<{f}x{c}x{kernel}x{kernel}xf32>,
                %b: tensor<{f}xf32>) -> tensor<?x{f}x?x?xf32> {{
  %y = ml.conv2d %x, %w, %b {{strides = array<i64: {strides}, {strides}>,
      dilations = array<i64: {dilation}, {dilation}>,
      pads = array<i64: {pads}, {pads}, {pads}, {pads}>}}
      : (tensor<?x{c}x?x?xf32>, tensor<{f}x{c}x{kernel}x{kernel}xf32>, tensor<{f}xf32>)
      -> tensor<?x{f}x?x?xf32>
  %r = ml.relu %y : (tensor<?x{f}x?x?xf32>) -> tensor<?x{f}x?x?xf32>
  func.return %r : tensor<?x{f}x?x?xf32>
}}
"""


def conv2d(x, w, strides=1, pads=0, dilation=1):
    """NCHW convolution in float64 (no groups): the reference."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads, pads), (pads, pads)))
    n, _c, height, width = x.shape
    f, _, kh, kw = w.shape
    oh = (height - dilation * (kh - 1) - 1) // strides + 1
    ow = (width - dilation * (kw - 1) - 1) // strides + 1
    y = np.zeros((n, f, oh, ow))
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dilation, i * dilation + strides * (oh - 1) + 1, strides)
            cols = slice(j * dilation, j * dilation + strides * (ow - 1) + 1, strides)
            y += np.einsum("nchw,fc->nfhw", x[:, :, rows, cols], w[:, :, i, j])
    return y


def _random(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _close(got, want, k):
    scale = np.sqrt(max(k, 1)) * 1e-5
    np.testing.assert_allclose(
        got, want, rtol=1e-4, atol=scale * max(1.0, np.abs(want).max(initial=0.0))
    )


# (channels, filters, kernel, strides, pads, dilation): each filter-count tile (16, 32,
# 64 rows, 128), 3x3 stride 1 and 2, 1x1, a 7x7 first convolution on 3 channels, dilation.
CASES = [
    (5, 7, 3, 1, 1, 1),
    (3, 33, 3, 2, 1, 1),
    (19, 70, 1, 1, 0, 1),
    (3, 16, 7, 2, 3, 1),
    (6, 20, 3, 1, 2, 2),
]


@pytest.mark.parametrize("c, f, kernel, strides, pads, dilation", CASES)
@pytest.mark.parametrize("batch, height, width", [(1, 5, 7), (3, 9, 14)])
def test_conv_bias_relu(c, f, kernel, strides, pads, dilation, batch, height, width):
    exe = compile_once(_conv_program(c, f, kernel, strides, pads, dilation))
    rng = np.random.default_rng()
    x, w, b = (
        _random(rng, batch, c, height, width),
        _random(rng, f, c, kernel, kernel),
        _random(rng, f),
    )
    want = np.maximum(conv2d(x, w, strides, pads, dilation) + b[:, None, None], 0.0)
    _close(exe(x, w, b), want, c * kernel * kernel)


# A residual block's second half: conv, batch norm, residual add, relu in one kernel.
RESIDUAL = """
func.func @main(%x: tensor<?x9x?x?xf32>, %w: tensor<9x9x3x3xf32>, %s: tensor<9xf32>,
                %t: tensor<9xf32>, %m: tensor<9xf32>, %v: tensor<9xf32>) -> tensor<?x9x?x?xf32> {
  %y = ml.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<?x9x?x?xf32>, tensor<9x9x3x3xf32>) -> tensor<?x9x?x?xf32>
  %n = ml.batch_norm %y, %s, %t, %m, %v {epsilon = 1.0e-05 : f32}
      : (tensor<?x9x?x?xf32>, tensor<9xf32>, tensor<9xf32>, tensor<9xf32>, tensor<9xf32>)
      -> tensor<?x9x?x?xf32>
  %a = ml.add %n, %x : (tensor<?x9x?x?xf32>, tensor<?x9x?x?xf32>) -> tensor<?x9x?x?xf32>
  %r = ml.relu %a : (tensor<?x9x?x?xf32>) -> tensor<?x9x?x?xf32>
  func.return %r : tensor<?x9x?x?xf32>
}
"""


@pytest.mark.parametrize("batch, height, width", [(1, 5, 7), (3, 11, 6)])
def test_batch_norm_residual_relu_epilogue(batch, height, width):
    exe = compile_once(RESIDUAL)
    rng = np.random.default_rng()
    x, w = _random(rng, batch, 9, height, width), _random(rng, 9, 9, 3, 3)
    s, t, m = _random(rng, 9), _random(rng, 9), _random(rng, 9)
    v = rng.uniform(0.5, 1.5, 9).astype(np.float32)
    scale = (s / np.sqrt(v.astype(np.float64) + 1e-5))[:, None, None]
    normed = (conv2d(x, w, 1, 1) - m[:, None, None]) * scale + t[:, None, None]
    want = np.maximum(normed + x, 0.0)
    _close(exe(x, w, s, t, m, v), want, 81)


def test_cnn_matches_onnxruntime():
    """The ResNet-style CNN at batch 8: its larger convolutions take the tiled kernel."""
    ort = pytest.importorskip("onnxruntime")
    model = onnx_models.cnn(batch=8)
    exe = compile_for(model, "cuda")
    x = _random(np.random.default_rng(), 8, 3, 32, 32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"input": x})
    np.testing.assert_allclose(exe(x), want, rtol=1e-3, atol=1e-4)


def test_ptx_assembles_for_sm80_and_sm90():
    """The implicit GEMM's PTX (a padded, strided convolution) passes ptxas on both."""
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas (CUDA toolkit) not on PATH: PTX not assembled")
    module = mlc.compile(_conv_program(3, 33, 3, 2, 1), target="gpu", emit="nvvm")
    for sm in ("sm_80", "sm_90"):
        assemble(to_ptx(module, sm), sm)


def test_tf32_conv():
    """With tf32 allowed, convolutions take the tensor-core tiles: 10 mantissa bits."""
    program = _conv_program(5, 40, 3, 2, 1)
    if (reason := gpu_unavailable_reason()) is not None:
        if shutil.which("ptxas") is None:
            pytest.skip(f"{reason}; ptxas not on PATH either")
        module = mlc.compile(program, target="cuda", emit="nvvm", allow_tf32=True)
        for sm in ("sm_80", "sm_90"):
            assemble(to_ptx(module, sm), sm)
        pytest.skip(f"{reason} (tf32 PTX assembled with ptxas)")
    exe = mlc.compile(program, target="cuda", allow_tf32=True)
    rng = np.random.default_rng()
    x, w, b = _random(rng, 3, 5, 17, 13), _random(rng, 40, 5, 3, 3), _random(rng, 40)
    want = np.maximum(conv2d(x, w, 2, 1) + b[:, None, None], 0.0)
    got = exe(x, w, b)
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert error < 2e-3, f"relative L2 error {error:.2e}"

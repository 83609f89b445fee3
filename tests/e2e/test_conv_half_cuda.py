"""
16-bit convolutions on the tensor cores (`convert-contractions-to-gpu`'s implicit GEMM
with f16 or bf16 operands: `mma.sync.m16n8k16`, `ldmatrix`, f32 accumulators, the image
gathered into shared memory as it is staged, `conv_half_staging`), against float64
numpy on fresh random inputs: a 3-channel 7x7 stride-2 stem, 3x3 with padding, 1x1 of
stride 2 (gathered) and stride 1 (copied by `cp.async`), batch 1 and 3, a 1x1 output;
the batch and image sizes are dynamic.

- f32 programs under `precision="bf16" | "f16"` (autocast narrows the convolution)
  meet docs/precision.md's relative RMS error (2e-2 and 5e-3) against f64;
- 16-bit programs (a conv, its bias and a relu in bf16 or f16, the epilogue fused)
  are within 2 units in the last place of the output type of an f64 reference on the
  same 16-bit inputs, as the 16-bit matmuls (`test_tensor_core_matmul`).

Without a GPU they skip; with `MLC_TEST_PTX=1` each program's PTX (sm_80) is checked
for the tensor-core instructions and assembled with ptxas for sm_80 and sm_90a (where
ptxas is installed), then the numerics skip with the reason.
"""

import numpy as np
import pytest

from tests.gpu.targets import compile_once

pytestmark = pytest.mark.gpu

PRECISION_ERROR = {"bf16": 2e-2, "f16": 5e-3}  # docs/precision.md
RELATIVE = {"f16": 2.0**-10, "bf16": 2.0**-7}  # a unit in the last place, relative


def _program(c: int, f: int, kernel: int, strides: int, pads: int, element: str) -> str:
    """conv2d + bias + relu in `element` on an NCHW image of dynamic batch and size."""
    x, w = f"tensor<?x{c}x?x?x{element}>", f"tensor<{f}x{c}x{kernel}x{kernel}x{element}>"
    b, y = f"tensor<{f}x{element}>", f"tensor<?x{f}x?x?x{element}>"
    return f"""
func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{
  %y = ml.conv2d %x, %w, %b {{strides = array<i64: {strides}, {strides}>,
      pads = array<i64: {pads}, {pads}, {pads}, {pads}>}} : ({x}, {w}, {b}) -> {y}
  %r = ml.relu %y : ({y}) -> {y}
  func.return %r : {y}
}}
"""


def compiled(program: str, precision: str = "f32", copies: bool = False):
    """`program` for cuda, once (`compile_once`); without a GPU: its 16-bit tensor-core
    PTX (with `cp.async` copies when `copies`), built for sm_80, assembled for sm_80 and
    sm_90a, then a skip."""
    holds = ("mma.sync.aligned.m16n8k16", "ldmatrix")
    holds += ("cp.async.cg.shared.global",) if copies else ()
    return compile_once(program, precision=precision, sm=("sm_80", "sm_90a"), holds=holds)


def _dtype(element: str):
    if element == "f16":
        return np.float16
    return pytest.importorskip("ml_dtypes").bfloat16


# (channels, filters, kernel, strides, pads): the stem (3 channels, 7x7 stride 2: K is
# 147, not a multiple of 8), 3x3 pad 1, 1x1 stride 2 (gathered), 1x1 stride 1 (the
# image copied by cp.async where h * w is a multiple of 8); filters below and above 64
# (the 64-row and 128-row tiles). Each with batch 1 and 3, odd sizes, a 1x1 output.
PROGRAMS = {
    "stem7x7s2": (3, 64, 7, 2, 3),
    "3x3p1": (64, 70, 3, 1, 1),
    "1x1s2": (40, 33, 1, 2, 0),
    "1x1s1": (48, 130, 1, 1, 0),
}
SIZES = {
    "stem7x7s2": [(3, 23, 17), (1, 1, 1)],
    "3x3p1": [(3, 9, 13), (1, 1, 1)],
    "1x1s2": [(3, 15, 11), (1, 2, 1)],
    "1x1s1": [(3, 8, 6), (1, 7, 5), (1, 1, 1)],
}
CASES = [(name, size) for name, sizes in SIZES.items() for size in sizes]


def _random(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _conv2d(x, w, strides, pads):
    """NCHW convolution in float64 (no groups, no dilation): the reference."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads, pads), (pads, pads)))
    kh, kw = w.shape[2:]
    oh, ow = (x.shape[2] - kh) // strides + 1, (x.shape[3] - kw) // strides + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(kh):
        for j in range(kw):
            window = x[:, :, i : i + strides * (oh - 1) + 1 : strides]
            window = window[..., j : j + strides * (ow - 1) + 1 : strides]
            y += np.einsum("nchw,fc->nfhw", window, w[:, :, i, j].astype(np.float64))
    return y


def _reference(x, w, b, strides, pads):
    return np.maximum(_conv2d(x, w, strides, pads) + b.astype(np.float64)[:, None, None], 0.0)


@pytest.mark.parametrize("precision", ["bf16", "f16"])
@pytest.mark.parametrize("name, size", CASES)
def test_conv_under_precision(precision, name, size):
    """An f32 conv + bias + relu under autocast, within the precision's documented error."""
    c, f, kernel, strides, pads = PROGRAMS[name]
    copies = kernel == strides == 1
    exe = compiled(_program(c, f, kernel, strides, pads, "f32"), precision, copies)
    rng = np.random.default_rng()
    x = _random(rng, size[0], c, *size[1:])
    w = _random(rng, f, c, kernel, kernel) / np.float32(np.sqrt(c * kernel * kernel))
    b = _random(rng, f)
    want = _reference(x, w, b, strides, pads)
    got = np.asarray(exe(x, w, b), dtype=np.float64)
    assert got.shape == want.shape
    error = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
    assert error <= PRECISION_ERROR[precision], f"relative RMS error {error:.2e}"


HALF_PROGRAMS = {"stem7x7s2": "bf16", "3x3p1": "f16", "1x1s2": "bf16", "1x1s1": "f16"}


@pytest.mark.parametrize("name, size", CASES)
def test_half_conv_program(name, size):
    """A conv + bias + relu written in 16 bits: f32 sums, the result rounded once, the
    relu in the output type (fused into the kernel)."""
    c, f, kernel, strides, pads = PROGRAMS[name]
    element = HALF_PROGRAMS[name]
    program = _program(c, f, kernel, strides, pads, element)
    exe = compiled(program, copies=kernel == strides == 1)
    rng = np.random.default_rng()
    dtype = _dtype(element)
    x = _random(rng, size[0], c, *size[1:]).astype(dtype)
    w = (_random(rng, f, c, kernel, kernel) / np.sqrt(c * kernel * kernel)).astype(dtype)
    b = _random(rng, f).astype(dtype)
    want = _reference(x, w, b, strides, pads)
    got = np.asarray(exe(x, w, b)).astype(np.float64)
    ulp = RELATIVE[element]
    scale = max(1.0, np.abs(want).max(initial=0.0))
    np.testing.assert_allclose(got, want, rtol=3 * ulp, atol=3 * ulp * scale)

"""
Elementwise epilogues fused into the GPU's matmul kernels (`epilogue`: computed in f32
on the f32 accumulator, rounded once at the store, a lane's column pairs rounded and
stored together) against float64 numpy references of the same inputs, fresh random
ones each run: a bias with relu, erf and tanh GELU, a residual add, a rank-0 scale, and
splat constants (GELU's 0.5 and 1/sqrt(2) as exporters write them, full size and per
column); on bf16, f16 and f32 outputs; tiles whole and cut by M and N, N odd (no
pairs), batched; through the sm_90a wgmma kernel (`wgmma=auto`) and the mma.sync one
(`wgmma=off`); f32 through the FMA kernel. Without a GPU each program's PTX is
assembled with ptxas (for sm_90a; the mma.sync programs for sm_80 too) and must hold
the kernel's instructions (its wgmma or mma.sync, and the paired rounding where N is
even), then the numerics skip.

Tolerance: docs/precision.md's relative RMS error of each precision against f64 (bf16
2e-2, f16 5e-3, f32 1e-5), and every element within one unit in the last place of the
output type (2^-7 relative for bf16, 2^-10 for f16, 2^-20 for f32: the f32 kernel's sums
in another order) of itself and of the largest output: the sums and the epilogue are
f32, what remains is the one rounding to the output type.
"""

import math

import numpy as np
import pytest

from tests.gpu.targets import compile_once

pytestmark = pytest.mark.gpu

PRECISION_RMS = {"bf16": 2e-2, "f16": 5e-3, "f32": 1e-5}
UNIT = {"bf16": 2.0**-7, "f16": 2.0**-10, "f32": 2.0**-20}
KERNELS = {"wgmma": "auto", "mma.sync": "off", "fma": "off"}  # -> `wgmma` choice

# Each epilogue of `c` (the matmul, tensor<S>): its ml ops and its float64 reference
# of c and the other inputs (`_check`'s `inputs`: bias, r, scale, and root, the 1/sqrt(2)
# the program's type holds).
EPILOGUES = {
    "bias_relu": (
        """%s = ml.add %c, %bias : (tensor<S>, tensor<NxT>) -> tensor<S>
  %y = ml.relu %s : (tensor<S>) -> tensor<S>""",
        lambda c, x: np.maximum(c + x["bias"], 0.0),
    ),
    "bias_erf_gelu": (
        """%s = ml.add %c, %bias : (tensor<S>, tensor<NxT>) -> tensor<S>
  %y = ml.gelu %s : (tensor<S>) -> tensor<S>""",
        lambda c, x: _gelu(c + x["bias"]),
    ),
    "bias_tanh_gelu": (
        """%s = ml.add %c, %bias : (tensor<S>, tensor<NxT>) -> tensor<S>
  %y = ml.gelu %s {approximate = "tanh"} : (tensor<S>) -> tensor<S>""",
        lambda c, x: _gelu_tanh(c + x["bias"]),
    ),
    "residual": (
        "%y = ml.add %c, %r : (tensor<S>, tensor<S>) -> tensor<S>",
        lambda c, x: c + x["r"],
    ),
    "rank0_scale_bias": (
        """%s = ml.mul %c, %scale : (tensor<S>, tensor<T>) -> tensor<S>
  %y = ml.add %s, %bias : (tensor<S>, tensor<NxT>) -> tensor<S>""",
        lambda c, x: c * x["scale"] + x["bias"],
    ),
    "splat_gelu": (  # 0.5 * c * (1 + erf(c * 0.7071...)), the constants full tensors
        """%half = arith.constant dense<0.5> : tensor<S>
  %root = arith.constant dense<0.70710678> : tensor<NxT>
  %one = arith.constant dense<1.0> : tensor<S>
  %x = ml.mul %c, %root : (tensor<S>, tensor<NxT>) -> tensor<S>
  %e = ml.erf %x : (tensor<S>) -> tensor<S>
  %p = ml.add %e, %one : (tensor<S>, tensor<S>) -> tensor<S>
  %h = ml.mul %c, %half : (tensor<S>, tensor<S>) -> tensor<S>
  %y = ml.mul %h, %p : (tensor<S>, tensor<S>) -> tensor<S>""",
        lambda c, x: 0.5 * c * (1.0 + _erf(c * x["root"])),
    ),
}

PROGRAM = """
func.func @main(%a: tensor<AxT>, %b: tensor<BxT>, %bias: tensor<NxT>, %r: tensor<S>,
                %scale: tensor<T>) -> tensor<S> {
  %c = ml.matmul %a, %b : (tensor<AxT>, tensor<BxT>) -> tensor<S>
  EPILOGUE
  func.return %y : tensor<S>
}
"""

_erf = np.vectorize(math.erf)


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def _dtype(element: str):
    if element == "f32":
        return np.float32
    if element == "f16":
        return np.float16
    return pytest.importorskip("ml_dtypes").bfloat16


def _program(epilogue: str, element: str, batch: int, m: int, k: int, n: int) -> str:
    lead = f"{batch}x" if batch else ""
    text = PROGRAM.replace("EPILOGUE", EPILOGUES[epilogue][0])
    text = text.replace("tensor<S>", f"tensor<{lead}{m}x{n}xT>")
    text = text.replace("tensor<AxT>", f"tensor<{lead}{m}x{k}xT>")
    text = text.replace("tensor<BxT>", f"tensor<{lead}{k}x{n}xT>")
    text = text.replace("tensor<NxT>", f"tensor<{n}xT>")
    return text.replace("xT>", f"x{element}>").replace("tensor<T>", f"tensor<{element}>")


def _compiled(program: str, element: str, kernel: str, n: int):
    """The program for cuda with `kernel`; its PTX must hold that kernel's instructions."""
    holds: list[str] = []
    if element != "f32":
        wgmma = kernel == "wgmma" and n % 8 == 0
        holds.append("wgmma.mma_async" if wgmma else "mma.sync.aligned.m16n8k16")
        if n % 2 == 0:  # a lane's column pairs rounded together
            holds.append(f"cvt.rn.{element}x2.f32")
    sm = "sm_90a" if kernel == "wgmma" else ["sm_80", "sm_90a"]
    return compile_once(program, sm=sm, wgmma=KERNELS[kernel], holds=tuple(holds))


def _check(epilogue: str, element: str, kernel: str, batch: int, m: int, k: int, n: int):
    exe = _compiled(_program(epilogue, element, batch, m, k, n), element, kernel, n)
    rng = np.random.default_rng()
    dtype = _dtype(element)
    lead = (batch,) if batch else ()
    a = rng.standard_normal((*lead, m, k)).astype(dtype)
    b = (rng.standard_normal((*lead, k, n)) / math.sqrt(k)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    r = rng.standard_normal((*lead, m, n)).astype(dtype)
    scale = np.asarray(rng.uniform(0.5, 2.0), dtype=dtype)
    got = np.asarray(exe(a, b, bias, r, scale)).astype(np.float64)
    f64 = [np.asarray(x).astype(np.float64) for x in (a, b, bias, r, scale)]
    root = float(np.asarray(0.70710678, dtype=dtype))
    inputs = {"bias": f64[2], "r": f64[3], "scale": f64[4], "root": root}
    want = EPILOGUES[epilogue][1](f64[0] @ f64[1], inputs)
    assert got.shape == want.shape
    rms = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert rms <= PRECISION_RMS[element], f"relative RMS error {rms:.2e}"
    unit = UNIT[element]
    np.testing.assert_allclose(got, want, rtol=unit, atol=unit * np.abs(want).max())


# Tiles cut by M and N (200 rows: the second 128-row tile part outside; 264 columns).
@pytest.mark.parametrize("epilogue", list(EPILOGUES))
@pytest.mark.parametrize(
    "element, kernel",
    [("bf16", "wgmma"), ("bf16", "mma.sync"), ("f16", "wgmma"), ("f16", "mma.sync"),
     ("f32", "fma")],
)  # fmt: skip
def test_epilogue_partial_tiles(epilogue, element, kernel):
    _check(epilogue, element, kernel, 0, 200, 72, 264)


# Whole tiles (no bounds checks in the wgmma kernel), N odd (no pairs; wgmma declines
# it), batched. (Outputs under 32768 elements are the loop mapping's, not a kernel's.)
@pytest.mark.parametrize(
    "batch, m, k, n", [(0, 256, 64, 512), (0, 200, 64, 173), (3, 136, 72, 264)]
)
@pytest.mark.parametrize(
    "element, kernel",
    [("bf16", "wgmma"), ("bf16", "mma.sync"), ("f16", "wgmma"), ("f16", "mma.sync"),
     ("f32", "fma")],
)  # fmt: skip
def test_epilogue_shapes(batch, m, k, n, element, kernel):
    _check("bias_erf_gelu", element, kernel, batch, m, k, n)
    _check("splat_gelu", element, kernel, batch, m, k, n)

"""
16-bit matmuls by the sm_90a wgmma kernel (`convert-contractions-to-gpu{wgmma=auto}`,
`mlc.lowering.gpu.contraction.wgmma_kernel`) against float64 references of the same
f16 and bf16 inputs, fresh random ones each run: tiles cut by M, N and K (edge tiles,
K not a multiple of the 64-deep slice), M below the tile's rows, long K,
batches, a fused bias + relu + residual, transposed operands (K-major B, M-major A),
and each tile shape the benchmark compares. On an H100 or H200 the numerics run; without
one, the PTX of the transposed operands' programs and the 8192 kernel (of every
program with `MLC_TEST_PTX=1`) is assembled with ptxas for sm_90a (which it needs),
and the numerics skip with the reason.

Tolerance as tests/gpu/test_tensor_core_matmul.py: products and sums in f32, so 2 units
in the last place of the output type, relative to the largest output and to each.
"""

import os
import re
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc import pipeline
from mlc.backend.ptx import PTXError, to_ptx
from mlc.compiler import executable_cache
from tests.gpu.targets import assemble, gpu_unavailable_reason

pytestmark = pytest.mark.gpu

RELATIVE = {"f16": 2.0**-10, "bf16": 2.0**-7}
ELEMENTS = ["bf16", "f16"]

MATMUL = """
func.func @main(%a: tensor<MxKxT>, %b: tensor<KxNxT>) -> tensor<MxNxT> {
  %c = ml.matmul %a, %b : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  func.return %c : tensor<MxNxT>
}
"""

BATCHED = """
func.func @main(%a: tensor<BxMxKxT>, %b: tensor<BxKxNxT>) -> tensor<BxMxNxT> {
  %c = ml.matmul %a, %b : (tensor<BxMxKxT>, tensor<BxKxNxT>) -> tensor<BxMxNxT>
  func.return %c : tensor<BxMxNxT>
}
"""

EPILOGUE = """
func.func @main(%a: tensor<MxKxT>, %b: tensor<KxNxT>, %bias: tensor<NxT>,
                %r: tensor<MxNxT>) -> tensor<MxNxT> {
  %c = ml.matmul %a, %b : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  %s = ml.add %c, %bias : (tensor<MxNxT>, tensor<NxT>) -> tensor<MxNxT>
  %t = ml.relu %s : (tensor<MxNxT>) -> tensor<MxNxT>
  %u = ml.add %t, %r : (tensor<MxNxT>, tensor<MxNxT>) -> tensor<MxNxT>
  func.return %u : tensor<MxNxT>
}
"""

# a @ b.T reads b[n, k] (K-major B); a.T @ b.T and a.T @ b read a[k, m] (M-major A)
TRANSPOSED = """
func.func @main(%a: tensor<MxKxT>, %b: tensor<NxKxT>, %at: tensor<KxMxT>, %b2: tensor<KxNxT>)
    -> (tensor<MxNxT>, tensor<MxNxT>, tensor<MxNxT>) {
  %bt = ml.transpose %b {perm = array<i64: 1, 0>} : (tensor<NxKxT>) -> tensor<KxNxT>
  %ta = ml.transpose %at {perm = array<i64: 1, 0>} : (tensor<KxMxT>) -> tensor<MxKxT>
  %c = ml.matmul %a, %bt : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  %d = ml.matmul %ta, %bt : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  %e = ml.matmul %ta, %b2 : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  func.return %c, %d, %e : tensor<MxNxT>, tensor<MxNxT>, tensor<MxNxT>
}
"""


def _source(program: str, element: str, **sizes: int) -> str:
    for name, size in sizes.items():  # dims as `<MxK`, `xMx`: whole tokens only
        program = re.sub(rf"(?<=[<x]){name}(?=x)", str(size), program)
    return program.replace("xT>", f"x{element}>")


@contextmanager
def wgmma(tile: tuple[int, int, int] | None):
    """Compiles inside use the wgmma kernel (with `tile`: rows, cols, stages)."""
    options = "wgmma=auto" + (f" wgmma-tile={','.join(map(str, tile))}" if tile else "")
    default = pipeline.STAGES["parallel-loops"]
    pipeline.STAGES["parallel-loops"] = default.replace(
        "convert-contractions-to-gpu", f"convert-contractions-to-gpu{{{options}}}"
    )
    executable_cache.clear()  # the same source compiles again, with this stage
    try:
        yield
    finally:
        pipeline.STAGES["parallel-loops"] = default
        executable_cache.clear()


@cache
def lowered(source: str, tile=None):
    """`source` lowered to NVVM for sm_90a with the wgmma kernel, once."""
    with wgmma(tile):
        return mlc.compile(source, target="cuda", emit="nvvm", sm="sm_90a")


def wgmma_ptx(source: str, tile=None) -> str:
    """The sm_90a PTX of `source` with the wgmma kernel: it must hold wgmmas."""
    ptx = to_ptx(lowered(source, tile), "sm_90a")
    assert "wgmma.mma_async.sync.aligned" in ptx and ".target sm_90a" in ptx
    return ptx


_COMPILED: dict[tuple[str, object], object] = {}


def compiled(source: str, tile=None):
    """
    `source` for cuda with the wgmma kernel, once. Without a GPU: a skip, after its PTX
    is assembled if `MLC_TEST_PTX=1` (each program costs seconds; the registers test
    assembles one always).
    """
    key = (source, tile)
    if key not in _COMPILED:
        reason = gpu_unavailable_reason()
        try:
            if reason is None:
                with wgmma(tile):
                    _COMPILED[key] = mlc.compile(source, target="cuda")
            else:
                if os.environ.get("MLC_TEST_PTX") == "1":
                    assemble(wgmma_ptx(source, tile), "sm_90a")
                pytest.skip(f"{reason} (wgmma PTX assembled with ptxas for sm_90a)")
        except pytest.skip.Exception as skipped:
            _COMPILED[key] = skipped
    found = _COMPILED[key]
    if isinstance(found, BaseException):
        raise found
    return found


def _dtype(element: str):
    return np.float16 if element == "f16" else pytest.importorskip("ml_dtypes").bfloat16


def _random(rng, element, *shape):
    return rng.standard_normal(shape).astype(_dtype(element))


def _f64(x):
    return np.asarray(x).astype(np.float64)


def _close(got, want, element):
    ulp = RELATIVE[element]
    scale = max(1.0, np.abs(want).max(initial=0.0))
    np.testing.assert_allclose(_f64(got), want, rtol=2 * ulp, atol=2 * ulp * scale)


SQUARE_8192 = _source(MATMUL, "bf16", M=8192, K=8192, N=8192)


def test_other_targets_refuse_wgmma():
    """Only sm_90a has wgmma: PTX for plain sm_90 is refused with a one-line error."""
    with pytest.raises(PTXError, match=r"wgmma\.mma_async, which only sm_90a has, not sm_90"):
        to_ptx(lowered(SQUARE_8192), "sm_90")


def test_kernel_registers_without_spills():
    """The default 128x256 kernel at 8192 fits the registers (ptxas -v: no spills)."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas (CUDA toolkit) not on PATH")
    ptx = wgmma_ptx(SQUARE_8192)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.ptx"
        path.write_text(ptx)
        done = subprocess.run(
            [ptxas, "-v", "-arch=sm_90a", str(path), "-o", str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
        )
    assert done.returncode == 0, done.stderr
    assert "0 bytes spill stores" in done.stderr and "serialized" not in done.stderr


# M, N, K multiples of 8: edge tiles in M (200), N (264, 1000) and K (72, 520: a
# partial last slice), M smaller than the tile's 128 rows, long K (4096: 64 slices
# through the 4-stage ring), several tile rows and columns. (Outputs under 32768
# elements are the loop mapping's, not a tiled kernel's.)
@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize(
    "m, k, n",
    [(200, 72, 264), (256, 128, 512), (64, 64, 512), (1000, 520, 1000), (128, 4096, 256),
     (1096, 64, 2056)],
)  # fmt: skip
def test_matmul(element, m, k, n):
    exe = compiled(_source(MATMUL, element, M=m, K=k, N=n))
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


# The tile shapes bench/gpu.py compares: rows (64 a warpgroup), columns, stages.
@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("tile", [(128, 128, 4), (64, 128, 3), (192, 192, 3), (128, 256, 3)])
def test_tile_shapes(element, tile):
    m, k, n = 456, 200, 392
    exe = compiled(_source(MATMUL, element, M=m, K=k, N=n), tile)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("batch, m, k, n", [(3, 128, 96, 256), (2, 72, 64, 320)])
def test_batched(element, batch, m, k, n):
    exe = compiled(_source(BATCHED, element, B=batch, M=m, K=k, N=n))
    rng = np.random.default_rng()
    a, b = _random(rng, element, batch, m, k), _random(rng, element, batch, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("m, k, n", [(200, 136, 264), (512, 64, 256)])
def test_bias_relu_residual_epilogue(element, m, k, n):
    exe = compiled(_source(EPILOGUE, element, M=m, K=k, N=n))
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    bias, r = _random(rng, element, n), _random(rng, element, m, n)
    want = np.maximum(_f64(a) @ _f64(b) + _f64(bias), 0.0) + _f64(r)
    _close(exe(a, b, bias, r), want, element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("m, k, n", [(136, 200, 264), (256, 64, 128)])
def test_transposed_operands(element, m, k, n):
    exe = compiled(_source(TRANSPOSED, element, M=m, K=k, N=n))
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, n, k)
    at, b2 = _random(rng, element, k, m), _random(rng, element, k, n)
    c, d, e = exe(a, b, at, b2)
    _close(c, _f64(a) @ _f64(b).T, element)
    _close(d, _f64(at).T @ _f64(b).T, element)
    _close(e, _f64(at).T @ _f64(b2), element)

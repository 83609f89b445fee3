"""
16-bit matmuls by the sm_90a wgmma kernel (`convert-contractions-to-gpu{wgmma=auto}`,
`mlc.lowering.gpu.contraction.wgmma_kernel`), each fed both ways (the `feed` fixture:
every thread's cp.async, `wgmma-tma=false`, and TMA from a producer warpgroup,
`wgmma_tma`, the default), against float64 references of the same f16 and bf16 inputs,
fresh random ones each run: tiles cut by M, N and K (edge tiles, K not a multiple of
the 64-deep slice: TMA's zero fill past the tensor), M below the tile's rows, long K,
batches (TMA: 3-D maps), a fused bias + relu + residual, transposed operands (K-major
B, M-major A), and each tile shape the benchmark compares. On an H100 or H200 the
numerics run; without one, the PTX of the transposed operands' programs and the 8192
kernel (of every program with `MLC_TEST_PTX=1`) is assembled with ptxas for sm_90a
(which it needs), and the numerics skip with the reason. What only the TMA feed has
(its registers, maps, threads) is in tests/gpu/test_wgmma_tma.py.

Tolerance as tests/gpu/test_tensor_core_matmul.py: products and sums in f32, so 2 units
in the last place of the output type, relative to the largest output and to each.

f32 matmuls with `allow_tf32=True` take the same kernel in tf32 (`m64nNk8`, a
row-major B transposed K-major first: by a transpose kernel, or at compile time when it
is a constant), both feeds: plain, transposed operands, batched, the fused epilogue, a
constant weight, sizes that are multiples of 4 but not of 8, against float64 of the f32
inputs. tf32 keeps 10 bits of each operand's mantissa (the wgmma reads the top 19 bits
of each f32), so each product is within 2^-9 of its value, relatively: every output
within 3 * 2^-10 * (|a| @ |b|), and a relative L2 error below docs/precision.md's 5e-3.
"""

import re
import shutil
from functools import cache

import numpy as np
import pytest

import mlc
from mlc.backend.ptx import PTXError, to_ptx
from tests.gpu.targets import assemble, compile_once, wgmma_choice

pytestmark = pytest.mark.gpu

RELATIVE = {"f16": 2.0**-10, "bf16": 2.0**-7}
ELEMENTS = ["bf16", "f16"]
FEEDS = ["cp.async", "tma"]  # `MLC_WGMMA`'s feeds: every thread's copies, or TMA's
TMA_COPY = "cp.async.bulk.tensor"

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

# a @ w with w a constant (a model's weight): transposed K-major at compile time
CONSTANT_B = """
func.func @main(%a: tensor<MxKxT>) -> tensor<MxNxT> {
  %w = arith.constant dense<"WEIGHT"> : tensor<KxNxT>
  %c = ml.matmul %a, %w : (tensor<MxKxT>, tensor<KxNxT>) -> tensor<MxNxT>
  func.return %c : tensor<MxNxT>
}
"""


def _weight_hex(w: np.ndarray) -> str:
    """`w`'s bytes as a dense attribute's hex string (little-endian f32)."""
    return "0x" + np.ascontiguousarray(w, dtype="<f4").tobytes().hex().upper()


def _source(program: str, element: str, **sizes: int) -> str:
    for name, size in sizes.items():  # dims as `<MxK`, `xMx`: whole tokens only
        program = re.sub(rf"(?<=[<x]){name}(?=x)", str(size), program)
    return program.replace("xT>", f"x{element}>")


def _choice(tile: tuple[int, int, int] | None, feed: str = "cp.async") -> str:
    """The wgmma kernel's compile choice (`MLC_WGMMA`): a tile or not, and the feed."""
    return ",".join(map(str, (*tile, feed))) if tile else feed


@pytest.fixture(params=FEEDS)
def feed(request) -> str:
    """How a test's wgmma kernel is fed (`FEEDS`)."""
    return request.param


@cache
def lowered(source: str, tile=None, allow_tf32: bool = False):
    """`source` lowered to NVVM for sm_90a with the cp.async-fed wgmma kernel, once."""
    with wgmma_choice(_choice(tile)):
        options = {"allow_tf32": True} if allow_tf32 else {}
        return mlc.compile(source, target="cuda", emit="nvvm", sm="sm_90a", **options)


def wgmma_ptx(source: str, tile=None, allow_tf32: bool = False) -> str:
    """The sm_90a PTX of `source` with the wgmma kernel: it must hold wgmmas."""
    ptx = to_ptx(lowered(source, tile, allow_tf32), "sm_90a")
    assert "wgmma.mma_async.sync.aligned" in ptx and ".target sm_90a" in ptx
    return ptx


def compiled(source: str, tile=None, allow_tf32: bool = False, feed: str = "cp.async"):
    """
    `source` for cuda with the wgmma kernel fed by `feed`, once (`compile_once`); its
    PTX holds that feed's copies. Without a GPU the test is skipped before it compiles
    unless `MLC_TEST_PTX=1` (tests/conftest.py); then its sm_90a PTX is assembled (each
    program costs seconds), and the numerics skip.
    """
    options = {"allow_tf32": True} if allow_tf32 else {}
    holds = ("wgmma.mma_async.sync.aligned", TMA_COPY if feed == "tma" else "cp.async.cg")
    return compile_once(source, sm="sm_90a", wgmma=_choice(tile, feed), holds=holds, **options)


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


@pytest.mark.parametrize("element", [*ELEMENTS, "tf32"])
def test_kernel_registers_without_spills(element):
    """The default 128x256 kernel at 8192 fits the registers (ptxas -v: no spills):
    206 a thread in 16 bits (tf32: B transposed K-major first, 16-byte copies)."""
    if shutil.which("ptxas") is None:  # before compiling: the check needs it
        pytest.skip("ptxas (CUDA toolkit) not on PATH")
    tf32 = element == "tf32"
    ptx = wgmma_ptx(_source(MATMUL, "f32" if tf32 else element, M=8192, K=8192, N=8192), None, tf32)
    assert not tf32 or "m64n256k8.f32.tf32.tf32" in ptx
    report = assemble(ptx, "sm_90a", verbose=True)
    assert "0 bytes spill stores" in report and "serialized" not in report


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
def test_matmul(element, m, k, n, feed):
    exe = compiled(_source(MATMUL, element, M=m, K=k, N=n), feed=feed)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


# The tile shapes bench/gpu.py compares: rows (64 a warpgroup), columns, stages.
@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("tile", [(128, 128, 4), (64, 128, 3), (192, 192, 3), (128, 256, 3)])
def test_tile_shapes(element, tile, feed):
    m, k, n = 456, 200, 392
    exe = compiled(_source(MATMUL, element, M=m, K=k, N=n), tile, feed=feed)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("batch, m, k, n", [(3, 128, 96, 256), (2, 72, 64, 320)])
def test_batched(element, batch, m, k, n, feed):
    exe = compiled(_source(BATCHED, element, B=batch, M=m, K=k, N=n), feed=feed)
    rng = np.random.default_rng()
    a, b = _random(rng, element, batch, m, k), _random(rng, element, batch, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("m, k, n", [(200, 136, 264), (512, 64, 256)])
def test_bias_relu_residual_epilogue(element, m, k, n, feed):
    exe = compiled(_source(EPILOGUE, element, M=m, K=k, N=n), feed=feed)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    bias, r = _random(rng, element, n), _random(rng, element, m, n)
    want = np.maximum(_f64(a) @ _f64(b) + _f64(bias), 0.0) + _f64(r)
    _close(exe(a, b, bias, r), want, element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("m, k, n", [(136, 200, 264), (256, 64, 128)])
def test_transposed_operands(element, m, k, n, feed):
    exe = compiled(_source(TRANSPOSED, element, M=m, K=k, N=n), feed=feed)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, n, k)
    at, b2 = _random(rng, element, k, m), _random(rng, element, k, n)
    c, d, e = exe(a, b, at, b2)
    _close(c, _f64(a) @ _f64(b).T, element)
    _close(d, _f64(at).T @ _f64(b).T, element)
    _close(e, _f64(at).T @ _f64(b2), element)


def _close_tf32(got, want, bound):
    """Within tf32's rounding of each product (`bound`: |a| @ |b|), and docs/precision.md."""
    got = _f64(got)
    assert (np.abs(got - want) <= 3 * 2.0**-10 * bound + 1e-6).all()
    error = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
    assert error < 5e-3, f"relative L2 error {error:.2e}"


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# M, N, K multiples of 4 (not all of 8: 196, 36, 260, 1004), edge tiles in each, K
# below two slices (36) and long (2048), M below the tile's rows.
@pytest.mark.parametrize(
    "m, k, n", [(196, 36, 260), (256, 128, 512), (64, 32, 512), (1004, 520, 1000), (128, 2048, 256)]
)
def test_tf32_matmul(m, k, n, feed):
    exe = compiled(_source(MATMUL, "f32", M=m, K=k, N=n), allow_tf32=True, feed=feed)
    rng = np.random.default_rng()
    a, b = _f32(rng, m, k), _f32(rng, k, n)
    _close_tf32(exe(a, b), _f64(a) @ _f64(b), np.abs(_f64(a)) @ np.abs(_f64(b)))


@pytest.mark.parametrize("m, k, n", [(132, 204, 268), (256, 64, 128)])
def test_tf32_transposed_operands(m, k, n, feed):
    """K-major B as it lies; M-major A and N-major B transposed K-major first."""
    exe = compiled(_source(TRANSPOSED, "f32", M=m, K=k, N=n), allow_tf32=True, feed=feed)
    rng = np.random.default_rng()
    a, b, at, b2 = _f32(rng, m, k), _f32(rng, n, k), _f32(rng, k, m), _f32(rng, k, n)
    c, d, e = exe(a, b, at, b2)
    for got, x, y in ((c, a, b.T), (d, at.T, b.T), (e, at.T, b2)):
        _close_tf32(got, _f64(x) @ _f64(y), np.abs(_f64(x)) @ np.abs(_f64(y)))


@pytest.mark.parametrize("batch, m, k, n", [(3, 128, 96, 256), (2, 68, 36, 324)])
def test_tf32_batched(batch, m, k, n, feed):
    exe = compiled(_source(BATCHED, "f32", B=batch, M=m, K=k, N=n), allow_tf32=True, feed=feed)
    rng = np.random.default_rng()
    a, b = _f32(rng, batch, m, k), _f32(rng, batch, k, n)
    _close_tf32(exe(a, b), _f64(a) @ _f64(b), np.abs(_f64(a)) @ np.abs(_f64(b)))


@pytest.mark.parametrize("m, k, n", [(256, 68, 132), (132, 128, 260)])
def test_tf32_constant_weight(m, k, n, feed):
    """A constant B, transposed K-major at compile time (no transpose kernel)."""
    w = _f32(np.random.default_rng(), k, n)
    source = _source(CONSTANT_B, "f32", M=m, K=k, N=n).replace("WEIGHT", _weight_hex(w))
    exe = compiled(source, allow_tf32=True, feed=feed)
    a = _f32(np.random.default_rng(), m, k)
    _close_tf32(exe(a), _f64(a) @ _f64(w), np.abs(_f64(a)) @ np.abs(_f64(w)))


@pytest.mark.parametrize("m, k, n", [(196, 132, 260), (512, 64, 256)])
def test_tf32_bias_relu_residual_epilogue(m, k, n, feed):
    exe = compiled(_source(EPILOGUE, "f32", M=m, K=k, N=n), allow_tf32=True, feed=feed)
    rng = np.random.default_rng()
    a, b, bias, r = _f32(rng, m, k), _f32(rng, k, n), _f32(rng, n), _f32(rng, m, n)
    want = np.maximum(_f64(a) @ _f64(b) + _f64(bias), 0.0) + _f64(r)
    _close_tf32(exe(a, b, bias, r), want, np.abs(_f64(a)) @ np.abs(_f64(b)))

"""
The shared-memory tiled contraction kernel (`convert-contractions-to-gpu`) on the GPU:
odd sizes around the 128x128x8 tiles, empty dims, batches, fused epilogues, all
against numpy in float64 on fresh random inputs. Without a GPU each program's PTX is
assembled with ptxas (where it is installed) and the numerics skip with the reason.
"""

import numpy as np
import pytest

from tests.gpu.targets import compile_for, compile_once

pytestmark = pytest.mark.gpu

MATMUL = """
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = ml.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}
"""

BATCHED = """
func.func @main(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c = ml.matmul %a, %b : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %c : tensor<?x?x?xf32>
}
"""

# Epilogue fusion needs a static K (it tests for the last K iteration).
BIAS_RELU_RESIDUAL = """
func.func @main(%a: tensor<?x70xf32>, %b: tensor<70x?xf32>, %bias: tensor<?xf32>,
                %r: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = ml.matmul %a, %b : (tensor<?x70xf32>, tensor<70x?xf32>) -> tensor<?x?xf32>
  %s = ml.add %c, %bias : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %t = ml.relu %s : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = ml.add %t, %r : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %u : tensor<?x?xf32>
}
"""

GELU = """
func.func @main(%a: tensor<?x40xf32>, %b: tensor<40x?xf32>) -> tensor<?x?xf32> {
  %c = ml.matmul %a, %b : (tensor<?x40xf32>, tensor<40x?xf32>) -> tensor<?x?xf32>
  %g = ml.gelu %c : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %g : tensor<?x?xf32>
}
"""


def _random(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _close(got, want, k):
    scale = np.sqrt(max(k, 1)) * 1e-5
    np.testing.assert_allclose(
        got, want, rtol=1e-4, atol=scale * max(1.0, np.abs(want).max(initial=0.0))
    )


@pytest.mark.parametrize(
    "m, k, n",
    [(1, 1, 1), (3, 5, 7), (128, 8, 128), (129, 9, 127), (200, 33, 300), (257, 100, 65),
     (64, 1000, 64), (5, 0, 6), (0, 4, 3)],
)  # fmt: skip
def test_matmul_odd_sizes(m, k, n):
    exe = compile_once(MATMUL)
    rng = np.random.default_rng()
    a, b = _random(rng, m, k), _random(rng, k, n)
    _close(exe(a, b), a.astype(np.float64) @ b, k)


@pytest.mark.parametrize("batch, m, k, n", [(1, 130, 17, 129), (3, 65, 40, 200), (5, 1, 3, 1)])
def test_batched_matmul_through_the_same_kernel(batch, m, k, n):
    exe = compile_once(BATCHED)
    rng = np.random.default_rng()
    a, b = _random(rng, batch, m, k), _random(rng, batch, k, n)
    _close(exe(a, b), a.astype(np.float64) @ b, k)


@pytest.mark.parametrize("m, k, n", [(131, 70, 129), (7, 70, 300)])
def test_bias_relu_residual_epilogue(m, k, n):
    exe = compile_once(BIAS_RELU_RESIDUAL)
    rng = np.random.default_rng()
    a, b, bias, r = _random(rng, m, k), _random(rng, k, n), _random(rng, n), _random(rng, m, n)
    want = np.maximum(a.astype(np.float64) @ b + bias, 0.0) + r
    _close(exe(a, b, bias, r), want, k)


def test_gelu_epilogue():
    from math import erf, sqrt

    exe = compile_once(GELU)
    rng = np.random.default_rng()
    a, b = _random(rng, 150, 40), _random(rng, 40, 140)
    c = a.astype(np.float64) @ b
    want = 0.5 * c * (1.0 + np.vectorize(erf)(c / sqrt(2.0)))
    _close(exe(a, b), want, 40)


TILE_OPTIONS = "tile=64,128,8,8,8 small-tile=32,32,4,4,16,2 few-blocks=4 blocks-per-sm=2"


@pytest.fixture(scope="module")
def other_tiles():
    """MATMUL through 64x128 tiles (8x8 a thread, launch-bounded) and 32x16 ones (4x4)."""
    from mlc import pipeline
    from mlc.compiler import executable_cache

    default = pipeline.STAGES["parallel-loops"]
    pipeline.STAGES["parallel-loops"] = default.replace(
        "convert-contractions-to-gpu", f"convert-contractions-to-gpu{{{TILE_OPTIONS}}}"
    )
    executable_cache.clear()  # the same source as MATMUL: compile it again, this way
    try:
        return compile_for(MATMUL, "cuda")
    except pytest.skip.Exception as skipped:
        return skipped
    finally:
        pipeline.STAGES["parallel-loops"] = default
        executable_cache.clear()


@pytest.mark.parametrize("m, k, n", [(200, 50, 300), (70, 9, 100), (33, 17, 15)])
def test_other_tile_shapes(other_tiles, m, k, n):
    if isinstance(other_tiles, BaseException):
        raise other_tiles
    rng = np.random.default_rng()
    a, b = _random(rng, m, k), _random(rng, k, n)
    _close(other_tiles(a, b), a.astype(np.float64) @ b, k)


# Aligned operands (K and N multiples of 4) take the cp.async pipeline of the 64x64
# variant: prime row counts, K shorter than one slice (4) or not a multiple of its
# depth (20, 332), one output.
@pytest.mark.parametrize("m, k, n", [(997, 332, 252), (131, 4, 68), (509, 20, 132), (1, 4, 4)])
def test_matmul_through_the_copy_pipeline(m, k, n):
    exe = compile_once(MATMUL)
    rng = np.random.default_rng()
    a, b = _random(rng, m, k), _random(rng, k, n)
    _close(exe(a, b), a.astype(np.float64) @ b, k)


@pytest.fixture(scope="module")
def deep_pipeline():
    """MATMUL through 128x128 tiles with a 4-stage cp.async pipeline, for every grid."""
    from mlc import pipeline
    from mlc.compiler import executable_cache

    default = pipeline.STAGES["parallel-loops"]
    options = "tile=128,128,8,8,8,1,4 few-blocks=0"
    pipeline.STAGES["parallel-loops"] = default.replace(
        "convert-contractions-to-gpu", f"convert-contractions-to-gpu{{{options}}}"
    )
    executable_cache.clear()  # the same source as MATMUL: compile it again, this way
    try:
        return compile_for(MATMUL, "cuda")
    except pytest.skip.Exception as skipped:
        return skipped
    finally:
        pipeline.STAGES["parallel-loops"] = default
        executable_cache.clear()


@pytest.mark.parametrize("m, k, n", [(300, 44, 260), (129, 8, 132), (67, 12, 4)])
def test_deep_copy_pipeline(deep_pipeline, m, k, n):
    if isinstance(deep_pipeline, BaseException):
        raise deep_pipeline
    rng = np.random.default_rng()
    a, b = _random(rng, m, k), _random(rng, k, n)
    _close(deep_pipeline(a, b), a.astype(np.float64) @ b, k)


def _tf32_program(program: str):
    """`program` with `allow_tf32` (once), or without a GPU: its PTX assembled for sm_80
    and sm_90."""
    return compile_once(program, sm=("sm_80", "sm_90"), allow_tf32=True)


def _close_tf32(got, want):
    """tf32 keeps 10 mantissa bits of each operand: a relative L2 error near 1e-4."""
    error = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
    assert error < 2e-3, f"relative L2 error {error:.2e}"


# K and N multiples of 4 take the cp.async pipeline: big tiles at 2100x36 @ 36x2100
# (17 x 17 tiles launched 8 tile rows at a time: the last group has one row),
# small ones at 516x44 @ 44x260 and 131x4 @ 4x68 (K shorter than one slice).
@pytest.mark.parametrize(
    "m, k, n",
    [(2100, 37, 2100), (131, 70, 129), (7, 300, 5), (2100, 36, 2100), (516, 44, 260), (131, 4, 68)],
)
def test_tf32_matmul(m, k, n):
    tf32_matmul = _tf32_program(MATMUL)  # compiled once, for every case
    rng = np.random.default_rng()
    a, b = _random(rng, m, k), _random(rng, k, n)
    _close_tf32(tf32_matmul(a, b), a.astype(np.float64) @ b)


def test_tf32_epilogue():
    program = _tf32_program(BIAS_RELU_RESIDUAL)
    rng = np.random.default_rng()
    m, k, n = 300, 70, 200
    a, b, bias, r = _random(rng, m, k), _random(rng, k, n), _random(rng, n), _random(rng, m, n)
    want = np.maximum(a.astype(np.float64) @ b + bias, 0.0) + r
    _close_tf32(program(a, b, bias, r), want)


# Operands in either layout: each is staged along its contiguous dim (`a @ b.T` reads
# b[j, k] along K; `a.T @ b` reads a[k, i] along the rows).
TRANSPOSED = """
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %at: tensor<?x?xf32>,
                %b2: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %bt = ml.transpose %b {perm = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %ta = ml.transpose %at {perm = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %c = ml.matmul %a, %bt : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %d = ml.matmul %ta, %bt : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %e = ml.matmul %ta, %b2 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c, %d, %e : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("m, k, n", [(131, 37, 129), (300, 784, 128), (257, 8, 5), (7, 101, 300)])
def test_transposed_operands(m, k, n):
    exe = compile_once(TRANSPOSED)
    rng = np.random.default_rng()
    a, b, at, b2 = _random(rng, m, k), _random(rng, n, k), _random(rng, k, m), _random(rng, k, n)
    c, d, e = exe(a, b, at, b2)
    _close(c, a.astype(np.float64) @ b.T, k)
    _close(d, at.T.astype(np.float64) @ b.T, k)
    _close(e, at.T.astype(np.float64) @ b2, k)


MLP_LAYER = """
func.func @main(%x: tensor<?x784xf32>, %w: tensor<784x128xf32>, %b: tensor<128xf32>)
    -> tensor<?x128xf32> {
  %h = ml.matmul %x, %w : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  %s = ml.add %h, %b : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  %r = ml.relu %s : (tensor<?x128xf32>) -> tensor<?x128xf32>
  func.return %r : tensor<?x128xf32>
}
"""


def test_misaligned_views_take_the_scalar_loads():
    """GPUArray views one float into their buffers: not 16-byte aligned, still right."""
    exe = compile_once(MLP_LAYER)
    from pycuda import gpuarray  # pyright: ignore[reportMissingImports]

    rng = np.random.default_rng()
    m = 509
    x, w, bias = _random(rng, m, 784), _random(rng, 784, 128), _random(rng, 128)
    want = np.maximum(x.astype(np.float64) @ w + bias, 0.0)
    _close(exe(x, w, bias), want, 784)
    views = []
    for array in (x, w):
        padded = gpuarray.to_gpu(np.concatenate([[np.float32(7)], array.ravel()]))
        view = gpuarray.GPUArray(array.shape, np.float32, gpudata=int(padded.gpudata) + 4)
        views.append((view, padded))
    got = exe(views[0][0], views[1][0], bias)
    _close(got.get() if hasattr(got, "get") else got, want, 784)

"""
Elementwise kernels with four lanes per thread (`mlc.lowering.gpu.loop_mapping.vector_lanes`) on the
GPU: the 16-byte path on aligned buffers, the scalar path on the row tails and on
buffers that are not 16-byte aligned (views one float into an allocation), broadcast
operands read once per four lanes; against numpy on fresh random inputs.
"""

import numpy as np
import pytest

from tests.gpu.targets import compile_once

pytestmark = pytest.mark.gpu

BIAS_RELU = """
func.func @main(%x: tensor<?x?xf32>, %b: tensor<?xf32>, %r: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = ml.add %x, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %t = ml.relu %s : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = ml.mul %t, %r : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %u : tensor<?x?xf32>
}
"""

CHAIN = """
func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %m = ml.mul %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %e = ml.exp %m : (tensor<?xf32>) -> tensor<?xf32>
  func.return %e : tensor<?xf32>
}
"""


def _random(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("m, n", [(1, 1), (3, 4), (5, 7), (64, 128), (33, 129), (2, 1030)])
def test_rows_with_broadcast_and_tails(m, n):
    exe = compile_once(BIAS_RELU)
    rng = np.random.default_rng()
    x, b, r = _random(rng, m, n), _random(rng, n), _random(rng, m, n)
    np.testing.assert_allclose(exe(x, b, r), np.maximum(x + b, 0) * r, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [1, 4, 4099, 1 << 20])  # pycuda cannot slice an empty array
@pytest.mark.parametrize("shift", [0, 1, 2])
def test_views_off_16_byte_alignment(n, shift):
    exe = compile_once(CHAIN)  # skips here without a GPU
    import pycuda.gpuarray as gpuarray

    rng = np.random.default_rng()
    a, b = _random(rng, n) * 0.5, _random(rng, n) * 0.5
    views = [gpuarray.to_gpu(np.concatenate([_random(rng, shift), v]))[shift:] for v in (a, b)]
    assert all(int(v.gpudata) % 16 == 4 * shift % 16 for v in views)
    got = exe(*views).get()
    np.testing.assert_allclose(got, np.exp(a * b), rtol=2e-6, atol=1e-7)

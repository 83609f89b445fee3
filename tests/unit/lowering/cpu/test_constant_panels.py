"""The compile-time packing of constant matmul weights into the kernel's B panels."""

import numpy as np
import pytest

from mlc.lowering.cpu.constant_panels import pack_panels


@pytest.mark.parametrize(("k", "n", "nr"), [(3, 16, 16), (5, 17, 16), (1, 1, 8), (7, 40, 8)])
def test_pack_panels_lays_out_what_pack_b_does(k: int, n: int, nr: int):
    weight = np.arange(k * n, dtype=np.float32).reshape(k, n) + 1
    packed = pack_panels(weight, nr)
    panels = -(-n // nr)
    assert packed.shape == (1, panels, k, nr) and packed.flags.c_contiguous
    for p in range(panels):
        for jj in range(nr):
            j = p * nr + jj
            want = weight[:, j] if j < n else np.zeros(k, np.float32)
            np.testing.assert_array_equal(packed[0, p, :, jj], want)

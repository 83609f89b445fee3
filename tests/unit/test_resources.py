"""Large constants kept by `mlc.resources` for the JIT to bind."""

import numpy as np
import pytest

from mlc import resources


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "float16"])
@pytest.mark.parametrize("shape", [(257,), (3, 129), (1000, 7)])
def test_stored_data_is_aligned_read_only_and_equal(dtype, shape):
    # Compiled code declares the global 64-byte aligned and may load it with aligned
    # vector moves: numpy's own 16-byte alignment is not enough.
    rng = np.random.default_rng()
    for offset in range(0, 64, 4):  # source buffers at every 4-byte misalignment
        backing = np.zeros(np.prod(shape) * np.dtype(dtype).itemsize + 64, np.uint8)
        source = backing[offset : offset + backing.size - 64].view(dtype).reshape(shape)
        source[...] = rng.standard_normal(shape).astype(dtype)
        stored = resources.lookup(resources.register(source, "w"))
        assert stored is not None
        assert stored.ctypes.data % resources.ALIGNMENT == 0
        assert not stored.flags.writeable
        np.testing.assert_array_equal(stored, source)

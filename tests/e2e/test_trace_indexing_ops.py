"""`ops.take_along_axis` traced and compiled, against numpy on fresh random data."""

import numpy as np
import pytest

import mlc
from mlc import ops

SEED = np.random.SeedSequence().entropy


@pytest.mark.parametrize(
    ("shape", "index_shape", "axis", "dtype"),
    [
        ((4, 6), (4, 3), 1, "float32"),
        ((5, 3), (2, 3), 0, "int32"),
        ((3, 4, 5), (1, 4, 2), -1, "float64"),  # a size-1 dim of the indices broadcasts
        ((4, 6), (7,), None, "float32"),  # axis None: the flat array
    ],
)
def test_take_along_axis_matches_numpy(shape, index_shape, axis, dtype):
    rng = np.random.default_rng(SEED)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    n = x.size if axis is None else shape[axis]
    i = rng.integers(-n, n, index_shape)
    f = mlc.jit(lambda a, b: ops.take_along_axis(a, b, axis))
    np.testing.assert_array_equal(f(x, i), np.take_along_axis(x, i, axis))
    i.flat[0] = n
    with pytest.raises(mlc.RuntimeCheckError, match=f"index {n} is out of range"):
        f(x, i)

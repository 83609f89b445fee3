"""
Out-of-range indices of gathers: a located `mlc.RuntimeCheckError` naming the op and
the index, never a read outside a buffer; in-range ones (negative ones wrap) match numpy.

Every program runs on the CPU and on `cuda`, with static and with dynamic shapes.
"""

import numpy as np
import pytest

import mlc
from tests.gpu.targets import compile_for

SEED = np.random.SeedSequence().entropy

GATHER = """
func.func @main(%d: tensor<{d}xf32>, %i: tensor<{i}x{t}>) -> tensor<{r}xf32> {{
  %g = ml.gather %d, %i {{axis = {axis} : i64}}
    : (tensor<{d}xf32>, tensor<{i}x{t}>) -> tensor<{r}xf32> loc("model.py":7:3)
  func.return %g : tensor<{r}xf32>
}}
"""


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def gather_program(data, indices, axis, dynamic):
    result = np.take(data, indices, axis=axis).shape

    def dims(shape):
        return "x".join("?" if dynamic else str(s) for s in shape)

    element = {"int32": "i32", "int64": "i64"}[indices.dtype.name]
    return GATHER.format(
        d=dims(data.shape), i=dims(indices.shape), t=element, r=dims(result), axis=axis
    )


BAD = [10**9, -(10**12), 2**63 - 1, -(2**63)]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_gather_checks_every_index(rng, target, dynamic, index_dtype):
    data = rng.standard_normal((7, 5)).astype(np.float32)
    indices = rng.integers(-7, 7, size=(3, 4)).astype(index_dtype)
    exe = compile_for(gather_program(data, indices, 0, dynamic), target)
    np.testing.assert_array_equal(exe(data, indices), np.take(data, indices, axis=0))
    info = np.iinfo(index_dtype)
    for bad in [7, -8, *(b for b in BAD if info.min <= b <= info.max), info.max, info.min]:
        wrong = indices.copy()
        wrong[rng.integers(3), rng.integers(4)] = bad
        with pytest.raises(mlc.RuntimeCheckError) as error:
            exe(data, wrong)
        message = str(error.value)
        assert message.startswith("model.py:7:3: error: 'ml.gather' op index"), message
        assert f"index {bad} is out of range" in message
    # The compiled function is still right after a failure.
    np.testing.assert_array_equal(exe(data, indices), np.take(data, indices, axis=0))


def test_gather_on_a_dynamic_empty_axis(target):
    data = np.zeros((0, 3), np.float32)
    exe = compile_for(
        gather_program(np.zeros((4, 3), np.float32), np.zeros(2, np.int64), 0, True), target
    )
    assert exe(data, np.zeros(0, np.int64)).shape == (0, 3)
    with pytest.raises(mlc.RuntimeCheckError, match="index 0 is out of range"):
        exe(data, np.zeros(2, np.int64))

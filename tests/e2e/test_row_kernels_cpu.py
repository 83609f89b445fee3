"""
Softmax with per-lane running states (a static last axis that is a multiple of 8)
against numpy in float64, on fresh random inputs.

Each lane keeps its own running max and sum, and the lanes of a row are merged at the
end; so every edge case of the online recurrence is exercised inside one lane, across
lanes, and in the merge: masked (-inf) entries, whole lanes or rows of them, NaN,
large magnitudes, the row's max in any lane.
"""

import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

import mlc
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.normalization import softmax_lanes
from tests.e2e.programs import ELEMENT_TYPES, program, random_array

SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def reference(x: np.ndarray) -> np.ndarray:
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_exe(shape: tuple[int, ...], dtype: str, dynamic_rows: bool = False):
    """Softmax over the last axis; `dynamic_rows` makes every other dim `?`."""
    dims = [DYNAMIC_INDEX if dynamic_rows else d for d in shape[:-1]] + [shape[-1]]
    arg = TensorType(ELEMENT_TYPES[dtype], dims)
    return mlc.compile(program([arg], lambda x: ml.SoftmaxOp(x, axis=-1)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shape", [(64,), (1, 16), (3, 24), (5, 32), (7, 48), (2, 3, 64), (4, 136), (33, 256)]
)
def test_lanes_match_numpy(rng, shape, dtype):
    exe = softmax_exe(shape, dtype)
    x = random_array(rng, shape, dtype, -20, 20)
    np.testing.assert_allclose(exe(x), reference(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("rows", [1, 2, 9])
def test_dynamic_rows(rng, rows):
    exe = softmax_exe((rows, 40), "float32", dynamic_rows=True)
    for n in (rows, rows + 3):
        x = random_array(rng, (n, 40), "float32", -20, 20)
        np.testing.assert_allclose(exe(x), reference(x), rtol=1e-5, atol=1e-7)


def test_the_lane_path_is_taken():
    """The shapes above take lanes; these keep the scalar running state."""
    assert softmax_lanes_of((3, 24)) == 8
    assert softmax_lanes_of((3, 32)) == 16
    assert softmax_lanes_of((3, 12)) is None  # under two vectors of 8
    assert softmax_lanes_of((3, 20)) is None  # not a multiple of 8


def softmax_lanes_of(shape: tuple[int, ...]) -> int | None:
    module = program(
        [TensorType(ELEMENT_TYPES["float32"], list(shape))], lambda x: ml.SoftmaxOp(x, axis=-1)
    )
    (op,) = [o for o in module.walk() if isinstance(o, ml.SoftmaxOp)]
    return softmax_lanes(op.x, len(shape) - 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_magnitudes_with_the_max_in_each_lane(rng, dtype):
    exe = softmax_exe((16, 32), dtype)
    x = random_array(rng, (16, 32), dtype, -1e4, 1e4)
    for row in range(16):
        x[row, (row * 3) % 32] = 3e4  # far above the rest, in a different lane per row
    got = exe(x)
    np.testing.assert_allclose(got, reference(x), rtol=1e-5, atol=1e-7)
    assert np.all(np.isfinite(got))


def test_masked_entries_lanes_and_rows(rng):
    exe = softmax_exe((6, 32), "float32")
    x = random_array(rng, (6, 32), "float32", -5, 5)
    x[0, :5] = -np.inf  # masked before the first finite entry of some lanes
    x[1, 0::16] = -np.inf  # lane 0 entirely masked
    x[2, 3:32:16] = -np.inf
    x[2, 7] = -np.inf
    x[3, 16:] = -np.inf  # the second half of the row
    x[4, :31] = -np.inf  # one finite entry, in the last lane
    got = exe(x)
    np.testing.assert_allclose(got[:5], reference(x[:5]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[4, 31], 1.0)
    x[5, :] = -np.inf  # a fully masked row is NaN, as in numpy
    assert np.isnan(exe(x)[5]).all()


def test_nan_poisons_its_row_only(rng):
    exe = softmax_exe((3, 48), "float32")
    x = random_array(rng, (3, 48), "float32")
    x[1, 29] = np.nan
    got = exe(x)
    assert np.isnan(got[1]).all()
    np.testing.assert_allclose(got[[0, 2]], reference(x[[0, 2]]), rtol=1e-5, atol=1e-7)

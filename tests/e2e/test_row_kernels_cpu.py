"""
Softmax as a max pass, one `exp` per element stored with the row's sum, and a scaling
pass, against numpy in float64 on fresh random inputs, on the CPU and on `cuda` (whose
softmax is the online form).

The shapes cover rows shorter than a vector, prime row lengths (a vector loop with a
scalar tail), row counts that do not divide among the threads or into the row blocks,
dynamic rows and a softmax along a leading axis; the edge cases are masked (-inf)
entries, fully masked rows, NaN, infinities and magnitudes where a naive `exp`
overflows.
"""

import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

from mlc.dialects import ml
from tests.e2e.programs import ELEMENT_TYPES, program, random_array
from tests.gpu.targets import compile_for

SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def reference(x: np.ndarray, axis: int = -1) -> np.ndarray:
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_exe(
    shape: tuple[int, ...], dtype: str, target: str, axis: int = -1, dynamic_rows: bool = False
):
    """Softmax over `axis`; `dynamic_rows` makes every dim but the last `?`."""
    dims = [DYNAMIC_INDEX if dynamic_rows else d for d in shape[:-1]] + [shape[-1]]
    arg = TensorType(ELEMENT_TYPES[dtype], dims)
    return compile_for(program([arg], lambda x: ml.SoftmaxOp(x, axis=axis)), target)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shape", [(5,), (1, 16), (3, 7), (7, 13), (2, 3, 64), (4, 131), (33, 256), (37, 1031)]
)
def test_matches_numpy(rng, shape, dtype, target):
    exe = softmax_exe(shape, dtype, target)
    x = random_array(rng, shape, dtype, -20, 20)
    got = exe(x)
    np.testing.assert_allclose(got, reference(x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize(("shape", "axis"), [((17, 5), 0), ((3, 11, 4), 1)])
def test_along_a_leading_axis(rng, shape, axis, target):
    exe = softmax_exe(shape, "float32", target, axis=axis)
    x = random_array(rng, shape, "float32", -20, 20)
    np.testing.assert_allclose(exe(x), reference(x, axis), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("rows", [1, 2, 9])
def test_dynamic_rows(rng, rows, target):
    exe = softmax_exe((rows, 40), "float32", target, dynamic_rows=True)
    for n in (rows, rows + 3, 67):
        x = random_array(rng, (n, 40), "float32", -20, 20)
        np.testing.assert_allclose(exe(x), reference(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_magnitudes(rng, dtype, target):
    """exp(x) alone overflows here; exp(x - max) never does."""
    exe = softmax_exe((16, 37), dtype, target)
    x = random_array(rng, (16, 37), dtype, -1e4, 1e4)
    for row in range(16):
        x[row, (row * 3) % 37] = 3e4  # far above the rest, somewhere else in each row
    got = exe(x)
    np.testing.assert_allclose(got, reference(x), rtol=1e-5, atol=1e-7)
    assert np.all(np.isfinite(got))


def test_masked_entries_and_rows(rng, target):
    exe = softmax_exe((6, 35), "float32", target)
    x = random_array(rng, (6, 35), "float32", -5, 5)
    x[0, :5] = -np.inf  # masked before the first finite entry
    x[1, 0::8] = -np.inf  # one lane of every vector
    x[2, 17:] = -np.inf  # the second half, vector loop and tail
    x[3, :34] = -np.inf  # one finite entry, in the scalar tail
    x[4, 3] = np.float32(-3.4e38)  # finite but as low as f32 goes
    got = exe(x)
    np.testing.assert_allclose(got[:5], reference(x[:5]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[3, 34], 1.0)
    assert np.all(got[:5][np.isneginf(x[:5])] == 0)
    x[5, :] = -np.inf  # a fully masked row is NaN, as in numpy
    assert np.isnan(exe(x)[5]).all()


def test_nan_and_infinity_poison_their_row_only(rng, target):
    exe = softmax_exe((4, 48), "float32", target)
    x = random_array(rng, (4, 48), "float32")
    x[1, 29] = np.nan
    x[2, 3] = np.inf
    with np.errstate(invalid="ignore"):
        expected = reference(x)
    got = exe(x)
    assert np.isnan(got[1]).all()
    np.testing.assert_array_equal(np.isnan(got[2]), np.isnan(expected[2]))
    np.testing.assert_allclose(got[[0, 3]], reference(x[[0, 3]]), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(3, 7), (33, 256), (5, 131)])
def test_online_form_matches_numpy(rng, monkeypatch, shape):
    # The GPU pipeline's form (`online-softmax`), compiled here for the CPU: the same
    # results, masked entries and fully masked rows included.
    from mlc import pipeline

    online = pipeline.TARGET_STAGE_TEXT["gpu"]["linalg"]
    assert "online-softmax=true" in online
    monkeypatch.setitem(pipeline.STAGES, "linalg", online)
    exe = softmax_exe(shape, "float32", "cpu")
    x = random_array(rng, shape, "float32", -20, 20)
    x[0, : shape[1] // 2] = -np.inf  # masked before the first finite entry
    got = exe(x)
    np.testing.assert_allclose(got, reference(x), rtol=1e-5, atol=1e-7)
    x[-1, :] = -np.inf
    x[1, shape[1] // 3] = np.inf  # +inf poisons its row, as in numpy
    got = exe(x)
    assert np.isnan(got[-1]).all() and np.isnan(got[1]).all()
    np.testing.assert_allclose(got[2:-1], reference(x[2:-1]), rtol=1e-5, atol=1e-7)

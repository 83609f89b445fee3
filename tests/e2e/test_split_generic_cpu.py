"""
An elementwise generic split among two threads over a dynamic batch (`linalg-tile`'s
split; one block, a batch of 1, runs on the caller, its output buffer marked `noalias`
in the outlined body): the same bits as one thread and as numpy at batches of 1 (one
block), 2 and 5 (blocks), and the same on the program built for one thread.
"""

import numpy as np
import pytest

from tests.e2e.test_tiled_cpu import build

SOURCE = """
func.func @f(%x: tensor<?x64x7x7xf32>, %y: tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32> {
  %s = ml.add %x, %y : (tensor<?x64x7x7xf32>, tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32>
  %r = ml.relu %s : (tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32>
  func.return %r : tensor<?x64x7x7xf32>
}
"""


@pytest.mark.parametrize("built_for", ["1", "2"])
def test_split_generic_matches_numpy_at_every_batch(
    monkeypatch: pytest.MonkeyPatch, built_for: str
):
    monkeypatch.setenv("MLC_NUM_THREADS", built_for)
    f = build(SOURCE)
    rng = np.random.default_rng()
    for batch in (1, 2, 5):
        x, y = (rng.standard_normal((batch, 64, 7, 7)).astype(np.float32) for _ in range(2))
        results = []
        for threads in ("1", "2"):
            monkeypatch.setenv("MLC_NUM_THREADS", threads)
            results.append(f(x, y))
        np.testing.assert_array_equal(results[0], np.maximum(x + y, 0), err_msg=str(batch))
        np.testing.assert_array_equal(results[0], results[1], err_msg=str(batch))


HALF, WHOLE = "tensor<?x16x8x8xf32>", "tensor<?x32x8x8xf32>"
CONCAT = f"""
func.func @f(%x: {HALF}, %b: tensor<16x1x1xf32>) -> {WHOLE} {{
  %s = ml.add %x, %b : ({HALF}, tensor<16x1x1xf32>) -> {HALF}
  %r = ml.relu %s : ({HALF}) -> {HALF}
  %c = ml.concat %r, %x {{axis = 1 : i64}} : ({HALF}, {HALF}) -> {WHOLE}
  func.return %c : {WHOLE}
}}
"""


def test_bias_and_concat_blocks_match_numpy(monkeypatch: pytest.MonkeyPatch):
    """A bias read next to a `noalias` output, and the halves of a concatenation (two
    views of one buffer, not marked), at batches of one block and of several."""
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    f = build(CONCAT)
    rng = np.random.default_rng()
    b = rng.standard_normal((16, 1, 1)).astype(np.float32)
    for batch in (1, 3):
        x = rng.standard_normal((batch, 16, 8, 8)).astype(np.float32)
        want = np.concatenate([np.maximum(x + b, 0), x], axis=1)
        np.testing.assert_array_equal(f(x, b), want, err_msg=str(batch))

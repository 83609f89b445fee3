"""
An elementwise generic split among two threads over a dynamic batch (`linalg-tile`'s
split, which runs the generic unsplit when there is one block): the same bits as one
thread and as numpy at batches of 1 (unsplit), 2 and 5 (blocks), and the same on the
program built for one thread.
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

"""
The traced sparse MoE layer of `examples/sparse_moe.py` (`ops.top_k` routing, capacity
slots from a `cumsum`, `take` / `put_along_axis` / `scatter_add` dispatch, the experts as
one batched matmul) against numpy, with tokens dropped past an expert's capacity (the
default capacity, every token, runs the same code; `python examples/sparse_moe.py`
checks it).
"""

import sys
from pathlib import Path

import numpy as np

from tests.gpu.targets import jit_for

sys.path.insert(0, str(Path(__file__).parents[2] / "examples"))
import sparse_moe


def test_traced_sparse_moe_matches_numpy(target):
    capacity = 3
    w = sparse_moe.random_weights(12, 20, 5, seed=3)
    layer = jit_for(target)(lambda x, r, u, d: sparse_moe.routed(x, r, u, d, 2, capacity))
    rng = np.random.default_rng()
    x = rng.standard_normal((11, 12)).astype(np.float32)
    got = layer(x, *sparse_moe.stacked(w))
    want = sparse_moe.reference(x, w, 2, capacity)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

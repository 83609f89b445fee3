"""
An MLP written in Python with `mlc.ops` and compiled by `mlc.jit`.

The batch dim is bucketed (`dynamic="bucket"`): batches of 33 to 64 rows share one
compilation (padded to 64, results sliced back), while the feature dims, which the
matmuls contract, stay exact. Run it: `python examples/mlp_jit.py`.
"""

import time

import numpy as np

import mlc
from mlc import ops


@mlc.jit(dynamic="bucket")
def mlp(x, w1, b1, w2, b2):
    hidden = ops.relu(x @ w1 + b1)
    return ops.softmax(hidden @ w2 + b2, axis=-1)


def mlp_numpy(x, w1, b1, w2, b2):
    logits = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main() -> None:
    rng = np.random.default_rng(0)
    weights = [
        (rng.standard_normal((784, 128)) * 0.05).astype(np.float32),
        rng.standard_normal(128).astype(np.float32),
        (rng.standard_normal((128, 10)) * 0.1).astype(np.float32),
        rng.standard_normal(10).astype(np.float32),
    ]
    for batch in (40, 50, 64, 33):
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        got, want = mlp(x, *weights), mlp_numpy(x, *weights)
        error = float(np.abs(got - want).max())
        print(f"batch {batch:3d}: result {got.shape}, max |mlc - numpy| {error:.2e}")
        assert got.shape == want.shape and error < 1e-5
    print("cache:", mlp.cache_info())
    x = rng.standard_normal((64, 784)).astype(np.float32)
    times = {"mlc.jit": [], "numpy": []}
    for _ in range(7):  # alternate, so both see the same machine noise
        for name, fn in (("mlc.jit", mlp), ("numpy", mlp_numpy)):
            start = time.perf_counter()
            fn(x, *weights)
            times[name].append(time.perf_counter() - start)
    t_mlc, t_np = (float(np.median(times[k])) * 1e3 for k in ("mlc.jit", "numpy"))
    print(f"batch 64: mlc.jit {t_mlc:.3f} ms, numpy {t_np:.3f} ms (median of 7)")


if __name__ == "__main__":
    main()

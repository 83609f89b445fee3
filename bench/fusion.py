"""
Fusion and row kernels against numpy: the elementwise chain and softmax.

- the chain `relu(a * b + c) * 0.5 + d` over 16M f32 (GB/s counts the 5 arrays moved);
- softmax over the rows of a 4096 x 4096 f32 matrix (numpy: the stable
  `e = exp(x - max); e / sum(e)`).

mlc and numpy run in one process, alternating, medians of `ROUNDS` runs each; the ratio
is numpy's time over mlc's (above 1: mlc is faster). Single-threaded code on both
sides unless the runtime says otherwise.

Run: `.venv/bin/python bench/fusion.py [--rounds N]`; paste the table into
bench/results/fusion.md.
"""

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import mlc

N = 16 * 1024 * 1024
ROWS = COLS = 4096

CHAIN = f"""
func.func @main(%a: tensor<{N}xf32>, %b: tensor<{N}xf32>, %c: tensor<{N}xf32>,
                %d: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %h = arith.constant dense<0.5> : tensor<f32>
  %0 = ml.mul %a, %b : (tensor<{N}xf32>, tensor<{N}xf32>) -> tensor<{N}xf32>
  %1 = ml.add %0, %c : (tensor<{N}xf32>, tensor<{N}xf32>) -> tensor<{N}xf32>
  %2 = ml.relu %1 : (tensor<{N}xf32>) -> tensor<{N}xf32>
  %3 = ml.mul %2, %h : (tensor<{N}xf32>, tensor<f32>) -> tensor<{N}xf32>
  %4 = ml.add %3, %d : (tensor<{N}xf32>, tensor<{N}xf32>) -> tensor<{N}xf32>
  func.return %4 : tensor<{N}xf32>
}}
"""

SOFTMAX = f"""
func.func @main(%x: tensor<{ROWS}x{COLS}xf32>) -> tensor<{ROWS}x{COLS}xf32> {{
  %y = ml.softmax %x {{axis = -1 : i64}} : (tensor<{ROWS}x{COLS}xf32>) -> tensor<{ROWS}x{COLS}xf32>
  func.return %y : tensor<{ROWS}x{COLS}xf32>
}}
"""


def numpy_chain(a, b, c, d):
    return np.maximum(a * b + c, np.float32(0)) * np.float32(0.5) + d


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def alternate(systems: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds per system, running them in turn `rounds` times."""
    times: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(rounds):
        for name, run in systems.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def bench(name: str, src: str, reference, inputs, moved_bytes: int, rounds: int) -> None:
    start = time.perf_counter()
    exe = mlc.compile(src)
    compile_s = time.perf_counter() - start
    np.testing.assert_allclose(exe(*inputs), reference(*inputs), rtol=1e-4, atol=1e-7)
    t = alternate({"mlc": lambda: exe(*inputs), "numpy": lambda: reference(*inputs)}, rounds)
    gbs = moved_bytes / t["mlc"] / 1e9
    print(
        f"| {name} | {t['mlc'] * 1e3:.1f} | {t['numpy'] * 1e3:.1f} | "
        f"{t['numpy'] / t['mlc']:.2f}x | {gbs:.1f} | {compile_s:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| kernel | mlc ms | numpy ms | numpy/mlc | mlc GB/s | compile s |")
    print("|---|---|---|---|---|---|")
    chain_in = [rng.standard_normal(N, dtype=np.float32) for _ in range(4)]
    bench("chain 16M f32", CHAIN, numpy_chain, chain_in, 5 * 4 * N, args.rounds)
    del chain_in
    x = (rng.standard_normal((ROWS, COLS), dtype=np.float32) * 4).astype(np.float32)
    bench("softmax 4096x4096 f32", SOFTMAX, numpy_softmax, [x], 2 * 4 * ROWS * COLS, args.rounds)


if __name__ == "__main__":
    main()

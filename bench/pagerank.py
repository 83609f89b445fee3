"""
PageRank by power iteration (the DAPHNE example), N = 2048, 10 iterations:
`p <- alpha * (G @ p) + (1 - alpha) * (e @ u @ p)`.

Three contenders in one process, timed alternately, medians of several rounds:
- numpy written naively, left to right: `(e @ u) @ p` builds an N x N outer product
  every iteration;
- numpy written optimally by hand: `e @ (u @ p)`, `1 - alpha` once;
- mlc compiling the naive program (`examples/pagerank.mlir` at this size): the graph
  passes reorder the chain and hoist what does not change.

Run: `.venv/bin/python bench/pagerank.py`; results go to bench/results/pagerank.md.
"""

import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

import mlc

N, ITERATIONS, ROUNDS = 2048, 10, 9
HERE = Path(__file__).parent


def program_text() -> str:
    text = (HERE.parent / "examples" / "pagerank.mlir").read_text()
    text = text.replace("1000", str(N))
    return text.replace(
        "%hi = arith.constant 20 : index", f"%hi = arith.constant {ITERATIONS} : index"
    )


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def naive(G, p, e, u):
    alpha = np.float32(0.85)
    for _ in range(ITERATIONS):
        p = alpha * (G @ p) + (np.float32(1) - alpha) * ((e @ u) @ p)
    return p


def optimal(G, p, e, u):
    alpha = np.float32(0.85)
    beta = np.float32(1) - alpha
    for _ in range(ITERATIONS):
        p = alpha * (G @ p) + beta * (e @ (u @ p))
    return p


def main() -> int:
    rng = np.random.default_rng(0)
    G = rng.random((N, N), dtype=np.float32)
    G /= G.sum(axis=0, keepdims=True)
    args = [
        G,
        np.full((N, 1), 1 / N, np.float32),
        np.ones((N, 1), np.float32),
        np.full((1, N), 1 / N, np.float32),
    ]
    start = time.perf_counter()
    exe = mlc.compile(program_text())
    compile_s = time.perf_counter() - start
    contenders = {"numpy naive": naive, "numpy optimal": optimal, "mlc": lambda *a: exe(*a)}
    want = optimal(*args)
    for name, fn in contenders.items():
        np.testing.assert_allclose(fn(*args), want, rtol=1e-4, err_msg=name)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(ROUNDS):
        for name, fn in contenders.items():
            t = time.perf_counter()
            fn(*args)
            times[name].append(time.perf_counter() - t)
    medians = {name: float(np.median(ts)) for name, ts in times.items()}
    machine = (
        f"{cpu_name()} ({os.cpu_count()} cores), "
        f"numpy {np.__version__}, python {platform.python_version()}"
    )
    lines = [
        f"## PageRank N={N}, {ITERATIONS} iterations ({date.today()})",
        "",
        f"Machine: {machine}. mlc compile time {compile_s:.2f} s. Medians of {ROUNDS} "
        "alternating rounds.",
        "",
        "| contender | median ms | vs mlc |",
        "|---|---|---|",
    ]
    for name, m in medians.items():
        lines.append(f"| {name} | {m * 1e3:.2f} | {m / medians['mlc']:.2f}x |")
    report = "\n".join(lines) + "\n"
    print(report)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    with open(results / "pagerank.md", "a") as out:
        out.write(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

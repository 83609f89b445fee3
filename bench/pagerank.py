"""
PageRank by power iteration (the DAPHNE example), N = 2048, 10 iterations:
`p <- alpha * (G @ p) + (1 - alpha) * (e @ u @ p)`, on the CPU suite's harness.

The contenders, timed alternately in one process (bench/cpu.py's bursts, medians):
- numpy written naively, left to right: `(e @ u) @ p` builds an N x N outer product
  every iteration;
- numpy written optimally by hand: `e @ (u @ p)`, `1 - alpha` once;
- mlc compiling the naive program (`examples/pagerank.mlir` at this size): the graph
  passes reorder the chain and hoist what does not change.

Thread counts come from the environment, as for any user: `MLC_NUM_THREADS` for mlc,
`OPENBLAS_NUM_THREADS` for numpy's BLAS; the report names both.

    MLC_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/pagerank.py

appends a dated section to bench/results/pagerank.md (`--output -` only prints).
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import cpu
import machine
import workloads

N, ITERATIONS = 2048, 10
RESULTS = Path(__file__).parent / "results" / "pagerank.md"
CONTENDERS = ("numpy naive (as written)", "numpy", "mlc")
NAMES = {"numpy": "numpy optimal (by hand)"}


def threads() -> str:
    def setting(name: str) -> str:
        return os.environ.get(name, "unset (all cores)")

    return (
        f"`MLC_NUM_THREADS` {setting('MLC_NUM_THREADS')}, "
        f"`OPENBLAS_NUM_THREADS` {setting('OPENBLAS_NUM_THREADS')}"
    )


def report(row: cpu.Row, runs: int) -> str:
    mlc = row.median("mlc")
    lines = [
        f"## PageRank N={N}, {ITERATIONS} iterations, {threads()}",
        "",
        *machine.describe(),
        "",
        f"Medians of calls issued back to back, in at least {runs} alternating rounds "
        "(bench/cpu.py's bursts); a burst's first call, after the other contenders ran, "
        "apart.",
        "",
        "| contender | median ms | vs mlc | first call ms |",
        "|---|---|---|---|",
    ]
    for name in CONTENDERS:
        median, first = row.median(name), row.first_median(name)
        if median is None or mlc is None or first is None:
            lines.append(f"| {NAMES.get(name, name)} | - | {row.missing.get(name, '')} | |")
            continue
        lines.append(
            f"| {NAMES.get(name, name)} | {median * 1e3:.2f} | {median / mlc:.2f}x | "
            f"{first * 1e3:.2f} |"
        )
    cold, cached = row.compile_s.get("mlc", (None, None))
    if cold is not None:
        cached_text = "" if cached is None else f", {cached:.2f} s from the disk cache"
        lines += ["", f"mlc compile: {cold:.2f} s cold{cached_text}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of timing")
    parser.add_argument("--min-runs", type=int, default=9)
    parser.add_argument("--max-runs", type=int, default=200)
    parser.add_argument("--output", default=str(RESULTS), help="file to append to; - to print")
    args = parser.parse_args(argv)
    row = cpu.prepare(workloads.pagerank(N, ITERATIONS), quick=True)
    if "mlc" in row.missing:
        print(f"mlc: {row.missing['mlc']}", file=sys.stderr)
        return 1
    cpu.time_row(row, args.budget, args.min_runs, args.max_runs)
    text = report(row, args.min_runs)
    cpu.publish(text, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())

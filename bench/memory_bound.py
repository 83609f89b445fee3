"""
The memory-bound kernels (the elementwise chain, softmax, layer norm) with and without
fresh result pages, to tell the kernels' own speed from the cost of page faults.

mlc returns every result in a buffer it allocates on the call; a 64 MB buffer comes
from `mmap`, so each call faults its pages in afresh (about 10 GB/s here), while numpy
writes into buffers allocated once. Run twice in one process: first as mlc ships, then
with glibc told (`mallopt`) to serve large blocks from its heap and keep them when
freed, so a result reuses the pages of the one freed before: what reusing result
buffers would give. Each phase alternates mlc and numpy (bench/cpu.py's loop).

    .venv/bin/python bench/memory_bound.py        # appends to bench/results/memory-bound.md
"""

import argparse
import ctypes
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import cpu
import machine
import systems
import workloads

RESULTS = Path(__file__).parent / "results" / "memory-bound.md"
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def layer_norm(rows: int, cols: int) -> workloads.Workload:
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal((rows, cols), dtype=np.float32),
        rng.standard_normal(cols, dtype=np.float32),
        rng.standard_normal(cols, dtype=np.float32),
    ]
    t, v = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}xf32>"

    def numpy(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        out = np.empty_like(x)
        mean, var = np.empty((rows, 1), np.float32), np.empty((rows, 1), np.float32)

        def run() -> np.ndarray:
            np.mean(x, axis=1, keepdims=True, out=mean)
            np.subtract(x, mean, out=out)
            np.mean(np.square(out), axis=1, keepdims=True, out=var)
            np.add(var, np.float32(1e-5), out=var)
            np.sqrt(var, out=var)
            np.divide(out, var, out=out)
            np.multiply(out, g, out=out)
            return np.add(out, b, out=out)

        return run

    mlc = f"""func.func @main(%x: {t}, %g: {v}, %b: {v}) -> {t} {{
  %y = ml.layer_norm %x, %g, %b {{axis = -1 : i64, epsilon = 1.0e-5 : f32}} : ({t}, {v}, {v}) -> {t}
  func.return %y : {t}
}}"""
    return workloads.Workload(
        f"layer_norm {rows}x{cols} f32",
        inputs,
        numpy,
        lambda: mlc,
        work=2.0 * 4 * rows * cols,
        unit="GB/s",
        tolerance=1e-3,
    )


def phase(items: list[workloads.Workload], budget: float, runs: int) -> list[str]:
    lines = []
    for workload in items:
        mlc = systems.prepare_mlc(workload.mlc(), workload.inputs)
        numpy = systems.prepare_numpy(workload.numpy, workload.inputs)
        tolerance = workload.tolerance
        np.testing.assert_allclose(mlc.result(), numpy.result(), rtol=tolerance, atol=tolerance)
        times = cpu.alternate({"mlc": mlc.run, "numpy": numpy.run}, budget, runs, 10 * runs)
        mine, theirs = (statistics.median(times[s]) for s in ("mlc", "numpy"))
        rate = workload.work / mine / 1e9
        lines.append(
            f"| {workload.name} | {mine * 1e3:.2f} | {theirs * 1e3:.2f} | {theirs / mine:.2f}x "
            f"| {rate:.1f} GB/s |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=5.0, help="seconds of timing per row")
    parser.add_argument("--min-runs", type=int, default=11)
    parser.add_argument("--output", default=str(RESULTS), help="file to append to; - to print")
    args = parser.parse_args(argv)
    items = [workloads.chain(16 * 2**20), workloads.softmax(4096, 4096), layer_norm(4096, 4096)]
    head = "| workload | mlc ms | numpy ms | mlc vs numpy | mlc rate |"
    lines = [
        "## Memory-bound kernels, fresh result pages and reused ones",
        "",
        *machine.describe(),
        "",
        "As mlc ships (a fresh result buffer, its pages faulted in, on every call):",
        "",
        head,
        "|---|---|---|---|---|",
        *phase(items, args.budget, args.min_runs),
    ]
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(M_MMAP_THRESHOLD, 1 << 30)
    libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    lines += [
        "",
        "Result pages reused (glibc serves and keeps large blocks on its heap):",
        "",
        head,
        "|---|---|---|---|---|",
        *phase(items, args.budget, args.min_runs),
    ]
    text = "\n".join(lines) + "\n"
    cpu.publish(text, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())

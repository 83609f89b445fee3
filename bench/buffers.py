"""
What reusing buffers is worth: each workload run by mlc with the buffer cache off
(`mlc.backend.buffers.set_limit(0)`: every result and large temporary is fresh memory,
faulted in page by page) and on (the previous call's memory comes back), alternating in
one process, medians. Each call's result is dropped before the next, as a loop that
consumes its results would.

Run: `.venv/bin/python bench/buffers.py`; the table is appended to
bench/results/buffers.md.
"""

import os
import platform
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import workloads

import mlc
from mlc.backend import buffers

ROUNDS = 11
HERE = Path(__file__).parent
CASES: list[Callable[[], workloads.Workload]] = [
    lambda: workloads.chain(16 * 2**20),
    lambda: workloads.softmax(4096, 4096),
    lambda: workloads.matmul(1024),
    lambda: workloads.onnx_model("MLP 64x784-1024-1024-10 (ONNX)", lambda m: m.mlp()),
    lambda: workloads.onnx_model("ResNet-style CNN, batch 8 (ONNX)", lambda m: m.cnn(batch=8)),
    lambda: workloads.onnx_model(
        "transformer block seq 128, hidden 256, 4 heads (ONNX)",
        lambda m: m.transformer_block(seq=128, hidden=256, heads=4),
    ),
]


def _time(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    result = run()
    elapsed = time.perf_counter() - start
    del result
    return elapsed


def measure(workload: workloads.Workload) -> tuple[float, float]:
    """Median seconds per call with fresh buffers and with reused ones."""
    assert workload.mlc is not None
    exe = mlc.compile(workload.mlc())
    inputs = workload.inputs
    fresh: list[float] = []
    reused: list[float] = []
    for _ in range(ROUNDS):
        buffers.set_limit(0)
        fresh.append(_time(lambda: exe(*inputs)))
        buffers.set_limit(1024)
        _time(lambda: exe(*inputs))  # what this call frees, the next one reuses
        reused.append(_time(lambda: exe(*inputs)))
    return float(np.median(fresh)), float(np.median(reused))


def main() -> int:
    lines = [
        f"## {date.today()}: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "",
        "| workload | fresh buffers, ms | reused buffers, ms | speed-up |",
        "|---|---|---|---|",
    ]
    for make in CASES:
        workload = make()
        fresh, reused = measure(workload)
        lines.append(
            f"| {workload.name} | {fresh * 1e3:.2f} | {reused * 1e3:.2f} | {fresh / reused:.2f}x |"
        )
        print(lines[-1], flush=True)
    buffers.set_limit(buffers.configured_limit() / 2**20)
    with open(HERE / "results" / "buffers.md", "a") as out:
        out.write("\n".join(lines) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

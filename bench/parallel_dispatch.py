"""
The cost of one parallel loop in mlc's runtime: `mlc_parallel_for` on chunks that do
nothing, called back to back from compiled code (no Python between the loops), at 1 and
at 2 threads, alternating, medians of several rounds. What remains is the dispatch
itself: waking the workers, handing out the chunks and joining them.

Run: `.venv/bin/python bench/parallel_dispatch.py [label]`; the table is appended to
bench/results/parallel-dispatch.md.
"""

import ctypes
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

from mlc.backend.jit import JITModule

LOOPS, ROUNDS, TRIP_COUNT = 2000, 15, 1024
HERE = Path(__file__).parent

IR = """
declare void @mlc_parallel_for(ptr, i64, i64, ptr, ptr)

define internal void @empty(i64 %lo, i64 %hi, ptr %ctx) {
  ret void
}

define void @loops(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  call void @mlc_parallel_for(ptr @empty, i64 0, i64 TRIP, ptr null, ptr null)
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
""".replace("TRIP", str(TRIP_COUNT))


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "current"
    loops = JITModule(IR).scalar_function("loops", [ctypes.c_int64], None)
    loops(10)  # starts the workers
    times: dict[str, list[float]] = {"1": [], "2": []}
    for _ in range(ROUNDS):
        for threads in times:
            os.environ["MLC_NUM_THREADS"] = threads
            start = time.perf_counter()
            loops(LOOPS)
            times[threads].append((time.perf_counter() - start) / LOOPS)
    medians = {threads: float(np.median(ts)) * 1e6 for threads, ts in times.items()}
    report = (
        f"| {date.today()} | {label} | {platform.machine()}, {os.cpu_count()} cores "
        f"| {medians['1']:.2f} | {medians['2']:.2f} |\n"
    )
    print("| date | runtime | machine | us per loop, 1 thread | us per loop, 2 threads |")
    print(report, end="")
    with open(HERE / "results" / "parallel-dispatch.md", "a") as out:
        out.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())

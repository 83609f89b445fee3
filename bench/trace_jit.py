"""
What `mlc.jit` costs and saves, measured in one process (timed alternately, medians):

1. dispatch: a jitted call (guards, variant lookup, argument checks) against calling
   the compiled `Executable` directly and against numpy, on a tiny program;
2. graph breaks: conjugate gradient with the loop in the program (`ops.while_loop`)
   against the same algorithm as a Python loop split at every test;
3. shapes: 24 calls with random batch sizes in 1..64 under `dynamic=False`, `True` and
   `"bucket"`: compilations, total time of the 24 first calls, and the steady-state
   time of a batch-37 call.

Run: `.venv/bin/python bench/trace_jit.py`; results go to bench/results/trace-jit.md.
"""

import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

import mlc
from mlc import ops

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "examples"))
sys.path.insert(0, str(HERE))

from cpu import alternate  # noqa: E402
from solver import cg_loop, cg_python, spd_system  # noqa: E402


def medians(*fns, rounds: int = 15) -> list[float]:
    """The median ms of each function, timed alternately (bench/cpu.py's loop)."""
    times = alternate({str(i): fn for i, fn in enumerate(fns)}, 0.0, rounds, rounds)
    return [statistics.median(t) * 1e3 for t in times.values()]


def dispatch() -> list[str]:
    def tiny(x, y):
        return x * y + 1.0

    x, y = np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)
    jitted = mlc.jit(tiny)
    jitted(x, y)
    exe = mlc.compile(mlc.trace(tiny, x, y))
    t_jit, t_exe, t_np = medians(
        lambda: jitted(x, y), lambda: exe(x, y), lambda: tiny(x, y), rounds=201
    )
    return [
        "| call | median us |",
        "|---|---|",
        f"| mlc.jit (guards + lookup + call) | {t_jit * 1e3:.1f} |",
        f"| compiled Executable | {t_exe * 1e3:.1f} |",
        f"| numpy | {t_np * 1e3:.1f} |",
    ]


def breaks() -> list[str]:
    a, b = spd_system(np.random.default_rng(0), 64)
    x_loop, steps = cg_loop(a, b)
    x_py, steps_py = cg_python(a, b)
    assert np.allclose(x_loop, x_py) and int(steps) == steps_py
    t_loop, t_py = medians(lambda: cg_loop(a, b), lambda: cg_python(a, b), rounds=9)
    info = cg_python.cache_info()
    return [
        f"CG on a 64x64 SPD system, {steps_py} steps:",
        "",
        "| version | median ms |",
        "|---|---|",
        f"| ops.while_loop (one program) | {t_loop:.2f} |",
        f"| Python loop, {steps_py + 1} graph breaks per call | {t_py:.2f} |",
        "",
        f"cg_python {info}.",
    ]


def shapes() -> list[str]:
    rng = np.random.default_rng(1)
    w1, b1 = rng.standard_normal((32, 64)).astype(np.float32), np.zeros(64, np.float32)
    w2 = rng.standard_normal((64, 8)).astype(np.float32)
    sizes = [int(n) for n in rng.integers(1, 65, 24)]

    def model(x, w1, b1, w2):
        return ops.softmax(ops.relu(x @ w1 + b1) @ w2)

    rows = ["| dynamic | compilations | 24 first calls s | batch-37 call ms |", "|---|---|---|---|"]
    for mode in (False, True, "bucket"):
        f = mlc.jit(model, dynamic=mode, max_variants=64)
        start = time.perf_counter()
        for n in sizes:
            f(rng.standard_normal((n, 32)).astype(np.float32), w1, b1, w2)
        total = time.perf_counter() - start
        x = rng.standard_normal((37, 32)).astype(np.float32)
        f(x, w1, b1, w2)
        (steady,) = medians(lambda f=f: f(x, w1, b1, w2), rounds=51)
        rows.append(f"| {mode} | {f.cache_info().misses} | {total:.1f} | {steady:.3f} |")
    return [f"Batch sizes: {sizes}", "", *rows]


def main() -> int:
    cores = os.cpu_count()
    head = (
        f"## mlc.jit ({date.today()})\n\nMachine: {platform.machine()} ({cores} cores, shared "
        f"with other jobs), numpy {np.__version__}, python {platform.python_version()}.\n"
    )
    report = "\n".join([head, *dispatch(), "", *breaks(), "", *shapes(), ""])
    print(report)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    with open(results / "trace-jit.md", "a") as out:
        out.write(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

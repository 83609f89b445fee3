"""
The Python a compiled call costs around its machine code, on programs whose bodies take
well under a microsecond: two 4x4 arrays added, and eight 4x4 results from eight
arguments. Warm: the same call back to back (the best of 7 rounds of 2000). Cold: each
call right after writing 4 MB, as after a CNN's call whose buffers fill the caches
(median of 300). Both in the calling thread's CPU time (`time.thread_time`), which a
loaded machine's preemption does not inflate. Run once per tree, alternately, to compare:

    PYTHONPATH=. .venv/bin/python bench/call_overhead.py
"""

import statistics
import time
import timeit

import numpy as np

import mlc

TYPE = "tensor<4x4xf32>"


def program(n: int) -> str:
    """`@main` of `n` 4x4 arguments returning each one's sum with the next."""
    args = ", ".join(f"%a{i}: {TYPE}" for i in range(n))
    body = "\n".join(
        f"  %r{i} = ml.add %a{i}, %a{(i + 1) % n} : ({TYPE}, {TYPE}) -> {TYPE}" for i in range(n)
    )
    results = ", ".join(f"%r{i}" for i in range(n))
    types = ", ".join([TYPE] * n)
    signature = f"func.func @main({args}) -> ({types})"
    return f"{signature} {{\n{body}\n  func.return {results} : {types}\n}}\n"


def measure(n: int) -> tuple[float, float]:
    """Warm and cold microseconds a call of `program(n)`."""
    exe = mlc.compile(program(n))
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((4, 4)).astype(np.float32) for _ in range(n)]
    call = lambda: exe(*args)  # noqa: E731
    for _ in range(100):
        call()
    warm = min(timeit.repeat(call, number=2000, repeat=7, timer=time.thread_time)) / 2000
    evictor = np.zeros(1 << 20, np.float32)
    cold = []
    for _ in range(300):
        evictor[:] = 1.0
        start = time.thread_time()
        call()
        cold.append(time.thread_time() - start)
    return warm * 1e6, statistics.median(cold) * 1e6


def main() -> None:
    for n, name in ((2, "add of two 4x4"), (8, "8 arguments, 8 results")):
        warm, cold = measure(n)
        print(f"{name:24s} warm {warm:6.2f} us   cold {cold:6.1f} us")


if __name__ == "__main__":
    main()

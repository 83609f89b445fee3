"""
The thread pool behind `scf.parallel`: `mlc_parallel_for(chunk, lo, hi, ctx)`.

`convert-to-llvm` outlines the body of an outermost parallel loop into a chunk function
`chunk(lo, hi, ctx)` that runs iterations `[lo, hi)` (mlc.lowering.convert_to_llvm.
parallel), and calls `mlc_parallel_for` when the loop has enough work. That symbol is a
ctypes callback registered with LLVM before any module is JIT-compiled: it splits
`[lo, hi)` into one contiguous range per thread (so each thread touches one block of
rows), runs the first on the calling thread and the others on a pool, and returns when
all are done. Each chunk is called through ctypes, which releases the GIL while machine
code runs, so the chunks run on all cores.

Threads: `mlc.tiling_model.thread_count()` (`MLC_NUM_THREADS`, else the cores this
process may run on), read at every loop. A loop reached from a pool thread (a compiled
function called from a worker) runs serially, so a pool thread never waits on its own
pool. The split depends only on the range and the thread count, and every iteration is
computed by the same code whichever thread runs it, so results do not depend on the
number of threads.
"""

import ctypes
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import llvmlite.binding as llvm

from mlc.tiling_model import thread_count

SYMBOL = "mlc_parallel_for"  # as mlc.lowering.convert_to_llvm.parallel calls it

_CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)

_local = threading.local()
_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def split_range(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    """`[lo, hi)` as at most `parts` contiguous, non-empty ranges of near-equal length."""
    count = max(0, hi - lo)
    parts = max(1, min(parts, count))
    base, extra = divmod(count, parts)
    ranges: list[tuple[int, int]] = []
    start = lo
    for k in range(parts):
        end = start + base + (1 if k < extra else 0)
        if end > start:
            ranges.append((start, end))
        start = end
    return ranges


def _pool(workers: int) -> ThreadPoolExecutor:
    with _pools_lock:
        if workers not in _pools:
            _pools[workers] = ThreadPoolExecutor(workers, "mlc-worker", _mark_worker)
        return _pools[workers]


def _mark_worker() -> None:
    _local.worker = True


@cache
def _chunk(address: int) -> "ctypes._CFuncPtr":  # pyright: ignore[reportPrivateUsage]
    return _CHUNK(address)


def parallel_for(chunk: int, lo: int, hi: int, context: int) -> None:
    """Run `chunk(a, b, context)` over a split of `[lo, hi)` on the thread pool."""
    function = _chunk(chunk)
    threads = 1 if getattr(_local, "worker", False) else _threads()
    ranges = split_range(lo, hi, threads)
    if len(ranges) <= 1:
        if hi > lo:
            function(lo, hi, context)
        return
    pool = _pool(len(ranges) - 1)
    futures = [pool.submit(function, a, b, context) for a, b in ranges[1:]]
    function(*ranges[0], context)
    for future in futures:
        future.result()


def _threads() -> int:
    """`thread_count()`, falling back to the cores on a bad `MLC_NUM_THREADS` (with a
    warning): an exception cannot leave this callback, so the loop must still run."""
    try:
        return thread_count()
    except ValueError as error:
        warnings.warn(f"{error}; using all cores", RuntimeWarning, stacklevel=1)
        return len(os.sched_getaffinity(0))


_entry = _ENTRY(parallel_for)  # alive for the process: compiled code holds its address


@cache
def install() -> None:
    """Make `mlc_parallel_for` visible to code the JIT compiles (once per process)."""
    llvm.add_symbol(SYMBOL, ctypes.cast(_entry, ctypes.c_void_p).value)

import ctypes
import os
import subprocess
import sys
import threading
import time

import pytest

from mlc.backend import parallel


def _recording_chunk(delay: float = 0.0):
    """A C-callable chunk that records (lo, hi, thread, context), optionally working a while."""
    calls: list[tuple[int, int, int, int]] = []
    lock = threading.Lock()

    def chunk(lo: int, hi: int, context: int | None) -> None:
        with lock:
            calls.append((lo, hi, threading.get_ident(), context or 0))
        if delay:
            time.sleep(delay)

    callback = parallel._CHUNK(chunk)  # pyright: ignore[reportPrivateUsage]
    return callback, calls


def _address(callback: object) -> int:
    return ctypes.cast(callback, ctypes.c_void_p).value or 0


@pytest.mark.parametrize(
    ("lo", "hi", "threads", "expected"),
    [
        (0, 10, 2, [(0, 5), (5, 10)]),
        (0, 10, 3, [(0, 4), (4, 7), (7, 10)]),
        (0, 100, 3, [(0, 34), (34, 67), (67, 100)]),
        (3, 5, 8, [(3, 4), (4, 5)]),
        (-7, 2, 4, [(-7, -4), (-4, -2), (-2, 0), (0, 2)]),
        (0, 7, 1, [(0, 7)]),
    ],
)
def test_one_contiguous_part_per_thread(
    monkeypatch: pytest.MonkeyPatch, lo: int, hi: int, threads: int, expected: list
):
    monkeypatch.setenv("MLC_NUM_THREADS", str(threads))
    callback, calls = _recording_chunk()
    parallel.parallel_for(_address(callback), lo, hi, 1234)
    assert sorted((a, b) for a, b, _, _ in calls) == expected
    assert {context for *_, context in calls} == {1234}


@pytest.mark.parametrize(("lo", "hi"), [(0, 0), (5, 2)])
def test_empty_range_runs_nothing(monkeypatch: pytest.MonkeyPatch, lo: int, hi: int):
    monkeypatch.setenv("MLC_NUM_THREADS", "4")
    callback, calls = _recording_chunk()
    parallel.parallel_for(_address(callback), lo, hi, 0)
    assert calls == []


def test_parts_run_on_several_threads(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "3")
    callback, calls = _recording_chunk(delay=0.05)  # long enough for every worker to wake
    parallel.parallel_for(_address(callback), 0, 3, 0)
    # the caller claims parts as the workers do: which parts it gets is up to the race
    assert len({thread for _, _, thread, _ in calls}) == 3


def test_one_thread_runs_serially_on_the_caller(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "1")
    callback, calls = _recording_chunk()
    parallel.parallel_for(_address(callback), 5, 9, 0)
    assert [(lo, hi, thread) for lo, hi, thread, _ in calls] == [(5, 9, threading.get_ident())]


@pytest.mark.parametrize("value", ["lots", "0", "-2", "3x", ""])
def test_bad_thread_variable_uses_all_cores(monkeypatch: pytest.MonkeyPatch, value: str):
    monkeypatch.setenv("MLC_NUM_THREADS", value)
    assert parallel.thread_count() == len(os.sched_getaffinity(0))
    callback, calls = _recording_chunk()
    parallel.parallel_for(_address(callback), 0, 10, 0)
    assert sorted((lo, hi) for lo, hi, _, _ in calls)[0][0] == 0
    assert sum(hi - lo for lo, hi, _, _ in calls) == 10


def test_thread_variable_is_read_at_every_loop(monkeypatch: pytest.MonkeyPatch):
    for threads in ("5", "2", "7"):
        monkeypatch.setenv("MLC_NUM_THREADS", threads)
        assert parallel.thread_count() == int(threads)


def test_a_loop_inside_a_chunk_runs_serially(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    inner, inner_calls = _recording_chunk()

    def outer(lo: int, hi: int, _context: int | None) -> None:
        parallel.parallel_for(_address(inner), lo * 10, hi * 10, 0)

    callback = parallel._CHUNK(outer)  # pyright: ignore[reportPrivateUsage]
    parallel.parallel_for(_address(callback), 0, 2, 0)
    ranges = sorted((lo, hi) for lo, hi, _, _ in inner_calls)
    # the pool is busy with the outer loop: each inner loop is one serial call
    assert ranges == [(0, 10), (10, 20)]


def test_loops_from_several_python_threads(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    totals = [0] * 4
    lock = threading.Lock()

    def chunk(lo: int, hi: int, context: int | None) -> None:
        with lock:
            totals[context or 0] += sum(range(lo, hi))

    callback = parallel._CHUNK(chunk)  # pyright: ignore[reportPrivateUsage]

    def caller(index: int) -> None:
        for _ in range(50):
            parallel.parallel_for(_address(callback), 0, 100, index)

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert totals == [50 * sum(range(100))] * 4


_CHILD = """
import ctypes, os, sys, threading
from mlc.backend import parallel
os.environ["MLC_NUM_THREADS"] = "2"
seen = []
chunk = parallel._CHUNK(lambda lo, hi, ctx: seen.append((lo, hi)))
address = ctypes.cast(chunk, ctypes.c_void_p).value
parallel.parallel_for(address, 0, 8, 0)  # starts a worker
{body}
"""


def _run_child(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _CHILD.format(body=body)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_exit_with_running_workers_is_clean():
    result = _run_child("print(sorted(seen))")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[(0, 4), (4, 8)]"
    assert result.stderr == ""


def test_loops_run_in_a_forked_child():
    body = """
pid = os.fork()
if pid == 0:
    seen.clear()
    parallel.parallel_for(address, 0, 8, 0)  # would wait forever on the parent's workers
    os._exit(0 if sorted(seen) == [(0, 4), (4, 8)] else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    result = _run_child(body)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


def test_runtime_ir_without_a_spin_hint_is_valid():
    import llvmlite.binding as llvm

    for machine in ("x86_64", "aarch64", "riscv64"):
        text = parallel.runtime_ir(machine)
        assert "PAUSE" not in text
        if machine != "aarch64":  # inline asm is checked only when compiled for the target
            llvm.parse_assembly(text).verify()

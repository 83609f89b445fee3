"""
The runtime's choice between the pool and the caller alone, from a loop's measured work
(`mlc_parallel_for`'s site counter: ns per iteration times 256, 0 before the first run).
"""

import ctypes
import threading
import time

import pytest

from mlc.backend import parallel
from mlc.tiling_model import DISPATCH_ROUND_TRIP_NS, DISPATCH_VARIABLE, dispatch_round_trip_ns

ITERATIONS = 10


def _chunk(delay: float):
    """A C-callable chunk that records (lo, hi, thread) and sleeps `delay` seconds."""
    calls: list[tuple[int, int, int]] = []
    lock = threading.Lock()

    def chunk(lo: int, hi: int, context: int | None) -> None:
        with lock:
            calls.append((lo, hi, threading.get_ident()))
        time.sleep(delay)

    return parallel._CHUNK(chunk), calls  # pyright: ignore[reportPrivateUsage]


def _run(delay: float, site: ctypes.c_int64) -> list[tuple[int, int, int]]:
    callback, calls = _chunk(delay)
    address = ctypes.cast(callback, ctypes.c_void_p).value or 0
    parallel.parallel_for(address, 0, ITERATIONS, 0, ctypes.addressof(site))
    return calls


def _per_iteration(ns: float) -> int:
    return int(ns * 256)


@pytest.fixture(autouse=True)
def two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLC_NUM_THREADS", "2")


def test_a_loop_not_yet_measured_is_shared_and_measured():
    site = ctypes.c_int64(0)
    calls = _run(0.01, site)
    assert sorted((lo, hi) for lo, hi, _ in calls) == [(0, 5), (5, 10)]
    # both parts' time (2 x 10 ms at least) over 10 iterations
    assert site.value >= _per_iteration(2 * 10e6 / ITERATIONS)


def test_a_loop_measured_small_runs_on_the_caller_and_is_measured_again():
    site = ctypes.c_int64(1)  # 1/256 ns per iteration: far below a round trip
    calls = _run(0.0, site)
    assert calls == [(0, ITERATIONS, threading.get_ident())]
    assert site.value >= 1


def test_a_loop_measured_large_is_shared():
    site = ctypes.c_int64(_per_iteration(10 * DISPATCH_ROUND_TRIP_NS))
    calls = _run(0.0, site)
    assert sorted((lo, hi) for lo, hi, _ in calls) == [(0, 5), (5, 10)]


def test_a_small_loop_that_grew_is_shared_again():
    site = ctypes.c_int64(1)
    assert len(_run(0.02, site)) == 1  # its serial run measures 20 ms
    assert site.value >= _per_iteration(20e6 / ITERATIONS)
    assert len(_run(0.0, site)) == 2


def test_the_choice_is_exact_at_the_round_trip():
    # two threads save half the work: shared from 2 round trips of work on
    below = ctypes.c_int64(_per_iteration(2 * DISPATCH_ROUND_TRIP_NS / ITERATIONS) - 256)
    at = ctypes.c_int64(_per_iteration(2 * DISPATCH_ROUND_TRIP_NS / ITERATIONS))
    assert len(_run(0.0, below)) == 1
    assert len(_run(0.0, at)) == 2


def test_the_round_trip_is_the_tiling_models():
    assert f"mul i64 %parts, {dispatch_round_trip_ns()}\n" in parallel.runtime_ir()


def test_the_round_trip_can_be_set_for_a_host(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(DISPATCH_VARIABLE, "1500")
    assert dispatch_round_trip_ns() == 1500
    assert "mul i64 %parts, 1500\n" in parallel.runtime_ir()


@pytest.mark.parametrize("text", ["", "  "])
def test_an_unset_round_trip_is_the_default(monkeypatch: pytest.MonkeyPatch, text: str):
    monkeypatch.setenv(DISPATCH_VARIABLE, text)
    assert dispatch_round_trip_ns() == DISPATCH_ROUND_TRIP_NS


@pytest.mark.parametrize("text", ["0", "-5", "2us", "1.5"])
def test_a_malformed_round_trip_warns_and_keeps_the_default(
    monkeypatch: pytest.MonkeyPatch, text: str
):
    monkeypatch.setenv(DISPATCH_VARIABLE, text)
    with pytest.warns(UserWarning, match=DISPATCH_VARIABLE):
        assert dispatch_round_trip_ns() == DISPATCH_ROUND_TRIP_NS


def test_an_unmeasured_call_is_always_shared():
    callback, calls = _chunk(0.0)
    address = ctypes.cast(callback, ctypes.c_void_p).value or 0
    parallel.parallel_for(address, 0, ITERATIONS, 0)  # no site: the pool, as before
    assert len(calls) == 2

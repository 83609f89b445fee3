import ctypes
import threading

import pytest

from mlc.backend import parallel


@pytest.mark.parametrize(
    ("lo", "hi", "parts", "expected"),
    [
        (0, 10, 2, [(0, 5), (5, 10)]),
        (0, 10, 3, [(0, 4), (4, 7), (7, 10)]),
        (3, 5, 8, [(3, 4), (4, 5)]),
        (0, 0, 4, []),
        (5, 2, 2, []),
        (0, 7, 1, [(0, 7)]),
    ],
)
def test_split_range(lo: int, hi: int, parts: int, expected: list[tuple[int, int]]):
    assert parallel.split_range(lo, hi, parts) == expected


def _recording_chunk():
    """A C-callable chunk that records (lo, hi, thread) and its context pointer."""
    calls: list[tuple[int, int, int, int]] = []
    lock = threading.Lock()

    def chunk(lo: int, hi: int, context: int | None) -> None:
        with lock:
            calls.append((lo, hi, threading.get_ident(), context or 0))

    callback = parallel._CHUNK(chunk)  # pyright: ignore[reportPrivateUsage]
    return callback, calls


def test_parallel_for_covers_the_range_once_per_thread(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "3")
    callback, calls = _recording_chunk()
    address = ctypes.cast(callback, ctypes.c_void_p).value or 0
    parallel.parallel_for(address, 0, 100, 1234)
    ranges = sorted((lo, hi) for lo, hi, _, _ in calls)
    assert ranges == [(0, 34), (34, 67), (67, 100)]
    assert {context for *_, context in calls} == {1234}
    # the caller runs the first range and the pool the others (a fast pool thread may
    # take two of them)
    threads = {thread for _, _, thread, _ in calls}
    assert threading.get_ident() in threads and len(threads) >= 2


def test_parallel_for_is_serial_with_one_thread(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "1")
    callback, calls = _recording_chunk()
    parallel.parallel_for(ctypes.cast(callback, ctypes.c_void_p).value or 0, 5, 9, 0)
    assert [(lo, hi) for lo, hi, _, _ in calls] == [(5, 9)]
    assert calls[0][2] == threading.get_ident()


def test_bad_thread_variable_warns_and_still_runs(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "lots")
    callback, calls = _recording_chunk()
    with pytest.warns(RuntimeWarning, match="MLC_NUM_THREADS"):
        parallel.parallel_for(ctypes.cast(callback, ctypes.c_void_p).value or 0, 0, 10, 0)
    assert sum(hi - lo for lo, hi, _, _ in calls) == 10

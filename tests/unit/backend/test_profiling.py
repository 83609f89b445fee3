"""The native timers of profiled programs: totals, counts, the event log and its bound."""

import ctypes
import time

import numpy as np

from mlc.backend import profiling

_TIMER = ctypes.CFUNCTYPE(None, ctypes.c_int64)


def _timers():
    runtime = profiling.runtime()
    return _TIMER(runtime.begin), _TIMER(runtime.end)


def test_timers_add_up_per_kernel_and_log_each_run():
    begin, end = _timers()
    recording = profiling.Recording(kernels=2, event_capacity=8)
    with recording.active():
        for _ in range(3):
            begin(1)
            time.sleep(0.001)
            end(1)
        begin(0)
        end(0)
    np.testing.assert_array_equal(recording.counts(), [1, 3])
    totals = recording.totals()
    assert totals[1] >= 3_000_000 and 0 <= totals[0] < totals[1]
    events = recording.logged_events()
    assert events[:, 0].tolist() == [1, 1, 1, 0]
    assert (events[:, 2] >= events[:, 1]).all() and (np.diff(events[:, 1]) >= 0).all()
    assert abs(int(events[0, 1]) - profiling.now_ns()) < 10**9  # the clock Python reads


def test_the_event_log_is_bounded_and_totals_are_not():
    begin, end = _timers()
    recording = profiling.Recording(kernels=1, event_capacity=2)
    with recording.active():
        for _ in range(5):
            begin(0)
            end(0)
    assert recording.counts().tolist() == [5]
    assert len(recording.logged_events()) == 2


def test_timers_do_nothing_with_no_recording_active():
    begin, end = _timers()
    recording = profiling.Recording(kernels=1, event_capacity=4)
    with recording.active():
        pass
    begin(0)
    end(0)
    assert recording.counts().tolist() == [0]

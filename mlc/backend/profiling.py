"""
The timers of profiled programs: `mlc_profile_begin(id)` / `mlc_profile_end(id)`, native.

A program compiled for profiling (`instrument-kernels`) calls them around each kernel.
They are a small runtime written in LLVM IR (`RUNTIME_IR`), compiled once per process
and bound as symbols before a profiled program is loaded, so a timed kernel costs two
reads of the monotonic clock (`clock_gettime`, through the vDSO: tens of nanoseconds)
and no Python. Only programs compiled for profiling reference them: the others have
no hooks at all.

They write into a `Recording` that Python owns and makes current (`Recording.active`):
per kernel id, the start of its current run, its total nanoseconds and its count; and
an event log of `(id, start, end)` triples, up to its capacity, from which a timeline
(the Chrome trace) is drawn. With no recording current, the timers do nothing. Kernels
are timed on the thread that called the program (a parallel loop is timed from its
dispatch to its end), one program call at a time.
"""

import ctypes
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache

import llvmlite.binding as llvm
import numpy as np

from mlc.backend.native import compile_runtime, function_address

BEGIN = "mlc_profile_begin"  # as mlc.lowering.support.kernel_sources names them
END = "mlc_profile_end"

# table: 3 i64 per kernel (start, total ns, count); events: 3 i64 per event (id, start, end)
RUNTIME_IR = r"""
@table = internal global ptr null
@events = internal global ptr null
@event_count = internal global i64 0
@event_capacity = internal global i64 0

declare i32 @clock_gettime(i32, ptr)

define internal i64 @now() {
  %ts = alloca [2 x i64], align 8
  call i32 @clock_gettime(i32 1, ptr %ts)
  %s = load i64, ptr %ts
  %nsp = getelementptr i64, ptr %ts, i64 1
  %ns = load i64, ptr %nsp
  %sns = mul i64 %s, 1000000000
  %t = add i64 %sns, %ns
  ret i64 %t
}

define void @mlc_profile_begin(i64 %id) {
  %table = load ptr, ptr @table
  %off = icmp eq ptr %table, null
  br i1 %off, label %done, label %record
record:
  %t = call i64 @now()
  %base = mul i64 %id, 3
  %slot = getelementptr i64, ptr %table, i64 %base
  store i64 %t, ptr %slot
  br label %done
done:
  ret void
}

define void @mlc_profile_end(i64 %id) {
  %t = call i64 @now()
  %table = load ptr, ptr @table
  %off = icmp eq ptr %table, null
  br i1 %off, label %done, label %record
record:
  %base = mul i64 %id, 3
  %startp = getelementptr i64, ptr %table, i64 %base
  %start = load i64, ptr %startp
  %totalp = getelementptr i64, ptr %startp, i64 1
  %total = load i64, ptr %totalp
  %elapsed = sub i64 %t, %start
  %total1 = add i64 %total, %elapsed
  store i64 %total1, ptr %totalp
  %countp = getelementptr i64, ptr %startp, i64 2
  %count = load i64, ptr %countp
  %count1 = add i64 %count, 1
  store i64 %count1, ptr %countp
  %n = load i64, ptr @event_count
  %capacity = load i64, ptr @event_capacity
  %room = icmp slt i64 %n, %capacity
  br i1 %room, label %log, label %done
log:
  %events = load ptr, ptr @events
  %ebase = mul i64 %n, 3
  %eid = getelementptr i64, ptr %events, i64 %ebase
  store i64 %id, ptr %eid
  %estart = getelementptr i64, ptr %eid, i64 1
  store i64 %start, ptr %estart
  %eend = getelementptr i64, ptr %eid, i64 2
  store i64 %t, ptr %eend
  %n1 = add i64 %n, 1
  store i64 %n1, ptr @event_count
  br label %done
done:
  ret void
}

define void @mlc_profile_record(ptr %table, ptr %events, i64 %capacity) {
  store ptr %table, ptr @table
  store ptr %events, ptr @events
  store i64 %capacity, ptr @event_capacity
  store i64 0, ptr @event_count
  ret void
}

define i64 @mlc_profile_event_count() {
  %n = load i64, ptr @event_count
  ret i64 %n
}
"""

_RECORD = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_COUNT = ctypes.CFUNCTYPE(ctypes.c_int64)


class _Runtime:
    def __init__(self) -> None:
        engine = compile_runtime(RUNTIME_IR)
        self.begin = function_address(engine, BEGIN)
        self.end = function_address(engine, END)
        self.record = _RECORD(function_address(engine, "mlc_profile_record"))
        self.event_count = _COUNT(function_address(engine, "mlc_profile_event_count"))


@cache
def runtime() -> _Runtime:
    """The timers of this process, compiled on first use."""
    return _Runtime()


@cache
def install() -> None:
    """Make the timers visible to code the JIT compiles (once per process)."""
    llvm.add_symbol(BEGIN, runtime().begin)
    llvm.add_symbol(END, runtime().end)


def now_ns() -> int:
    """The clock the timers read (CLOCK_MONOTONIC), from Python."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


@dataclass
class Recording:
    """Where the timers of `kernels` kernels write while this recording is active."""

    kernels: int
    event_capacity: int = 0
    table: np.ndarray = field(init=False)
    events: np.ndarray = field(init=False)
    event_total: int = field(init=False, default=0)  # events the last activation logged

    def __post_init__(self) -> None:
        self.table = np.zeros((max(self.kernels, 1), 3), np.int64)
        self.events = np.zeros((max(self.event_capacity, 1), 3), np.int64)

    def totals(self) -> np.ndarray:
        """Nanoseconds per kernel so far (a copy)."""
        return self.table[: self.kernels, 1].copy()

    def counts(self) -> np.ndarray:
        return self.table[: self.kernels, 2].copy()

    def reset(self) -> None:
        self.table[:] = 0

    @contextmanager
    def active(self) -> Iterator["Recording"]:
        """Let the timers write here (the event log starts empty), until the block ends."""
        rt = runtime()
        rt.record(self.table.ctypes.data, self.events.ctypes.data, self.event_capacity)
        try:
            yield self
        finally:
            self.event_total = rt.event_count()
            rt.record(None, None, 0)

    def logged_events(self) -> np.ndarray:
        """The `(id, start ns, end ns)` events logged in the last activation."""
        return self.events[: min(self.event_total, self.event_capacity)].copy()

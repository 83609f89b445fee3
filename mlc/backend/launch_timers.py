"""
The timers of programs profiled on the cuda target: `mlc_profile_launch_begin(id)` /
`mlc_profile_launch_end(id)`, called by the host code around each kernel launch
(`instrument-launches`).

A launch returns before its kernel has run, so a host clock would time the launch, not
the kernel. Each timer instead records a CUDA event on the stream the kernels run on
(the default stream), taken in turn from a pool that Python creates; after the call,
Python waits for the device and reads each begin/end pair's elapsed time
(`cuEventElapsedTime`, resolution about half a microsecond). Like the CPU timers
(`mlc.backend.profiling`) they are a few lines of LLVM IR, so nothing but two
`cuEventRecord`s runs between launches, and they do nothing while no recording is
active. A call that launches more kernels than the pool holds is timed in part; the pool
then grows to fit, so the warm-up calls of `mlc.profiler.measure` size it, and a timed
call that still overflows it is an error.
"""

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import llvmlite.binding as llvm
import numpy as np

from mlc.backend.native import compile_runtime, function_address
from mlc.backend.profiling import now_ns

BEGIN = "mlc_profile_launch_begin"  # as mlc.lowering.support.kernel_sources names them
END = "mlc_profile_launch_end"

# events: 2 CUevents per launch (begin, end); ids: the kernel id of each launch
RUNTIME_IR = r"""
@events = internal global ptr null
@ids = internal global ptr null
@capacity = internal global i64 0
@count = internal global i64 0
@seen = internal global i64 0

declare i32 @cuEventRecord(ptr, ptr)

define internal void @record(i64 %offset) {
  %n = load i64, ptr @count
  %capacity = load i64, ptr @capacity
  %room = icmp slt i64 %n, %capacity
  br i1 %room, label %record, label %done
record:
  %pair = mul i64 %n, 2
  %index = add i64 %pair, %offset
  %events = load ptr, ptr @events
  %slot = getelementptr ptr, ptr %events, i64 %index
  %event = load ptr, ptr %slot
  call i32 @cuEventRecord(ptr %event, ptr null)
  br label %done
done:
  ret void
}

define void @mlc_profile_launch_begin(i64 %id) {
  %events = load ptr, ptr @events
  %off = icmp eq ptr %events, null
  br i1 %off, label %done, label %on
on:
  call void @record(i64 0)
  br label %done
done:
  ret void
}

define void @mlc_profile_launch_end(i64 %id) {
  %events = load ptr, ptr @events
  %off = icmp eq ptr %events, null
  br i1 %off, label %done, label %on
on:
  call void @record(i64 1)
  %seen = load i64, ptr @seen
  %seen1 = add i64 %seen, 1
  store i64 %seen1, ptr @seen
  %n = load i64, ptr @count
  %capacity = load i64, ptr @capacity
  %room = icmp slt i64 %n, %capacity
  br i1 %room, label %log, label %done
log:
  %ids = load ptr, ptr @ids
  %idp = getelementptr i64, ptr %ids, i64 %n
  store i64 %id, ptr %idp
  %n1 = add i64 %n, 1
  store i64 %n1, ptr @count
  br label %done
done:
  ret void
}

define void @mlc_profile_launch_record(ptr %events, ptr %ids, i64 %capacity) {
  store ptr %events, ptr @events
  store ptr %ids, ptr @ids
  store i64 %capacity, ptr @capacity
  store i64 0, ptr @count
  store i64 0, ptr @seen
  ret void
}

define i64 @mlc_profile_launch_count() {
  %n = load i64, ptr @count
  ret i64 %n
}

define i64 @mlc_profile_launch_seen() {
  %n = load i64, ptr @seen
  ret i64 %n
}
"""

_RECORD = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_COUNT = ctypes.CFUNCTYPE(ctypes.c_int64)


class _Runtime:
    def __init__(self, libcuda: ctypes.CDLL) -> None:
        # The runtime's call is resolved when it is compiled: bind the driver's first.
        llvm.add_symbol("cuEventRecord", ctypes.cast(libcuda.cuEventRecord, ctypes.c_void_p).value)
        engine = compile_runtime(RUNTIME_IR)
        self.begin = function_address(engine, BEGIN)
        self.end = function_address(engine, END)
        self.record = _RECORD(function_address(engine, "mlc_profile_launch_record"))
        self.count = _COUNT(function_address(engine, "mlc_profile_launch_count"))
        self.seen = _COUNT(function_address(engine, "mlc_profile_launch_seen"))


_runtime: list[_Runtime] = []


def runtime(libcuda: ctypes.CDLL) -> _Runtime:
    """The timers of this process, compiled on first use (on a machine with a GPU)."""
    if not _runtime:
        _runtime.append(_Runtime(libcuda))
    return _runtime[0]


def install(libcuda: ctypes.CDLL) -> None:
    """Make the timers visible to host code the JIT compiles."""
    rt = runtime(libcuda)
    llvm.add_symbol(BEGIN, rt.begin)
    llvm.add_symbol(END, rt.end)


@dataclass
class LaunchRecording:
    """
    Where the launch timers of `kernels` kernels record while active: the same reading
    interface as the CPU's `mlc.backend.profiling.Recording` (totals, counts, events).
    """

    kernels: int
    device: Any  # mlc.backend.cuda.Device
    capacity: int = 256  # launches timed per activation, grown when a call needs more
    table: np.ndarray = field(init=False)  # per kernel id: total ns, count
    events: list[tuple[int, int, int]] = field(init=False, default_factory=list)
    sized: bool = field(init=False, default=False)  # the pool is not grown any more
    _pool: Any = field(init=False, default=None)
    _ids: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.table = np.zeros((max(self.kernels, 1), 2), np.int64)
        self._ids = np.zeros(self.capacity, np.int64)
        self._pool = _EventPool(self.device, 2 * self.capacity)

    def totals(self) -> np.ndarray:
        return self.table[: self.kernels, 0].copy()

    def counts(self) -> np.ndarray:
        return self.table[: self.kernels, 1].copy()

    def reset(self) -> None:
        """Forget the times so far; from now on a call the pool is too small for is an
        error rather than a reason to grow it (its times would be partial)."""
        self.table[:] = 0
        self.sized = True

    @contextmanager
    def active(self) -> Iterator["LaunchRecording"]:
        """Let the timers record (the event log starts empty), until the block ends; then
        wait for the device and add up the launches' times."""
        rt = runtime(self.device.libcuda)
        pool = self._pool
        pool.record_reference()
        started = now_ns()
        rt.record(pool.address, self._ids.ctypes.data, self.capacity)
        try:
            yield self
        finally:
            timed, seen = rt.count(), rt.seen()
            rt.record(None, None, 0)
        self._read(timed, started)  # not after a failed call: its error is the one to see
        if seen > timed and self.sized:
            raise RuntimeError(
                f"a call launched {seen} kernels, more than the {timed} timed: the warm-up "
                "calls launched fewer (profile with warmup=1 or more)"
            )
        if seen > timed:
            self._grow(seen)

    def logged_events(self) -> np.ndarray:
        """The `(id, start ns, end ns)` launches of the last activation, on the host's
        clock (the device's times, placed from the activation's start)."""
        return np.array(self.events, np.int64).reshape(-1, 3)

    def _read(self, timed: int, started: int) -> None:
        pool = self._pool
        pool.synchronize()
        self.events = []
        for n in range(timed):
            kernel = int(self._ids[n])
            begin, end = pool.since_reference(2 * n), pool.since_reference(2 * n + 1)
            self.table[kernel] += (end - begin, 1)
            self.events.append((kernel, started + begin, started + end))

    def _grow(self, launches: int) -> None:
        self.capacity = max(launches, 2 * self.capacity)
        self._ids = np.zeros(self.capacity, np.int64)
        self._pool = _EventPool(self.device, 2 * self.capacity)


class _EventPool:
    """`size` CUDA events in an array the timers index, plus a reference event."""

    def __init__(self, device: Any, size: int) -> None:
        self.device = device
        lib = self.device.libcuda
        self.handles = (ctypes.c_void_p * size)()
        self.reference = ctypes.c_void_p()
        for slot in [*range(size), None]:
            handle = ctypes.c_void_p()
            self.device.check(lib.cuEventCreate(ctypes.byref(handle), 0), "creating an event")
            if slot is None:
                self.reference = handle
            else:
                self.handles[slot] = handle

    @property
    def address(self) -> int:
        return ctypes.addressof(self.handles)

    def record_reference(self) -> None:
        lib = self.device.libcuda
        self.device.check(lib.cuEventRecord(self.reference, None), "recording an event")

    def synchronize(self) -> None:
        self.device.check(self.device.libcuda.cuCtxSynchronize(), "waiting for the kernels")

    def since_reference(self, slot: int) -> int:
        """Nanoseconds from the reference event to event `slot` (both recorded)."""
        ms = ctypes.c_float()
        status = self.device.libcuda.cuEventElapsedTime(
            ctypes.byref(ms), self.reference, ctypes.c_void_p(self.handles[slot])
        )
        self.device.check(status, "reading an event's time")
        return round(ms.value * 1e6)

    def __del__(self) -> None:
        lib = getattr(getattr(self, "device", None), "libcuda", None)
        if lib is None:
            return
        for handle in [*self.handles, self.reference.value]:
            try:
                lib.cuEventDestroy_v2(ctypes.c_void_p(handle))
            except Exception:
                pass

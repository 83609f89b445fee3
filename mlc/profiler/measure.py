"""
Running a program compiled for profiling and reading its timers into a `Profile`.

Each of `repeat` calls runs with the timers recording (`mlc.backend.profiling`); a
kernel's time is the median over the calls of its time in a call (a kernel inside a
model's loop runs several times a call), a layer's the sum of its kernels' medians.
The call's own wall time, measured around it, gives what no kernel covers (argument
checks, allocations, the glue between kernels) as `outside`. The last call's events
become the timeline of the Chrome trace.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlc.backend.launch_timers import LaunchRecording
from mlc.backend.profiling import Recording, now_ns
from mlc.lowering.support.kernel_sources import KernelInfo
from mlc.profiler.costs import Cost

EVENT_CAPACITY = 1 << 16  # kernel runs the timeline of one call keeps


@dataclass(frozen=True)
class Peaks:
    """The machine's limits that achieved rates are a share of (None: not known)."""

    gflops: float | None = None  # FMA peak, GFLOP/s
    gbps: float | None = None  # memory bandwidth, GB/s


@dataclass
class KernelTime:
    """One kernel of a layer: what it is and its median time per call."""

    info: KernelInfo
    seconds: float
    runs: int  # times it ran per call


@dataclass
class Layer:
    """The kernels that share one list of source ops, their time and their cost."""

    sources: tuple[str, ...]
    kernels: list[KernelTime]
    seconds: float
    cost: Cost = field(default_factory=Cost)

    @property
    def gflops(self) -> float | None:
        return _rate(self.cost.flops, self.seconds)

    @property
    def gbps(self) -> float | None:
        return _rate(self.cost.bytes, self.seconds)


def _rate(amount: int | None, seconds: float) -> float | None:
    return None if not amount or seconds <= 0 else amount / seconds / 1e9


@dataclass
class Timeline:
    """The last call's kernel runs: (kernel id, start, end) in ns from the call's start."""

    events: list[tuple[int, int, int]]
    call_ns: int


@dataclass
class Measurement:
    """What the timed calls gave: per-kernel and per-call times, a timeline, the results."""

    kernel_seconds: np.ndarray  # median per kernel id
    kernel_runs: np.ndarray  # runs per call, per kernel id
    call_seconds: float  # median wall time of a call
    timeline: Timeline
    outputs: Any


def measure(
    call: Callable[..., Any],
    args: Sequence[Any],
    kernels: int,
    repeat: int,
    warmup: int = 1,
    recording: Recording | LaunchRecording | None = None,
) -> Measurement:
    """
    Call `call(*args)` `warmup` times, then `repeat` times with the timers recording:
    the CPU's clocks, or the `recording` given (the cuda target's launch events). The
    warm-up calls record too, and are forgotten (`reset`): they size what the timers
    need.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    if recording is None:
        recording = Recording(kernels, EVENT_CAPACITY)
    for _ in range(warmup):
        with recording.active():
            call(*args)
    recording.reset()
    per_call: list[np.ndarray] = []
    walls: list[int] = []
    outputs: Any = None
    start = end = 0
    for _ in range(repeat):
        before = recording.totals()
        with recording.active():
            start = now_ns()
            outputs = call(*args)
            end = now_ns()
        per_call.append(recording.totals() - before)
        walls.append(end - start)
    events = [(int(i), int(s) - start, int(e) - start) for i, s, e in recording.logged_events()]
    return Measurement(
        kernel_seconds=np.median(np.stack(per_call), axis=0) / 1e9 if kernels else np.zeros(0),
        kernel_runs=recording.counts() // repeat,
        call_seconds=float(np.median(walls)) / 1e9,
        timeline=Timeline(events, end - start),
        outputs=outputs,
    )


def layers_of(kernels: Sequence[KernelInfo], measured: Measurement) -> list[Layer]:
    """The kernels grouped by their sources (in order of first appearance), with times."""
    grouped: dict[tuple[str, ...], list[KernelTime]] = {}
    for info in kernels:
        time = KernelTime(
            info, float(measured.kernel_seconds[info.id]), int(measured.kernel_runs[info.id])
        )
        grouped.setdefault(info.sources, []).append(time)
    return [
        Layer(sources, times, sum(t.seconds for t in times)) for sources, times in grouped.items()
    ]

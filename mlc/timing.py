"""
Wall time per named phase of a compile or an `mlc-opt` run, and its report.

One `Timer` collects a run's phases. Phases nest: a phase opened while another is open
is recorded under it (a pass under its stage, LLVM's optimisation under the backend), so
the report is a tree whose children add up to their parent (an `(other)` line holds
what the parent spent outside them). `Timer.seconds` keeps the outermost phases only,
which is what `Executable.compile_times` shows.

Code deep in the pipeline (a pass manager, a backend) need not be handed the timer:
`phase(name)` times into the timer that `Timer.active()` made current in this thread
of control (a `ContextVar`), and does nothing when none is.

    timer = Timer()
    with timer.active(), timer.phase("stage loops"):
        with phase("canonicalize"):       # recorded as ("stage loops", "canonicalize")
            ...
    print(timer.report(by_time=True))     # the tree, slowest first at each level

`MLC_TIMING=1` (`enabled()`) asks `mlc.compile` to print its report to stderr.
"""

import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field

Path = tuple[str, ...]

_current: ContextVar["Timer | None"] = ContextVar("mlc_timer", default=None)

OTHER = "(other)"
RULE = "===" + "-" * 73 + "==="


def enabled() -> bool:
    """True when `MLC_TIMING` asks for compile timings (set, and not 0)."""
    return os.environ.get("MLC_TIMING", "0") not in ("", "0")


@dataclass
class Timer:
    """Wall time per named phase, summed over repeats, in first-seen order."""

    seconds: dict[str, float] = field(default_factory=dict[str, float])
    nested: dict[Path, float] = field(default_factory=dict[Path, float])
    _open: list[str] = field(default_factory=list[str], repr=False)
    # Told the path of each phase as it opens (`mlc.progress` shows it).
    on_phase: Callable[[Path], None] | None = field(default=None, repr=False, compare=False)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as `name`, nested in the phase open around it, if any."""
        path = (*self._open, name)
        self._open.append(name)
        if self.on_phase is not None:
            self.on_phase(path)
        start = time.perf_counter()
        try:
            yield
        finally:
            self._open.pop()
            self.add_path(path, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        """Record `seconds` measured elsewhere (another process) as phase `name`, nested
        in the phase open now."""
        self.add_path((*self._open, name), seconds)

    def add_path(self, path: Path, seconds: float) -> None:
        self.nested[path] = self.nested.get(path, 0.0) + seconds
        if len(path) == 1:
            self.seconds[path[0]] = self.seconds.get(path[0], 0.0) + seconds

    @contextmanager
    def active(self) -> Iterator["Timer"]:
        """Make this the timer that the module-level `phase` records into."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    def rows(self, by_time: bool = False) -> list[tuple[int, str, float]]:
        """(depth, name, seconds) of every phase, parents before their children; a
        parent with children gets an `OTHER` child for its time outside them, so each
        level adds up to its parent. In first-seen order, or slowest first."""
        children: dict[Path, list[Path]] = {}
        for path in self.nested:
            children.setdefault(path[:-1], []).append(path)
        rows: list[tuple[int, str, float]] = []

        def visit(parent: Path) -> None:
            kids = children.get(parent, [])
            if by_time:
                kids = sorted(kids, key=lambda p: -self.nested[p])
            for path in kids:
                rows.append((len(path) - 1, path[-1], self.nested[path]))
                if path in children:
                    below = sum(self.nested[p] for p in children[path])
                    visit(path)
                    rows.append((len(path), OTHER, max(self.nested[path] - below, 0.0)))

        visit(())
        return rows

    def total(self) -> float:
        return sum(self.seconds.values())

    def report(self, by_time: bool = False, title: str = "Execution time report") -> str:
        """An MLIR-style (`--mlir-timing`) execution time report: nested phases are
        indented under theirs; `by_time` sorts each level slowest first."""
        total = self.total() or 1e-12
        lines = [
            RULE,
            f"{' ' * 25}... {title} ...",
            RULE,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for depth, name, secs in [*self.rows(by_time), (0, "Total", total)]:
            lines.append(f"  {secs:10.4f} ({100 * secs / total:5.1f}%)  {'  ' * depth}{name}")
        return "\n".join(lines) + "\n"


def current() -> Timer | None:
    """The timer made active in this context, if any."""
    return _current.get()


def phase(name: str) -> AbstractContextManager[None]:
    """Time the block as `name` in the active timer; nothing when none is active."""
    timer = _current.get()
    return timer.phase(name) if timer is not None else nullcontext()

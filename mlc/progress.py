"""
A progress line for long compiles, on stderr: the phase running (a stage, a pass, LLVM
code generation) and, while kernels are compiled, how many are done of how many.

    with progress.display(timer, "model.onnx"):    # mlc.compile, mlc-run, mlc-opt --timing
        with timer.phase("stage loops"):           # the line says "model.onnx: stage loops"
            ...
        progress.kernels(28)                       # then "kernels 3/28", as they finish
        progress.advance()

The line is drawn by tqdm and appears only once a compile has run `DELAY` seconds (a
small compile shows nothing). It is shown when stderr is a terminal, or when
`MLC_PROGRESS=1` asks for it (on any stream); `MLC_PROGRESS=0` turns it off. Under
pytest, or when stderr is a pipe or a file, nothing is shown unless asked for. Without
tqdm installed, nothing is shown either.
"""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TextIO

from mlc.timing import Timer

DELAY = 2.0  # seconds before the line appears

_current: ContextVar["_Display | None"] = ContextVar("mlc_progress", default=None)


def enabled(stream: TextIO) -> bool:
    """Whether to show progress on `stream` (see the module docstring)."""
    asked = os.environ.get("MLC_PROGRESS", "").strip().lower()
    if asked:
        return asked not in ("0", "false", "no", "off")
    if "PYTEST_CURRENT_TEST" in os.environ:
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class _Display:
    """One tqdm bar: the phase as its description, kernels as its count."""

    def __init__(self, bar: Any, label: str):
        self.bar = bar
        self.label = label

    def phase(self, path: tuple[str, ...]) -> None:
        if len(path) <= 2:  # a stage and its passes; deeper phases change too fast
            self.bar.set_description_str(f"{self.label}: {' / '.join(path)}", refresh=False)
            self.bar.refresh()

    def kernels(self, total: int) -> None:
        self.bar.bar_format = "{desc} {n_fmt}/{total_fmt} kernels [{elapsed}]"
        self.bar.reset(total=total)

    def advance(self, count: int) -> None:
        self.bar.update(count)
        self.bar.refresh()  # each kernel takes a while: never skipped as too soon


@contextmanager
def display(timer: Timer, label: str = "mlc", stream: TextIO | None = None) -> Iterator[None]:
    """Show the progress of what `timer` times, while the block runs, on `stream`
    (stderr by default), if `enabled`; nothing otherwise. Nested displays add nothing."""
    out = stream if stream is not None else sys.stderr
    if _current.get() is not None or not enabled(out):
        yield
        return
    try:
        from tqdm import tqdm  # optional: no tqdm, no progress line
    except ImportError:
        yield
        return
    bar = tqdm(
        total=None,
        file=out,
        delay=DELAY,
        leave=False,
        dynamic_ncols=True,
        bar_format="{desc} [{elapsed}]",
    )
    shown = _Display(bar, label)
    token = _current.set(shown)
    previous = timer.on_phase
    timer.on_phase = shown.phase
    try:
        yield
    finally:
        timer.on_phase = previous
        _current.reset(token)
        bar.close()


def kernels(total: int) -> None:
    """Kernels are about to be compiled: `total` of them (nothing when not shown)."""
    if (shown := _current.get()) is not None:
        shown.kernels(total)


def advance(count: int = 1) -> None:
    """`count` more kernels compiled."""
    if (shown := _current.get()) is not None:
        shown.advance(count)

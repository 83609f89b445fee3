"""
Measured choices on this machine: where the cost model (`mlc.tiling_model`) cannot
settle a choice, `autotune-tiles` builds a program of candidates and keeps the fastest.
This module times such a program and records the winners.

Timing: the program's functions (one per candidate, the same arguments each) are
lowered as the pipeline lowers a program from the tuning point on (`LOWERING`),
compiled, loaded and called in turns on random arguments, `ROUNDS` turns each of about
`SAMPLE_SECONDS`. A candidate's time is its fastest turn: on a shared machine a turn
only ever grows by noise (a worker thread descheduled mid-loop stalls it 10-20x).

Record: one JSON file per machine, `<cache dir>/tuning/<host digest>.json`, mapping a
choice's key (the digest of what it depends on) to the choice, a list of positive
integers. The host digest covers what `mlc.backend.cache` keys machine code by (mlc's
sources, the compilers, the CPU's name and features): a choice measured for other code
or another CPU is never served. Writers merge into the file and put it in place by an
atomic rename, so concurrent compiles never see half a file (the last writer may drop
another's new entry, which is then measured again). An unreadable or malformed file
reads as empty; one that cannot be written is skipped: tuning never fails a compile.
"""

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass

from mlc.backend import cache, cpu
from mlc.backend.runtime import dtype_of
from mlc.lowering.convert_to_llvm import ConvertToLLVMPass
from mlc.lowering.cpu.collapse_parallel_generics import CollapseParallelGenericsPass
from mlc.lowering.cpu.linalg_tile import LinalgTilePass
from mlc.lowering.cpu.outline_kernels import OutlineKernelsPass
from mlc.lowering.cpu.promote_accumulators import PromoteAccumulatorsPass
from mlc.lowering.graph.canonicalize import CanonicalizePass
from mlc.lowering.graph.cse import CSEPass
from mlc.lowering.linalg.lower_affine import LowerAffinePass
from mlc.timing import Timer

ROUNDS = 7  # timed turns of every function
SAMPLE_SECONDS = 5e-4  # each turn repeats calls until it lasts about this long
RECORDS = "tuning"  # the cache folder's subfolder of records

# The `loops` stage after `bufferize` (where `autotune-tiles` runs), then the `llvm`
# stage, as `mlc.pipeline` lists them (it cannot be imported here: its registry imports
# the pass that imports this; a unit test holds the two lists, and their classes, equal).
LOWERING: tuple[type[ModulePass], ...] = (
    OutlineKernelsPass,
    CollapseParallelGenericsPass,
    LinalgTilePass,
    ConvertLinalgToLoopsPass,
    LowerAffinePass,
    CanonicalizePass,
    CSEPass,
    PromoteAccumulatorsPass,
    ConvertToLLVMPass,
)


def time_functions(
    module: ModuleOp, names: Sequence[str], arguments: Sequence[MemRefType], ctx: Context
) -> list[float]:
    """Seconds per call of each of `module`'s functions `names`, all taking arguments
    of the static, contiguous types `arguments` (`module` is lowered in place)."""
    types = {op.sym_name.data: op.function_type for op in module.ops if isinstance(op, func.FuncOp)}
    for lowering in LOWERING:
        lowering().apply(ctx, module)
    timer = Timer()
    program = cpu.load(cpu.build(module, timer), types, timer)
    rng = np.random.default_rng(0)
    values = [_random(type_, rng) for type_ in arguments]
    calls = [program.functions[name] for name in names]
    repeats = _repeats(calls[0], values)
    return [min(times) for times in _timed(calls, values, repeats)]


def _random(type_: MemRefType, rng: np.random.Generator) -> np.ndarray:
    dtype = dtype_of(type_.element_type)
    return np.ascontiguousarray(rng.standard_normal(type_.get_shape()).astype(dtype))


def _repeats(call: Callable[..., Any], arguments: list[np.ndarray]) -> int:
    """Calls per turn: enough for a turn to last about `SAMPLE_SECONDS`."""
    call(*arguments)  # the first call: lazy binding, cold caches
    start = time.perf_counter()
    call(*arguments)
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, round(SAMPLE_SECONDS / once))


def _timed(
    calls: list[Callable[..., Any]], arguments: list[np.ndarray], repeats: int
) -> list[list[float]]:
    for call in calls:
        call(*arguments)
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(ROUNDS):
        for call, samples in zip(calls, times, strict=True):
            start = time.perf_counter()
            for _ in range(repeats):
                call(*arguments)
            samples.append((time.perf_counter() - start) / repeats)
    return times


def record_path() -> Path:
    """This machine's file of recorded choices."""
    digest = hashlib.sha256(cache.host_identity().encode()).hexdigest()[:32]
    return cache.directory() / RECORDS / f"{digest}.json"


def recorded(file: Path | None = None) -> dict[str, list[int]]:
    """The choices recorded in `file` (default: this machine's), by key."""
    try:
        data = json.loads((file or record_path()).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: value
        for key, value in data.items()
        if isinstance(value, list) and all(type(v) is int and v > 0 for v in value)
    }


def record(choices: dict[str, list[int]], file: Path | None = None) -> None:
    """Merge `choices` into `file` (default: this machine's, unless the cache is off)."""
    if not choices or (file is None and not cache.enabled()):
        return
    target = file or record_path()
    merged = recorded(target) | choices
    try:
        cache.write_atomically(target, json.dumps(merged, indent=1, sort_keys=True).encode())
    except OSError:
        pass  # a record that cannot be written is skipped


def forget(file: Path | None = None) -> None:
    """Drop this machine's recorded choices (or `file`'s)."""
    try:
        os.unlink(file or record_path())
    except FileNotFoundError:
        pass

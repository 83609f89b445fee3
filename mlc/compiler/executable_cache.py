"""
Compiled programs kept for the next compile of the same program: the last
`CACHE_SIZE` executables in this process's memory, and the CPU target's machine code
on disk (`mlc.backend.cache`), for any process.

Both are looked up under one key (`mlc.compiler.options`): memory first, then disk. A
disk entry also holds the program's signatures and the constants its code reads, so a
hit needs no frontend. GPU programs are kept in memory only (their PTX is cached per
program and architecture by `mlc.backend.cuda`).
"""

import json
from collections import OrderedDict
from collections.abc import Sequence

from xdsl.utils.exceptions import ParseError

from mlc import resources
from mlc.backend import cache, cpu
from mlc.backend.compiled import CompiledObject
from mlc.compiler.executable import Executable
from mlc.compiler.options import CompileOptions
from mlc.compiler.signature import Signature
from mlc.timing import Timer

CACHE_SIZE = 64

memory: OrderedDict[str, Executable] = OrderedDict()


def lookup(key: str, options: CompileOptions, timer: Timer) -> Executable | None:
    """The executable kept under `key` in memory, else on disk; None if neither has one."""
    if (kept := memory.get(key)) is not None:
        memory.move_to_end(key)
        return kept
    if options.on_gpu:
        return None
    with timer.phase("cache lookup"):
        entry = cache.load(key)
        if entry is None or not entry.program:
            return None
        try:
            signatures = [Signature.from_json(item) for item in json.loads(entry.program)]
        except (ValueError, TypeError, KeyError, ParseError):
            return None  # written by an incompatible mlc: compiled again
        for handle, array in entry.resources.items():
            resources.restore(handle, array)
    executable = Executable.on_cpu(
        entry.compiled, signatures, options.target, timer, from_cache=True
    )
    return remember(key, executable)


def store(
    key: str, compiled: CompiledObject, signatures: Sequence[Signature], timer: Timer
) -> None:
    """Write the disk entry of host machine code with its program's `signatures`."""
    with timer.phase("cache store"):
        program = json.dumps([sig.to_json() for sig in signatures]).encode()
        # Every constant the code reads: a hit may come in a process that never made
        # them (constants derived while compiling, such as packed weight panels).
        weights = cpu.resources_read_by(compiled)
        cache.store(key, cache.Entry(compiled, program, weights))


def remember(key: str, executable: Executable) -> Executable:
    """Keep `executable` in memory under `key` (which it records: its static builds'
    keys are made from it, `mlc.compiler.specialization`)."""
    executable.cache_key = key
    memory[key] = executable
    while len(memory) > CACHE_SIZE:
        memory.popitem(last=False)
    return executable


def clear() -> None:
    """Forget the executables kept in memory (the disk cache stays)."""
    memory.clear()

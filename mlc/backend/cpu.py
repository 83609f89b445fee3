"""
The CPU target's backend: a module lowered to the `llvm` dialect becomes host machine
code (`build`), and machine code, freshly built or from the disk cache, becomes
callables (`load`). The two are apart because the disk cache (`mlc.backend.cache`)
keeps what is between them.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FunctionType, ModuleOp

from mlc import resources
from mlc.backend import profiling
from mlc.backend.compiled import CompiledObject
from mlc.backend.jit import JITModule
from mlc.backend.runtime import compiled_function
from mlc.backend.symbols import undefined_symbols
from mlc.timing import Timer


@dataclass(frozen=True)
class LoadedProgram:
    """Machine code loaded into an engine, and its public functions by name."""

    jit: JITModule
    functions: dict[str, Callable[..., Any]]
    # Each function's call that checks its arguments natively (`call_if_fits`), where
    # this process can (`mlc.backend.array_call`).
    fitting: dict[str, Callable[[tuple[Any, ...]], Any]] = field(default_factory=dict)


def build(module: ModuleOp, timer: Timer) -> CompiledObject:
    """Translate, optimise and compile a module of the `llvm` dialect for the host: a
    large one in parts on every core (`mlc.backend.split_codegen`), a small one whole."""
    # Imported here: a cache hit needs no xDSL llvm dialect.
    from mlc.backend import split_codegen, whole_codegen

    compiled = split_codegen.compile_module(module, timer)
    return compiled if compiled is not None else whole_codegen.compile_whole(module, timer)


def load(
    compiled: CompiledObject, functions: Mapping[str, FunctionType], timer: Timer
) -> LoadedProgram:
    """
    Load `compiled` and make a callable of each of `functions` (bufferized types, by
    name). The callables do not check their arguments: the caller has (as
    `mlc.compiler.signature` does); those of `fitting` check natively what needs no
    conversion, and refuse the rest (`mlc.backend.runtime.REFUSED`).
    """
    with timer.phase("load"):
        if any(is_profiled(object_code) for object_code in compiled.objects):
            profiling.install()  # its kernels call the timers
        jit = JITModule.from_object(compiled)
        loaded = {name: compiled_function(jit, name, t) for name, t in functions.items()}
    natives = {name: function.unchecked for name, function in loaded.items()}
    fitting = {name: f.call_if_fits for name, f in loaded.items() if f.checks_natively}
    return LoadedProgram(jit, natives, fitting)


def is_profiled(object_code: bytes) -> bool:
    """Whether the machine code was compiled for profiling: it names the timers (a byte
    search, cheaper than reading the symbol table on every load)."""
    return profiling.BEGIN.encode() in object_code


def resources_read_by(compiled: CompiledObject) -> dict[str, np.ndarray]:
    """The stored constants (`mlc.resources`) whose symbols the machine code uses."""
    used: dict[str, np.ndarray] = {}
    names = (name for code in compiled.objects for name in undefined_symbols(code))
    for name in names:
        if name.startswith(resources.PREFIX):
            handle = name.removeprefix(resources.PREFIX)
            if (array := resources.lookup(handle)) is not None:
                used[handle] = array
    return used

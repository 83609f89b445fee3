"""
`mlc.compile` and `mlc.jit`: from a program to a Python callable on numpy arrays.

The program is parsed once, its public functions' signatures are read at the tensor
level (the types users wrote), and it is lowered through the target's stages in
`mlc.pipeline` and handed to the backend. What comes back checks every argument
against those signatures *before* native code runs, so a wrong count, dtype, rank or
static size is a `TypeError`/`ValueError` naming the argument, never a crash.

Compiled programs are cached in memory and on disk (`mlc.backend.cache`), keyed by
their source (MLIR text, the bytes of a .mlir or .onnx file, a serialised ModelProto),
the target and the options: a hit, in this process or a new one, runs no frontend at
all, since the entry also holds the signatures and the weights the frontend would have
made. An `ModuleOp` (or an ONNX model whose weights live in external files) is keyed
by its printed IR instead, after parsing. `MLC_TIMING=1` prints the wall time of each
stage of a compile to stderr, each pass nested under its stage (`mlc.timing`), slowest
first; `Executable.compile_times` holds the outermost phases.

The modules, in the order a compile goes through them: `options` (`CompileOptions`,
cache keys), `source` (classifying and loading what was given), `executable_cache`
(memory, then disk), `targets` (lowering, and each target's backend), `signature` and
`executable` (what comes back), `compile_path` (`mlc.compile` itself), `specialization`
(static builds for the shapes a call has, `specialize=`), `jit` (`mlc.jit`).
"""

from mlc.compiler.compile_path import compile
from mlc.compiler.errors import CompileError
from mlc.compiler.executable import CompiledFunction, Executable
from mlc.compiler.options import CompileOptions
from mlc.compiler.signature import Signature
from mlc.compiler.source import Source, load

__all__ = [
    "CompileError",
    "CompileOptions",
    "CompiledFunction",
    "Executable",
    "Signature",
    "Source",
    "compile",
    "load",
]

"""
Static builds of a program with dynamic input dims, for the shapes it is called with
(`mlc.compile(..., specialize=...)`): SystemDS's recompilation once sizes are known,
torch.compile's shape specialisation behind a guard.

A program whose inputs have dynamic dims (an ONNX model's batch) computes every loop
bound, split and block count over them at run time; the same program with the sizes
declared static compiles to faster code. Each public function with a dynamic input
dim becomes a `SpecializingFunction`, whose guard is what `mlc.jit` guards a traced
function on when its shapes are static: the dtype and exact shape of every array.

- A call whose guard has a static build runs it (the least recently used is dropped
  past `specialize` builds).
- Any other call runs the dynamic build, and its guard is counted: at the
  `specialize_after`-th call with those shapes their static build is compiled. The
  counts are kept for the last `SEEN` guards only, so a stream of distinct shapes
  holds bounded memory and, with `specialize_after` > 1, compiles nothing.
- The static build is the program with its inputs' shapes fixed: an ONNX model's
  graph inputs declared static (`shape_inputs.fix_dims`, as bench/cpu_models.py's
  `static` contender), an MLIR program's argument types fixed and its dims refined by
  `shape-inference` (`mlc.profiler.costs.at_call_shapes`). It goes through
  `mlc.compile`'s own path under a key made of the dynamic build's and the shapes
  (`options.specialized_cache_key`), so the disk cache keeps it for a new process,
  which looks for it (one file lookup) the first time it sees those shapes, before
  their count is reached.
- A static build that fails to compile is warned about once; its shapes run the
  dynamic build from then on.
"""

import copy
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

from mlc.compiler.errors import CompileError
from mlc.compiler.executable import CompiledFunction, Executable
from mlc.compiler.executable_cache import lookup
from mlc.compiler.options import CompileOptions, specialized_cache_key
from mlc.compiler.shape_inputs import CacheInfo, fix_dims, graph_inputs
from mlc.compiler.signature import Signature
from mlc.compiler.source import Source, SourceKind
from mlc.timing import Timer

SEEN = 256  # guards whose calls are counted towards `specialize_after`

Guard = tuple[tuple[np.dtype, tuple[int, ...]] | None, ...]
Build = Callable[[Sequence[Any], str], CompiledFunction | None]
Probe = Callable[[str], CompiledFunction | None]


class SpecializationWarning(UserWarning):
    """A static build could not be compiled: those shapes run the dynamic build."""


def has_dynamic_inputs(signature: Signature) -> bool:
    """Whether an array argument of `signature` has a dynamic dim."""
    return any(
        isinstance(t, TensorType) and DYNAMIC_INDEX in t.get_shape() for t in signature.inputs
    )


def shapes_text(guard: Guard) -> str:
    """A guard as text, for cache keys and messages: `<f4[1x3x224x224], -`."""
    parts = [
        "-" if g is None else f"{np.dtype(g[0]).str}[{'x'.join(map(str, g[1]))}]" for g in guard
    ]
    return ", ".join(parts)


class SpecializingFunction(CompiledFunction):
    """A public function with dynamic input dims that keeps static builds for the
    shapes it is called with (see the module docstring)."""

    def __init__(
        self, dynamic: CompiledFunction, build: Build, probe: Probe, kept: int, after: int
    ):
        super().__init__(dynamic.signature, dynamic._native, dynamic._device_arrays)
        self.dynamic = dynamic
        self.kept, self.after = kept, after
        self._build, self._probe = build, probe
        self._arrays = [isinstance(t, TensorType) for t in dynamic.signature.inputs]
        self._only_arrays = all(self._arrays)
        # Static builds by guard, least recently used first; the dynamic build where a
        # static one failed to compile.
        self._static: OrderedDict[Guard, CompiledFunction] = OrderedDict()
        self._seen: OrderedDict[Guard, int] = OrderedDict()
        self._hits = self._misses = 0

    def cache_info(self) -> CacheInfo:
        """Calls a static build ran, calls the dynamic build ran, static builds kept."""
        built = sum(f is not self.dynamic for f in self._static.values())
        return CacheInfo(self._hits, self._misses, built)

    def guard(self, args: Sequence[Any]) -> Guard | None:
        """Each array argument's dtype and shape; None for a call the guard cannot read
        (an array given as a list, a wrong count), which the dynamic build checks. Read
        on every call: the common case (arrays only) builds one tuple and no text."""
        if len(args) != len(self._arrays):
            return None
        try:
            if self._only_arrays:
                return tuple([(arg.dtype, arg.shape) for arg in args])
            pairs = zip(args, self._arrays, strict=True)
            return tuple([(a.dtype, a.shape) if is_array else None for a, is_array in pairs])
        except AttributeError:
            return None

    def __call__(self, *args: Any) -> Any:
        guard = self.guard(args)
        chosen = None if guard is None else self._static.get(guard)
        if chosen is None and guard is not None:
            chosen = self._specialized(guard, args)
        elif chosen is not None:
            self._static.move_to_end(guard)
        if chosen is None or chosen is self.dynamic:
            self._misses += 1
            return self.dynamic(*args)
        self._hits += 1
        return chosen(*args)

    def _specialized(self, guard: Guard, args: Sequence[Any]) -> CompiledFunction | None:
        """The static build for `guard` if this call is the one to make it (or a past
        process kept it on disk); None while the dynamic build runs these shapes."""
        count = self._seen.pop(guard, 0) + 1
        self._seen[guard] = count
        if len(self._seen) > SEEN:
            self._seen.popitem(last=False)
        text = shapes_text(guard)
        found = self._probe(text) if count == 1 and self.after > 1 else None
        if found is None and count >= self.after:
            self.signature.check(args, self._device_arrays)  # a bad call fails as before
            found = self._build(args, text) or self.dynamic
        if found is None:
            return None
        del self._seen[guard]
        self._static[guard] = found
        while len(self._static) > self.kept:
            self._static.popitem(last=False)
        return found

    def __repr__(self) -> str:
        info = self.cache_info()
        return f"{super().__repr__()[:-1]}, {info.variants} of {self.kept} static builds>"


def specializing(
    executable: Executable,
    source: Source,
    options: CompileOptions,
    compile_module: Callable[[Source, CompileOptions, str], Executable],
) -> Executable:
    """`executable` with each public function that has dynamic input dims specialising
    (a copy: the executable itself stays as the compile cache keeps it)."""
    dynamic = [name for name, f in executable.functions.items() if has_dynamic_inputs(f.signature)]
    if not dynamic:
        return executable
    static_options = replace(options, specialize=0)

    def key(name: str, shapes: str) -> str:
        return specialized_cache_key(executable.cache_key, name, shapes, static_options)

    def probe(name: str, shapes: str) -> CompiledFunction | None:
        kept = lookup(key(name, shapes), static_options, Timer())
        return None if kept is None else kept.functions.get(name)

    def build(name: str, args: Sequence[Any], shapes: str) -> CompiledFunction | None:
        try:
            fixed = static_source(source, name, args)
            if fixed is not None:
                return compile_module(fixed, static_options, key(name, shapes))[name]
            reason = "its arguments' dims cannot be fixed"
        except CompileError as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else "error"
        warnings.warn(
            f"mlc: no static build of @{name} for {shapes} ({reason}); "
            "these shapes run the dynamic build",
            SpecializationWarning,
            stacklevel=4,
        )
        return None

    specialized = copy.copy(executable)
    specialized.functions = dict(executable.functions)
    for name in dynamic:
        specialized.functions[name] = SpecializingFunction(
            executable.functions[name],
            lambda args, shapes, name=name: build(name, args, shapes),
            lambda shapes, name=name: probe(name, shapes),
            options.specialize,
            options.specialize_after,
        )
    return specialized


def static_source(source: Source, function: str, args: Sequence[Any]) -> Source | None:
    """The program of `source` with `function`'s arguments of `args`' shapes; None if
    they do not fit its signature."""
    if source.kind in (SourceKind.ONNX_FILE, SourceKind.ONNX_MODEL):
        # Imported here: the optional `onnx` package.
        import onnx

        model = source.value
        if source.kind is SourceKind.ONNX_FILE:
            model = onnx.load(str(source.value))
        names = [info.name for info in graph_inputs(model)]
        shapes = {n: tuple(a.shape) for n, a in zip(names, args, strict=True)}
        return Source.of(fix_dims(model, shapes))
    # Imported here: the profiler imports the compiler.
    from mlc.profiler.costs import at_call_shapes

    module = source.load()
    fixed = at_call_shapes(module, function, args)
    return None if fixed is module else Source.of(fixed)

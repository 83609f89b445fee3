"""
`mlc.jit`: compile a Python function on its first call and reuse it under guards.

The compiler side of the Python frontend: `mlc.frontends.trace` turns a call into a
program, and this module decides when to trace and compiles what it traced.

A call is looked up by its guards: each array argument's dtype and shape (a dim
compiled dynamic matches any size but 0 and 1, which stay static since the backend
never broadcasts a dynamic dim), every other argument's value (its identity if it
is not hashable), and the identities of the globals and closure cells the function
names. A miss traces the function (`mlc.trace`'s machinery) and compiles it with
`mlc.compile`. Small arrays the function captures are compiled in as constants,
guarded by identity only (changing one in place is not seen: assign a new one);
large ones (`mlc.frontends.trace.pieces.PARAMETER_SIZE` elements and up) are passed as arguments, so
they stay out of the IR and are read afresh at each call.

Graph breaks split the function into compiled pieces (`mlc.frontends.trace.pieces`).

Device arrays: called with pycuda `GPUArray`s, the function is traced from their shapes
and dtypes and compiled for `cuda` (or for `target` when that is a GPU target), runs on
them and returns `GPUArray`s; nothing is copied to the host. Where the arrays live is
part of the guard key, so the same function called on numpy arrays has its own (CPU)
variant. One call takes its arrays from one side: numpy and device arrays mixed is a
`TypeError` (copy with `gpuarray.to_gpu(x)` or `x.get()` first), since a silent
transfer per call would cost more than the step it feeds. A device call cannot graph
break (reading a traced value in Python would copy it out): the break is an error at
the user's line; `dynamic="bucket"` does not pad device arrays.

Donation: `donate_argnums` gives array arguments' buffers to results of the same type
(`mlc.compiler.donation`, marked `ml.result_alias` for `bufferize`), so a step that
returns updated parameters writes them where the old ones were and returns the
caller's own arrays.

Dynamic shapes: `dynamic=False` compiles one variant per shape, up to
`max_variants`, then warns once and compiles dims as dynamic; `dynamic=True` makes
a dim dynamic once it changes between calls; `dynamic="bucket"` pads the dims that
`mlc.frontends.trace.bucketing.bucketable_dims` proves safe up to the next power of two and slices
the results back. Reading the size of a dynamic dim in Python pins the function
to static shapes.
"""

import functools
from collections import namedtuple
from collections.abc import Callable, Sequence
from types import CodeType, FunctionType, ModuleType
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Attribute

from mlc.backend.cuda import is_device_array
from mlc.compiler.compile_path import compile as compile_module
from mlc.compiler.donation import check_argnums, donate_arguments
from mlc.compiler.options import CompileOptions
from mlc.frontends.trace.bucketing import DimClass, bucketable_dims
from mlc.frontends.trace.pieces import (
    GraphBreak,
    NeedsStatic,
    NotBucketable,
    PieceTracer,
    Variant,
)
from mlc.frontends.trace.program import (
    bind_inputs,
    finish,
    function_name,
    is_array_arg,
)
from mlc.frontends.trace.tracer import (
    TraceError,
    Tracer,
    element_type,
    tracing,
)

CacheInfo = namedtuple("CacheInfo", ["hits", "misses", "graph_breaks", "variants"])


class RecompilationWarning(UserWarning):
    """A jitted function was compiled for too many shapes."""


def _next_power_of_two(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _code_names(code: CodeType) -> set[str]:
    """Global names a code object and the functions nested in it (lambdas, defs) use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _code_names(const)
    return names


def _referenced(fn: Any) -> tuple[list[tuple[dict[str, Any], str]], list[Any]]:
    """
    The globals and closure cells `fn` reads, following the Python functions it names
    (helpers it calls), so that rebinding any of them is seen as a guard failure.
    """
    names: list[tuple[dict[str, Any], str]] = []
    cells: list[Any] = []
    pending, seen = [fn], set[int]()
    while pending:
        function = pending.pop()
        code = getattr(function, "__code__", None)
        if code is None or id(function) in seen:
            continue
        seen.add(id(function))
        namespace = getattr(function, "__globals__", {})
        for name in sorted(_code_names(code)):
            names.append((namespace, name))
            if isinstance(namespace.get(name), FunctionType):
                pending.append(namespace[name])
        cells += list(getattr(function, "__closure__", None) or ())
        if (wrapped := getattr(function, "__wrapped__", None)) is not None:
            pending.append(wrapped)  # a decorator's wrapper: guard what it wraps reads
    return names, cells


def on_device_call(args: Sequence[Any]) -> bool:
    """
    Whether a call's arrays are device arrays (`GPUArray`s); a `TypeError` naming the
    first numpy array when both kinds are given.
    """
    device = [i for i, a in enumerate(args) if is_device_array(a)]
    if not device:
        return False
    host = [i for i, a in enumerate(args) if isinstance(a, np.ndarray | np.generic)]
    if host:
        raise TypeError(
            f"mlc.jit: argument {host[0]} is a numpy {type(args[host[0]]).__name__} but "
            f"argument {device[0]} is a GPUArray; pass every array on the device "
            "(gpuarray.to_gpu) or every array on the host (.get())"
        )
    return True


def device_target(target: str) -> str:
    """The target a call on device arrays compiles for: `target` if it is a GPU one."""
    return target if target in ("cuda", "gpu") else "cuda"


def _check_containers(args: Sequence[Any]) -> None:
    """Arrays inside lists, tuples or dicts could change unseen: they must be arguments."""
    for i, arg in enumerate(args):
        items = arg.values() if isinstance(arg, dict) else arg
        if isinstance(arg, list | tuple | dict) and any(is_array_arg(v) for v in items):
            raise TypeError(
                f"mlc.jit: argument {i} is a {type(arg).__name__} holding arrays; "
                "pass the arrays as separate arguments"
            )


def _value_key(value: Any, seen: list[Any]) -> Any:
    """
    A guard on a non-array argument: its value if it is a plain value, else its
    identity and, for an object with attributes (a model's `self`), the identities
    of its attributes, so that `self.w = new_array` is seen. Objects whose identity
    the key holds are added to `seen` (a variant keeps them alive, so that their ids
    are not reused by other objects while its key is stored).
    """
    if isinstance(value, bool | int | float | complex | str | bytes | type(None)):
        return ("value", type(value), value)
    seen.append(value)
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict) or isinstance(value, type | ModuleType | FunctionType):
        return _hashable_key(value)
    seen.extend(attributes.values())
    return ("object", id(value), tuple((k, id(v)) for k, v in attributes.items()))


def _hashable_key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return ("value", type(value), value)


class JitFunction:
    """A Python function compiled on first call, per guard key (see the module docstring)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        target: str = "cpu",
        dynamic: bool | str = False,
        max_variants: int = 8,
        precision: str = "f32",
        donate_argnums: int | Sequence[int] = (),
    ):
        if dynamic not in (False, True, "bucket"):
            raise ValueError(f'dynamic must be False, True or "bucket", got {dynamic!r}')
        CompileOptions.of(target, precision=precision)  # a bad option fails here, not at a call
        self.fn = fn
        self.target = target
        self.precision = precision
        self.donate_argnums = check_argnums(donate_argnums)
        self.dynamic = dynamic
        self.max_variants = max_variants
        self._variants: dict[Any, Variant] = {}
        self._hits = self._misses = self._graph_breaks = 0
        self._breaks: dict[GraphBreak, int] = {}
        self._first_shapes: dict[int, tuple[int, ...]] = {}
        self._dynamic_dims: set[tuple[int, int]] = set()
        self._all_dynamic = False
        self._static_only = False
        self._warned = False
        self._buckets: list[DimClass] | None = None if dynamic == "bucket" else []
        self._globals, self._cells = _referenced(fn)
        functools.update_wrapper(self, fn)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        """`@mlc.jit` on a method: the instance is the first argument (and guarded)."""
        if instance is None:
            return self
        return functools.partial(self, instance)

    # -- what users see -----------------------------------------------------------

    def cache_info(self) -> CacheInfo:
        """Calls served from the cache, calls that traced and compiled, breaks, variants."""
        return CacheInfo(self._hits, self._misses, self._graph_breaks, len(self._variants))

    @property
    def graph_breaks(self) -> list[GraphBreak]:
        """Each place a trace of this function broke, once, in the order first seen."""
        return list(self._breaks)

    def explain(self) -> str:
        """Where and why the function was split, one line per place (file:line:col)."""
        if not self._breaks:
            return f"{function_name(self.fn)}: no graph breaks"
        lines = [f"{function_name(self.fn)}: {len(self._breaks)} graph break site(s)"]
        lines += [f"{b} (seen {n} time(s))" for b, n in self._breaks.items()]
        return "\n".join(lines)

    def compile(self, module: ModuleOp, on_gpu: bool = False) -> Any:
        """`module` compiled for this function's target, or its GPU target for device calls
        (never `specialize`d: `dynamic=` decides which shapes get their own compile)."""
        target = device_target(self.target) if on_gpu else self.target
        return compile_module(module, target=target, precision=self.precision, specialize=False)

    # -- calls --------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            args = self._positional(args, kwargs)
        _check_containers(args)
        on_gpu = on_device_call(args)
        arrays = [a if on_gpu else np.asarray(a) for a in args if is_array_arg(a)]
        self._note_shapes(arrays)
        plan = {} if on_gpu else self._bucket_plan(args, arrays)
        seen: list[Any] = []
        key = (on_gpu, self._key(args, arrays, plan, seen))
        if (variant := self._variants.get(key)) is not None:
            if (found := self._run(variant, arrays, plan)) is not None:
                self._hits += 1
                return found
        else:
            if self._over_limit():
                return self(*args)
            variant = self._new_variant(key, arrays, seen)
        self._misses += 1
        return self._trace_call(variant, args, arrays, plan)

    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Keyword arguments bound to their parameters' positions (defaults filled in)."""
        import inspect

        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        if bound.kwargs:
            names = ", ".join(bound.kwargs)
            raise TypeError(f"mlc.jit: keyword-only arguments are not supported ({names})")
        return bound.args

    def _run(self, variant: Variant, arrays: list[np.ndarray], plan: dict[Any, int]) -> Any:
        padded = self._pad(arrays, plan)
        if (ran := variant.run(padded)) is None:
            return None
        outputs, results = ran
        return outputs.rebuild(variant.unpad(results, arrays))

    def _trace_call(
        self, variant: Variant, args: Sequence[Any], arrays: list[np.ndarray], plan: dict[Any, int]
    ) -> Any:
        try:
            return self._trace(variant, args, arrays, plan)
        except NeedsStatic:
            self._static_only, self._dynamic_dims, self._all_dynamic = True, set(), False
        except NotBucketable:
            self._buckets = []
        self._variants = {k: v for k, v in self._variants.items() if v is not variant}
        self._misses -= 1
        return self(*args)

    def _trace(
        self, variant: Variant, args: Sequence[Any], arrays: list[np.ndarray], plan: dict[Any, int]
    ) -> Any:
        padded = self._pad(arrays, plan)
        compile_piece = functools.partial(self.compile, on_gpu=variant.on_device)
        tracer = PieceTracer(self.fn, compile_piece, variant, padded)
        tracer.allow_breaks = not plan and not variant.on_device
        try:
            with tracing(tracer):
                bound = bind_inputs(tracer, self.fn, args, variant.types)
                output = self.fn(*bound)
                function, outputs = finish(tracer, function_name(self.fn), output, False)
                if self.donate_argnums:
                    donate_arguments(function, args, self.donate_argnums, function_name(self.fn))
        finally:
            self._graph_breaks += len(tracer.breaks)
            for b in tracer.breaks:
                self._breaks[b] = self._breaks.get(b, 0) + 1
        if plan:
            variant.slices = self._check_buckets(function, tracer, plan)
        node = tracer.node
        results = len(function.function_type.outputs)
        node.executable = compile_piece(ModuleOp([function])) if results else None
        node.results, node.outputs = results, outputs
        node.params = tuple(tracer.params)
        node.done = True
        values = node.call(padded, tracer.carried)
        return outputs.rebuild(variant.unpad(values, arrays))

    # -- guards -------------------------------------------------------------------

    def _key(
        self, args: Sequence[Any], arrays: list[np.ndarray], plan: dict[Any, int], seen: list[Any]
    ) -> Any:
        """The guard key of a call; `seen` gets the objects whose identities it holds."""
        shapes = tuple(
            (a.dtype.str, tuple(self._dim_key(i, d, n, plan) for d, n in enumerate(a.shape)))
            for i, a in enumerate(arrays)
        )
        values = tuple(_value_key(a, seen) for a in args if not is_array_arg(a))
        return shapes, values, self._globals_key(seen), tuple(sorted(plan))

    def _dim_key(self, arg: int, dim: int, size: int, plan: dict[Any, int]) -> int | None:
        if (arg, dim) in plan:
            return plan[(arg, dim)]
        if size in (0, 1):
            return size
        if self._all_dynamic or (arg, dim) in self._dynamic_dims:
            return None
        return size

    def _globals_key(self, seen: list[Any]) -> tuple[int, ...]:
        """The identities of the globals and closure cells the function names."""
        objects = [namespace[n] for namespace, n in self._globals if n in namespace]
        for cell in self._cells:
            try:
                objects.append(cell.cell_contents)
            except ValueError:  # a cell not filled yet
                continue
        seen.extend(objects)
        return tuple(id(o) for o in objects)

    def _note_shapes(self, arrays: list[np.ndarray]) -> None:
        """Automatic dynamic: a dim that differs from the first call's becomes dynamic."""
        if self.dynamic is not True or self._static_only:
            return
        for i, a in enumerate(arrays):
            first = self._first_shapes.setdefault(i, a.shape)
            if len(first) == len(a.shape):
                self._dynamic_dims |= {(i, d) for d, n in enumerate(a.shape) if n != first[d]}

    def _over_limit(self) -> bool:
        """Past `max_variants`: warn once and compile dynamic dims from now on."""
        if len(self._variants) < self.max_variants or self._warned:
            return False
        self._warned = True
        import warnings

        fallback = "static shapes (it reads array sizes)" if self._static_only else "dynamic dims"
        warnings.warn(
            f"mlc.jit: {function_name(self.fn)} was compiled {len(self._variants)} times for "
            f"different arguments; from now on it is compiled with {fallback}",
            RecompilationWarning,
            stacklevel=3,
        )
        if self._static_only:
            return False
        self._all_dynamic = True
        return True

    def _new_variant(self, key: Any, arrays: list[np.ndarray], seen: list[Any]) -> Variant:
        on_device, (dims, *_) = key
        types: list[Attribute] = [
            TensorType(element_type(a.dtype), [DYNAMIC_INDEX if n is None else n for n in shape])
            for a, (_, shape) in zip(arrays, dims, strict=True)
        ]
        variant = Variant(types, kept=seen, on_device=on_device)
        self._variants[key] = variant
        return variant

    # -- buckets ------------------------------------------------------------------

    def _bucket_plan(self, args: Sequence[Any], arrays: list[np.ndarray]) -> dict[Any, int]:
        """The padded size of each argument dim this call buckets."""
        if self._buckets is None:
            self._buckets = self._find_buckets(args, arrays)
        plan: dict[Any, int] = {}
        for group in self._buckets:
            sizes = {arrays[i].shape[d] for i, d in group.args}
            if len(sizes) == 1 and (size := sizes.pop()) >= 2:
                plan.update({dim: _next_power_of_two(size) for dim in group.args})
        return plan

    def _find_buckets(self, args: Sequence[Any], arrays: list[np.ndarray]) -> list[DimClass]:
        """Trace once at the exact shapes (without compiling) and analyse the program."""
        tracer = Tracer(self.fn)
        types = [TensorType(element_type(a.dtype), list(a.shape)) for a in arrays]
        try:
            with tracing(tracer):
                bound = bind_inputs(tracer, self.fn, args, types)
                function, _ = finish(tracer, function_name(self.fn), self.fn(*bound), False)
        except TraceError:
            return []  # a break or an error: the exact path reports or handles it
        return bucketable_dims(function, tracer.shape_reads)

    def _check_buckets(
        self, function: Any, tracer: Tracer, plan: dict[Any, int]
    ) -> list[tuple[int, int, tuple[int, int]]]:
        """Prove the padded program keeps rows apart too; the result dims to slice."""
        groups = bucketable_dims(function, tracer.shape_reads)
        slices = []
        covered: set[Any] = set()
        for group in groups:
            padded = [d for d in group.args if d in plan]
            if padded:
                covered.update(padded)
                slices += [(r, d, padded[0]) for r, d in group.results]
        if covered != set(plan):
            raise NotBucketable
        return slices

    @staticmethod
    def _pad(arrays: list[np.ndarray], plan: dict[Any, int]) -> list[np.ndarray]:
        if not plan:
            return arrays
        padded = []
        for i, a in enumerate(arrays):
            widths = [(0, plan.get((i, d), n) - n) for d, n in enumerate(a.shape)]
            padded.append(np.pad(a, widths, mode="edge") if any(w for _, w in widths) else a)
        return padded


def jit(
    fn: Callable[..., Any] | None = None,
    *,
    target: str = "cpu",
    dynamic: bool | str = False,
    max_variants: int = 8,
    precision: str = "f32",
    donate_argnums: int | Sequence[int] = (),
) -> Any:
    """
    Compile `fn` on its first call and cache compiled variants by guards.

    Use as `mlc.jit(fn)`, `@mlc.jit` or `@mlc.jit(target=..., dynamic=...)`;
    `dynamic` is False (one variant per shape), True (dims that change become
    dynamic) or "bucket" (pad safe dims to powers of two); `precision` as
    `mlc.compile`'s. `donate_argnums` names array arguments the caller gives away:
    each is paired with the first result of its shape and dtype, which the compiled
    program writes into the argument's buffer (in place where safe) and the call
    returns as that same array, so no result buffer is allocated for it. The
    argument's old values are gone after the call.
    """
    if fn is None:
        return lambda f: JitFunction(f, target, dynamic, max_variants, precision, donate_argnums)  # pyright: ignore[reportUnknownLambdaType]
    return JitFunction(fn, target, dynamic, max_variants, precision, donate_argnums)

"""
`mlc.jit`: compile a Python function on its first call and reuse it under guards.

A call is looked up by its guards: each array argument's dtype and shape (a dim
compiled dynamic matches any size but 0 and 1, which stay static since the backend
never broadcasts a dynamic dim), every other argument's value (its identity if it
is not hashable), and the identities of the globals and closure cells the function
names. A miss traces the function (`mlc.trace`'s machinery) and compiles it with
`mlc.compile`. Arrays the function captures are compiled in as constants and
guarded by identity only: changing one in place is not seen (assign a new array).

Graph breaks. When traced code needs a concrete value (`if x.sum() > 0:`,
`float(x)`, a numpy function mlc does not trace), the function is split there: the
ops recorded so far are compiled as one piece, returning the value and every
traced array Python still holds; the piece runs, the value goes back to Python,
and tracing goes on in a fresh piece that takes those arrays as arguments. Each
piece records which piece follows for each value seen (the guard: the truth for
`bool()`, the exact value otherwise), so a later call runs the pieces one after
another without Python, and a value not seen before traces the function again.

    piece 0 --(value guard)--> piece 1 --(value guard)--> ... --> results
                          \\--> piece 1' (another value, traced when first seen)

Dynamic shapes: `dynamic=False` compiles one variant per shape, up to
`max_variants`, then warns once and compiles dims as dynamic; `dynamic=True` makes
a dim dynamic once it changes between calls; `dynamic="bucket"` pads the dims that
`bucketing.bucketable_dims` proves safe up to the next power of two and slices
the results back. Reading the size of a dynamic dim in Python pins the function
to static shapes.
"""

import functools
import weakref
from collections import namedtuple
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, OpResult, SSAValue

from mlc.diagnostics import SourceLoc
from mlc.frontends.trace.bucketing import DimClass, bucketable_dims
from mlc.frontends.trace.program import (
    Outputs,
    bind_inputs,
    finish,
    function_name,
    is_array_arg,
)
from mlc.frontends.trace.proxy import TracedArray
from mlc.frontends.trace.tracer import (
    TraceError,
    Tracer,
    element_type,
    trace_error,
    tracing,
    user_source_loc,
)

CacheInfo = namedtuple("CacheInfo", ["hits", "misses", "graph_breaks", "variants"])


class RecompilationWarning(UserWarning):
    """A jitted function was compiled for too many shapes."""


@dataclass(frozen=True)
class GraphBreak:
    """Where traced code needed a concrete value, and why."""

    location: SourceLoc | None
    reason: str

    def __str__(self) -> str:
        return f"{self.location or '<unknown>'}: graph break: {self.reason}"


class _NeedsStatic(Exception):
    """Python read the size of a dynamic dim: the variant must be static."""


class _NotBucketable(Exception):
    """A padded trace needed a concrete value: padding could change it."""


@dataclass(eq=False)
class _Piece:
    """One compiled piece of a function, and the pieces that follow it by guard."""

    done: bool = False
    executable: Any = None
    results: int = 0
    carry: int = 0  # leading results that become arguments of the next piece
    break_index: int = 0  # the result holding the break value
    truth_only: bool = False  # `bool()`: only the value's truth is guarded
    outputs: Outputs | None = None  # the function's results (last piece only)
    children: dict[Any, "_Piece"] = field(default_factory=dict[Any, "_Piece"])

    def call(self, arrays: Sequence[np.ndarray], carried: Sequence[np.ndarray]) -> list[Any]:
        if self.executable is None:
            return []
        out = self.executable(*arrays, *carried)
        return [out] if self.results == 1 else list(out)

    def key(self, value: np.ndarray) -> Any:
        if self.truth_only:
            return bool(value)
        return (value.dtype.str, value.shape, value.tobytes())


@dataclass(eq=False)
class _Variant:
    """The compiled pieces for one guard key; bucketed variants slice their results."""

    types: list[Attribute]
    root: _Piece = field(default_factory=_Piece)
    slices: list[tuple[int, int, tuple[int, int]]] = field(
        default_factory=list[tuple[int, int, tuple[int, int]]]
    )

    def run(self, arrays: Sequence[np.ndarray]) -> tuple[Outputs, list[Any]] | None:
        """The results, or None when a guard meets a value no piece was traced for."""
        node, carried = self.root, []
        while node.done and node.outputs is None:
            results = node.call(arrays, carried)
            carried = results[: node.carry]
            value = np.asarray(results[node.break_index])
            if (child := node.children.get(node.key(value))) is None:
                return None
            node = child
        if not node.done or node.outputs is None:
            return None
        return node.outputs, node.call(arrays, carried)

    def unpad(self, results: list[Any], arrays: Sequence[np.ndarray]) -> list[Any]:
        for index, dim, (arg, arg_dim) in self.slices:
            keep = [slice(None)] * results[index].ndim
            keep[dim] = slice(0, arrays[arg].shape[arg_dim])
            results[index] = np.ascontiguousarray(results[index][tuple(keep)])
        return results


class _JitTracer(Tracer):
    """A tracer that answers concrete values by compiling and running the piece so far."""

    def __init__(self, jit: "JitFunction", variant: _Variant, arrays: Sequence[np.ndarray]):
        super().__init__(jit.fn)
        self.jit = jit
        self.types = variant.types
        self.arrays = arrays
        self.node = variant.root
        self.carried: list[np.ndarray] = []
        self.arrays_made: list[weakref.ref[TracedArray]] = []
        self.breaks: list[GraphBreak] = []
        self.allow_breaks = True

    def register(self, array: Any) -> None:
        self.arrays_made.append(weakref.ref(array))

    def dynamic_shape_read(self, array: Any) -> None:
        raise _NeedsStatic

    def concretize(self, array: Any, why: str) -> Any:
        if not self.allow_breaks:
            raise _NotBucketable
        if self.region_depth:
            trace_error(
                f"{why} inside an ops.cond branch or loop body needs a value that changes "
                "with each run of the traced body: use ops.cond or ops.where there"
            )
        self.breaks.append(GraphBreak(user_source_loc(), why))
        held = self._held()
        carried = list(dict.fromkeys(p.value for p in held if not self._is_input(p.value)))
        outs = carried if array.value in carried else [*carried, array.value]
        node = self.node
        node.executable = self._compile_piece(outs)
        node.results, node.carry = len(outs), len(carried)
        node.break_index, node.truth_only = outs.index(array.value), why == "bool()"
        results = node.call(self.arrays, self.carried)
        node.done = True
        self.carried = results[: node.carry]
        self._continue_after(held, carried)
        value = np.asarray(results[node.break_index])
        self.node = node.children.setdefault(node.key(value), _Piece())
        return value

    def _held(self) -> list[TracedArray]:
        """The traced arrays of this piece that Python still holds."""
        held = []
        for ref in self.arrays_made:
            array = ref()
            if array is not None and self._in_block(array.value):
                held.append(array)
        return held

    def _in_block(self, value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            return value.block is self.block
        return isinstance(value, OpResult) and value.op.parent_block() is self.block

    def _is_input(self, value: SSAValue) -> bool:
        return isinstance(value, BlockArgument) and value.index < len(self.types)

    def _compile_piece(self, outs: list[SSAValue]) -> Any:
        from xdsl.dialects import func
        from xdsl.ir import Region

        self.emit(func.ReturnOp(*outs))
        inputs = [a.type for a in self.block.args]
        name = function_name(self.jit.fn)
        function = func.FuncOp(name, (inputs, [v.type for v in outs]), Region(self.block))
        return self.jit.compile(ModuleOp([function]))

    def _continue_after(self, held: list[TracedArray], carried: list[SSAValue]) -> None:
        """Start the next piece; held arrays now name its arguments."""
        old = self.block
        self.block = Block(arg_types=[*self.types, *(v.type for v in carried)])
        renamed = dict(zip([*old.args[: len(self.types)], *carried], self.block.args, strict=True))
        for new, old_arg in zip(self.block.args, old.args, strict=False):
            new.name_hint = old_arg.name_hint
        for array in held:
            array.value = renamed[array.value]
        self.arrays_made = [weakref.ref(a) for a in held]


def _next_power_of_two(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _check_containers(args: Sequence[Any]) -> None:
    """Arrays inside lists, tuples or dicts could change unseen: they must be arguments."""
    for i, arg in enumerate(args):
        items = arg.values() if isinstance(arg, dict) else arg
        if isinstance(arg, list | tuple | dict) and any(is_array_arg(v) for v in items):
            raise TypeError(
                f"mlc.jit: argument {i} is a {type(arg).__name__} holding arrays; "
                "pass the arrays as separate arguments"
            )


def _value_key(value: Any, keep: list[Any]) -> Any:
    """A guard on a non-array argument: its value if hashable, else its identity."""
    try:
        hash(value)
    except TypeError:
        keep.append(value)  # holding it keeps its id from being reused
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
    ):
        if dynamic not in (False, True, "bucket"):
            raise ValueError(f'dynamic must be False, True or "bucket", got {dynamic!r}')
        self.fn = fn
        self.target = target
        self.dynamic = dynamic
        self.max_variants = max_variants
        self._variants: dict[Any, _Variant] = {}
        self._hits = self._misses = self._graph_breaks = 0
        self._breaks: dict[GraphBreak, int] = {}
        self._first_shapes: dict[int, tuple[int, ...]] = {}
        self._dynamic_dims: set[tuple[int, int]] = set()
        self._all_dynamic = False
        self._static_only = False
        self._warned = False
        self._buckets: list[DimClass] | None = None if dynamic == "bucket" else []
        self._kept: list[Any] = []
        functools.update_wrapper(self, fn)

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

    def compile(self, module: ModuleOp) -> Any:
        import mlc

        return mlc.compile(module, target=self.target)

    # -- calls --------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            args = self._positional(args, kwargs)
        _check_containers(args)
        arrays = [np.asarray(a) for a in args if is_array_arg(a)]
        self._note_shapes(arrays)
        plan = self._bucket_plan(args, arrays)
        key = self._key(args, arrays, plan)
        if (variant := self._variants.get(key)) is not None:
            if (found := self._run(variant, arrays, plan)) is not None:
                self._hits += 1
                return found
        else:
            if self._over_limit():
                return self(*args)
            variant = self._new_variant(key, arrays, plan)
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

    def _run(self, variant: _Variant, arrays: list[np.ndarray], plan: dict[Any, int]) -> Any:
        padded = self._pad(arrays, plan)
        if (ran := variant.run(padded)) is None:
            return None
        outputs, results = ran
        return outputs.rebuild(variant.unpad(results, arrays))

    def _trace_call(
        self, variant: _Variant, args: Sequence[Any], arrays: list[np.ndarray], plan: dict[Any, int]
    ) -> Any:
        try:
            return self._trace(variant, args, arrays, plan)
        except _NeedsStatic:
            self._static_only, self._dynamic_dims, self._all_dynamic = True, set(), False
        except _NotBucketable:
            self._buckets = []
        self._variants = {k: v for k, v in self._variants.items() if v is not variant}
        self._misses -= 1
        return self(*args)

    def _trace(
        self, variant: _Variant, args: Sequence[Any], arrays: list[np.ndarray], plan: dict[Any, int]
    ) -> Any:
        padded = self._pad(arrays, plan)
        tracer = _JitTracer(self, variant, padded)
        tracer.allow_breaks = not plan
        try:
            with tracing(tracer):
                bound = bind_inputs(tracer, self.fn, args, variant.types)
                output = self.fn(*bound)
                function, outputs = finish(tracer, function_name(self.fn), output, False)
        finally:
            self._graph_breaks += len(tracer.breaks)
            for b in tracer.breaks:
                self._breaks[b] = self._breaks.get(b, 0) + 1
        if plan:
            variant.slices = self._check_buckets(function, tracer, plan)
        node = tracer.node
        results = len(function.function_type.outputs)
        node.executable = self.compile(ModuleOp([function])) if results else None
        node.results, node.outputs = results, outputs
        node.done = True
        values = node.call(padded, tracer.carried)
        return outputs.rebuild(variant.unpad(values, arrays))

    # -- guards -------------------------------------------------------------------

    def _key(self, args: Sequence[Any], arrays: list[np.ndarray], plan: dict[Any, int]) -> Any:
        shapes = tuple(
            (a.dtype.str, tuple(self._dim_key(i, d, n, plan) for d, n in enumerate(a.shape)))
            for i, a in enumerate(arrays)
        )
        values = tuple(_value_key(a, self._kept) for a in args if not is_array_arg(a))
        return shapes, values, self._globals_key(), tuple(sorted(plan))

    def _dim_key(self, arg: int, dim: int, size: int, plan: dict[Any, int]) -> int | None:
        if (arg, dim) in plan:
            return plan[(arg, dim)]
        if size in (0, 1):
            return size
        if self._all_dynamic or (arg, dim) in self._dynamic_dims:
            return None
        return size

    def _globals_key(self) -> tuple[int, ...]:
        """The identities of the globals and closure cells the function names."""
        code = getattr(self.fn, "__code__", None)
        if code is None:
            return ()
        namespace = getattr(self.fn, "__globals__", {})
        objects = [namespace[n] for n in code.co_names if n in namespace]
        for cell in getattr(self.fn, "__closure__", None) or ():
            try:
                objects.append(cell.cell_contents)
            except ValueError:  # a cell not filled yet
                continue
        return tuple(id(o) for o in objects)

    def _note_shapes(self, arrays: list[np.ndarray]) -> None:
        """Automatic dynamic: a dim that differs from the first call's becomes dynamic."""
        if self.dynamic is not True or self._static_only:
            return
        for i, a in enumerate(arrays):
            first = self._first_shapes.setdefault(i, a.shape)
            if len(first) == a.ndim:
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

    def _new_variant(self, key: Any, arrays: list[np.ndarray], plan: dict[Any, int]) -> _Variant:
        dims = key[0]
        types: list[Attribute] = [
            TensorType(element_type(a.dtype), [DYNAMIC_INDEX if n is None else n for n in shape])
            for a, (_, shape) in zip(arrays, dims, strict=True)
        ]
        variant = _Variant(types)
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
            raise _NotBucketable
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
) -> Any:
    """
    Compile `fn` on its first call and cache compiled variants by guards.

    Use as `mlc.jit(fn)`, `@mlc.jit` or `@mlc.jit(target=..., dynamic=...)`;
    `dynamic` is False (one variant per shape), True (dims that change become
    dynamic) or "bucket" (pad safe dims to powers of two).
    """
    if fn is None:
        return lambda f: JitFunction(f, target, dynamic, max_variants)  # pyright: ignore[reportUnknownLambdaType]
    return JitFunction(fn, target, dynamic, max_variants)

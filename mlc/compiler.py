"""
`mlc.compile`: from a program to a Python callable on numpy arrays.

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
stage of a compile to stderr; `Executable.compile_times` holds the same numbers.
"""

import gc
import hashlib
import json
import os
import sys
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from mlc import diagnostics, pipeline
from mlc.diagnostics import DiagnosticError
from mlc.driver import Timer
from mlc.gpu_architectures import PTX_FEATURES
from mlc.ir import parse_module, print_module, type_text
from mlc.lowering.graph.shape_inference import ArgumentDims, argument_constraints

if TYPE_CHECKING:
    from mlc.backend.jit import CompiledObject, JITModule

CACHE_SIZE = 64
GPU_TARGETS = ("gpu", "cuda")


class CompileError(DiagnosticError):
    """The program could not be compiled: one-line diagnostics with locations."""


@dataclass(frozen=True)
class Signature:
    """A public function's argument and result types, as the program wrote them."""

    name: str
    inputs: tuple[Attribute, ...]
    outputs: tuple[Attribute, ...]
    arg_names: tuple[str, ...]
    constraints: tuple[ArgumentDims, ...] = ()

    @staticmethod
    def of(function: func.FuncOp) -> "Signature":
        names = tuple(
            f"%{arg.name_hint}" if arg.name_hint else f"#{i}" for i, arg in enumerate(function.args)
        )
        return Signature(
            function.sym_name.data,
            tuple(function.function_type.inputs),
            tuple(function.function_type.outputs),
            names,
            tuple(argument_constraints(function)),
        )

    def to_json(self) -> dict[str, Any]:
        """The signature as JSON data (types in MLIR syntax), for the disk cache."""
        return {
            "name": self.name,
            "inputs": [type_text(t) for t in self.inputs],
            "outputs": [type_text(t) for t in self.outputs],
            "arg_names": list(self.arg_names),
            "constraints": [[[list(d) for d in c.dims], c.size] for c in self.constraints],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> "Signature":
        """The signature `to_json` described; `ValueError`/`KeyError`/`ParseError` if bad."""
        context = Context()  # builtin types only: no dialect needs loading
        types = lambda texts: tuple(Parser(context, t).parse_attribute() for t in texts)  # noqa: E731
        return Signature(
            str(data["name"]),
            types(data["inputs"]),
            types(data["outputs"]),
            tuple(str(n) for n in data["arg_names"]),
            tuple(
                ArgumentDims(tuple((int(i), int(d)) for i, d in dims), int(size))
                for dims, size in data["constraints"]
            ),
        )

    def check(self, args: Sequence[Any], device_arrays: bool = False) -> list[Any]:
        """
        The arguments as the backend takes them; raises on any mismatch.

        With `device_arrays`, pycuda `GPUArray`s are accepted where arrays are expected.
        """
        if self._conforming(args, device_arrays):
            return list(args)
        if len(args) != len(self.inputs):
            raise TypeError(f"@{self.name} takes {len(self.inputs)} argument(s), got {len(args)}")
        checked: list[Any] = []
        for i, (arg, type_) in enumerate(zip(args, self.inputs, strict=True)):
            what = f"@{self.name}: argument {i} ({self.arg_names[i]})"
            if isinstance(type_, TensorType):
                dtype, shape = self._array_types[i]
                checked.append(_check_array(what, arg, type_, dtype, device_arrays, shape))
            else:
                checked.append(_check_scalar(what, arg, type_))
        for constraint in self.constraints:
            self._check_constraint(constraint, checked)
        return checked

    def _conforming(self, args: Sequence[Any], device_arrays: bool) -> bool:
        """
        Whether `args` pass every check as they are: contiguous arrays (or `GPUArray`s)
        of the right dtypes and static sizes, no scalars. The common case, checked
        without building a message; anything else takes the full check, which says
        what is wrong.
        """
        expected = self._array_types
        if len(args) != len(self.inputs) or len(expected) != len(args):
            return False
        for i, arg in enumerate(args):
            dtype, shape = expected[i]
            kind = type(arg)
            if kind is not np.ndarray and not (device_arrays and kind.__name__ == "GPUArray"):
                return False
            if arg.dtype != dtype or len(arg.shape) != len(shape):
                return False
            if not arg.flags.c_contiguous:
                return False
            for want, got in zip(shape, arg.shape):
                if want != got and want != DYNAMIC_INDEX:
                    return False
        for constraint in self.constraints:
            self._check_constraint(constraint, args)
        return True

    @cached_property
    def _array_types(self) -> dict[int, tuple[np.dtype, tuple[int, ...]]]:
        """Each tensor argument's dtype and shape, worked out once (not on every call)."""
        from mlc.backend.runtime import dtype_of

        return {
            i: (dtype_of(t.element_type), tuple(t.get_shape()))
            for i, t in enumerate(self.inputs)
            if isinstance(t, TensorType)
        }

    def _check_constraint(self, constraint: ArgumentDims, args: Sequence[Any]) -> None:
        """Dynamic dims the program ties together must agree (a size-1 broadcast is no tie)."""
        sizes = [(i, d, args[i].shape[d]) for i, d in constraint.dims]
        wanted = constraint.size if constraint.size != DYNAMIC_INDEX else sizes[0][2]
        if all(size == wanted for _, _, size in sizes):
            return
        listed = ", ".join(f"{self.arg_names[i]} dim {d} is {size}" for i, d, size in sizes)
        need = f"size {constraint.size}" if constraint.size != DYNAMIC_INDEX else "one size"
        raise ValueError(
            f"@{self.name}: these dims must have {need} (the program ties them together): {listed}"
        )


def _check_array(
    what: str,
    arg: Any,
    type_: TensorType,
    dtype: np.dtype,
    device_arrays: bool = False,
    shape: Sequence[int] | None = None,
) -> np.ndarray:
    on_device = device_arrays and type(arg).__name__ == "GPUArray"
    if not isinstance(arg, np.ndarray) and not on_device:
        expected = type_text(type_)
        raise TypeError(f"{what}: expected a numpy array for {expected}, got {type(arg).__name__}")
    if arg.dtype != dtype:
        expected = type_text(type_)
        raise TypeError(f"{what}: expected dtype {dtype} for {expected}, got {arg.dtype}")
    shape = type_.get_shape() if shape is None else shape
    if arg.ndim != len(shape):
        expected = type_text(type_)
        raise ValueError(
            f"{what}: expected rank {len(shape)} for {expected}, got shape {arg.shape}"
        )
    for dim, (want, got) in enumerate(zip(shape, arg.shape, strict=True)):
        if want != DYNAMIC_INDEX and want != got:
            expected = type_text(type_)
            raise ValueError(
                f"{what}: expected size {want} in dim {dim} for {expected}, got shape {arg.shape}"
            )
    if on_device:
        return arg
    return np.require(arg, requirements="C")  # keeps rank 0, unlike ascontiguousarray


def _check_scalar(what: str, arg: Any, type_: Attribute) -> Any:
    if isinstance(type_, IndexType | IntegerType):
        if isinstance(arg, bool | np.bool_) and not (
            isinstance(type_, IntegerType) and type_.width.data == 1
        ):
            raise TypeError(f"{what}: expected an integer for {type_text(type_)}, got bool")
        if not isinstance(arg, int | np.integer | bool | np.bool_):
            raise TypeError(
                f"{what}: expected an integer for {type_text(type_)}, got {type(arg).__name__}"
            )
        return int(arg)
    if not isinstance(arg, int | float | np.integer | np.floating):
        raise TypeError(
            f"{what}: expected a number for {type_text(type_)}, got {type(arg).__name__}"
        )
    return float(arg)


class CompiledFunction:
    """One public function of a compiled program, callable on numpy arrays."""

    def __init__(self, signature: Signature, native: Any, device_arrays: bool = False):
        self.signature = signature
        self._native = native
        self._device_arrays = device_arrays

    @property
    def name(self) -> str:
        return self.signature.name

    def __call__(self, *args: Any) -> Any:
        return self._native(*self.signature.check(args, self._device_arrays))

    def __repr__(self) -> str:
        inputs = ", ".join(type_text(t) for t in self.signature.inputs)
        outputs = ", ".join(type_text(t) for t in self.signature.outputs)
        return f"<mlc function @{self.name}({inputs}) -> ({outputs})>"


class Executable:
    """
    A compiled program. Calling it calls its entry function: `main` if there is
    one, else its only public function; others are reachable by name (`exe["f"]`).
    """

    def __init__(
        self,
        functions: dict[str, CompiledFunction],
        jit: "JITModule | None",
        target: str,
        *,
        from_cache: bool = False,
        compile_times: dict[str, float] | None = None,
        ptx: str = "",
    ):
        self.functions = functions
        self.jit = jit  # None for a GPU program, whose kernels are `ptx`
        self.ptx = ptx
        self.target = target
        self.from_cache = from_cache  # the machine code came from the on-disk cache
        self.compile_times = compile_times or {}  # seconds per stage of this compile

    @property
    def llvm_ir(self) -> str:
        """The optimised LLVM IR (made from the kept bitcode on first use)."""
        return self.jit.optimized_ir if self.jit is not None else ""

    @property
    def entry(self) -> CompiledFunction:
        if "main" in self.functions:
            return self.functions["main"]
        if len(self.functions) == 1:
            return next(iter(self.functions.values()))
        names = ", ".join(f"@{name}" for name in self.functions) or "none"
        raise TypeError(f"no entry function: several public functions ({names}); use exe['name']")

    def __getitem__(self, name: str) -> CompiledFunction:
        if name not in self.functions:
            names = ", ".join(f"@{n}" for n in self.functions)
            raise KeyError(f"no public function @{name} (functions: {names})")
        return self.functions[name]

    def __call__(self, *args: Any) -> Any:
        return self.entry(*args)


_cache: OrderedDict[str, Executable] = OrderedDict()


def load(src: "str | os.PathLike[str] | ModuleOp") -> ModuleOp:
    """A verified module from MLIR text, a path to a .mlir or .onnx file, or a module."""
    if isinstance(src, ModuleOp):
        return src.clone()
    if _is_onnx(src):
        from mlc.frontends.onnx import import_onnx
        from mlc.frontends.onnx.model import OnnxImportError

        try:
            return import_onnx(src)  # pyright: ignore[reportArgumentType]
        except OnnxImportError as error:
            raise CompileError(error.diagnostics) from None
    name, text = "<string>", src
    if isinstance(src, os.PathLike) or (isinstance(src, str) and _looks_like_path(src)):
        path = Path(src)
        try:
            text = path.read_text()
        except OSError as error:
            raise CompileError(
                [diagnostics.Diagnostic("error", f"cannot read {path}: {error.strerror}")]
            ) from None
        name = str(path)
    assert isinstance(text, str)
    try:
        module = parse_module(text, name)
    except ParseError as error:
        raise CompileError([diagnostics.from_parse_error(error)]) from None
    if errors := diagnostics.verify_module(module):
        raise CompileError(errors)
    return module


def _check_resources_held(module: ModuleOp) -> None:
    """Compiled code reads its `dense_resource` constants from this process's store."""
    from mlc import resources

    if unheld := resources.first_without_data(module):
        op, handle = unheld
        message = (
            f"dense_resource<{handle}> has no data: the text has no `dialect_resources` "
            "blob for it, and no frontend in this process made it"
        )
        raise CompileError([diagnostics.op_diagnostic(op, message)])


def _looks_like_path(text: str) -> bool:
    return (
        "\n" not in text and ("{" not in text) and (text.endswith(".mlir") or os.path.exists(text))
    )


def _is_onnx(src: object) -> bool:
    if isinstance(src, str | os.PathLike):
        return str(src).endswith(".onnx")
    return type(src).__name__ == "ModelProto"


def compile(
    src: Any,
    target: str = "cpu",
    *,
    emit: str | None = None,
    graph_passes: bool = True,
    allow_tf32: bool = False,
    sm: str | None = None,
) -> Any:
    """
    Compile `src` for `target`: MLIR text, a .mlir/.onnx path, an ONNX ModelProto or
    an xDSL `ModuleOp`. Returns an `Executable`, or with `emit=<stage>` the module as
    it is after that stage of `mlc.pipeline` (nothing is run). `graph_passes=False`
    skips the graph optimisations of the `mlc` stage (see `pipeline.lower`).
    `allow_tf32=True` lets f32 contractions on the GPU round their operands to tf32
    for the tensor cores (as torch's `allow_tf32`); f32 stays exact by default.
    GPU kernels are chosen for the device's architecture (and cached per
    architecture); with `emit`, for `sm` (e.g. "sm_75"; default: sm_80 and later).
    """
    _check_gpu_options(target, emit, allow_tf32, sm)
    timer = Timer()
    source_key = None
    if emit is None and target in pipeline.TARGET_STAGES and target not in GPU_TARGETS:
        with timer.phase("source hash"):
            source_key = _source_key(src, target, graph_passes)
        if source_key in _cache:
            _cache.move_to_end(source_key)
            return _cache[source_key]
        if source_key is not None and (cached := _load_cached(source_key, target, timer)):
            return _remember([source_key], cached, target, timer)
    with timer.phase("parse and verify"):
        module = load(src)
    if emit is None:
        _check_resources_held(module)
    if emit is not None:
        try:
            return pipeline.lower(module, target, emit, graph_passes, allow_tf32, sm)
        except DiagnosticError as error:
            raise CompileError(error.diagnostics) from None
    if target in GPU_TARGETS:
        sm = _device_architecture()
    with timer.phase("hash"):
        # Locations count: compiled checks report them (mlc.backend.assertions).
        ir_text = print_module(module, debuginfo=True)
        options = _options(target, graph_passes, allow_tf32, sm)
        key = hashlib.sha256(f"{target}\n{options}\n{ir_text}".encode()).hexdigest()
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    executable = _build(module, target, ir_text, timer, graph_passes, source_key, allow_tf32, sm)
    return _remember([key] if source_key is None else [key, source_key], executable, target, timer)


def _check_gpu_options(target: str, emit: str | None, allow_tf32: bool, sm: str | None) -> None:
    """Raise `ValueError` for GPU options given where they do not apply."""
    if allow_tf32 and target not in GPU_TARGETS:
        raise ValueError(f"allow_tf32 applies to the GPU targets ('cuda'), not '{target}'")
    if sm is None:
        return
    if target not in GPU_TARGETS or emit is None:
        raise ValueError("sm chooses the GPU architecture of an `emit`ted module only")
    if sm not in PTX_FEATURES:
        raise ValueError(f"unknown GPU architecture '{sm}' (known: {', '.join(PTX_FEATURES)})")


def _remember(keys: list[str], executable: Executable, target: str, timer: Timer) -> Executable:
    """Keep `executable` in the in-memory cache under `keys`; report `MLC_TIMING`."""
    if os.environ.get("MLC_TIMING", "0") not in ("", "0"):
        origin = "from the disk cache" if executable.from_cache else "compiled"
        sys.stderr.write(f"mlc.compile: {target}, {origin}\n{timer.report()}")
    for key in keys:
        _cache[key] = executable
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return executable


def _source_bytes(src: Any) -> bytes | None:
    """
    What determines the program `src` stands for, before any parsing: MLIR text, a
    file's bytes, a serialised ModelProto. None for a `ModuleOp`, an unreadable file
    (the frontend reports it), or an ONNX model that may keep weights in external files.
    """
    if isinstance(src, ModuleOp):
        return None
    try:
        if _is_onnx(src):
            if isinstance(src, str | os.PathLike):
                data = Path(src).read_bytes()
            else:
                data = src.SerializeToString(deterministic=True)
            # an external tensor names its file under the key "location"
            return None if b"location" in data else b"onnx\0" + data
        if isinstance(src, os.PathLike) or (isinstance(src, str) and _looks_like_path(src)):
            return b"mlir\0" + Path(src).read_bytes()
    except OSError:
        return None
    return b"mlir\0" + src.encode() if isinstance(src, str) else None


def _source_key(src: Any, target: str, graph_passes: bool) -> str | None:
    """The disk cache key of `src` compiled for `target`, from its source alone."""
    from mlc.backend import cache

    data = _source_bytes(src)
    if data is None:
        return None
    source = f"source {hashlib.sha256(data).hexdigest()}"
    return cache.key(source, target, _options(target, graph_passes))


def _options(
    target: str, graph_passes: bool, allow_tf32: bool = False, sm: str | None = None
) -> str:
    """What besides the program decides its machine code: the pipeline (with the GPU's
    architecture), the LLVM level and the thread count (`linalg-tile` bakes static
    splits for it into the loops)."""
    from mlc.backend.jit import OPT_LEVEL
    from mlc.tiling_model import thread_count

    texts = [
        pipeline.stage_text(s, graph_passes, allow_tf32, target, sm)
        for s in pipeline.stages_for(target)
    ]
    return ";".join([*texts, f"O{OPT_LEVEL}", f"threads {thread_count()}"])


def _load_cached(key: str, target: str, timer: Timer) -> Executable | None:
    """The executable a source-keyed disk entry holds, its weights registered; or None."""
    from mlc import resources
    from mlc.backend import cache

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
    return _load(entry.compiled, signatures, target, timer, from_cache=True)


def _build(
    module: ModuleOp,
    target: str,
    ir_text: str,
    timer: Timer,
    graph_passes: bool,
    source_key: str | None = None,
    allow_tf32: bool = False,
    sm: str | None = None,
) -> Executable:
    """
    Lower and compile `module`, or load its machine code from the disk cache; the
    entry is stored under `source_key` when the source has one, else under its IR.
    """
    from mlc import resources
    from mlc.backend import cache
    from mlc.backend.jit import compile_object

    signatures = [
        Signature.of(op)
        for op in module.body.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and not _is_private(op)
    ]
    if target in GPU_TARGETS:
        return _build_gpu(module, target, signatures, timer, graph_passes, allow_tf32, sm)
    with timer.phase("cache lookup"):
        cache_key = source_key or cache.key(ir_text, target, _options(target, graph_passes))
        entry = None if source_key else cache.load(cache_key)
    if entry is not None:
        for handle, array in entry.resources.items():
            resources.restore(handle, array)
        return _load(entry.compiled, signatures, target, timer, from_cache=True)
    with _cyclic_gc_paused():
        _lower(module, target, timer, graph_passes)
        compiled = compile_object(module, timer=timer)
    with timer.phase("cache store"):
        program = json.dumps([sig.to_json() for sig in signatures]).encode()
        # Every constant the code reads: a hit may come in a process that never made
        # them (constants derived while compiling, such as packed weight panels).
        weights = _resources_read_by(compiled.object_code)
        cache.store(cache_key, cache.Entry(compiled, program, weights))
    return _load(compiled, signatures, target, timer, from_cache=False)


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """
    Python's cycle collector off while a program is lowered: the IR is a large graph
    of objects, so each full collection walks it all, for nothing, as it all lives
    until the compile ends. On the transformer block the collections took 7% of a
    cold compile; the peak memory grew by 3% without them.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _resources_read_by(object_code: bytes) -> dict[str, np.ndarray]:
    """The stored constants (`mlc.resources`) whose symbols the machine code uses."""
    from mlc import resources
    from mlc.backend.symbols import undefined_symbols

    used: dict[str, np.ndarray] = {}
    for name in undefined_symbols(object_code):
        if name.startswith(resources.PREFIX):
            handle = name.removeprefix(resources.PREFIX)
            if (array := resources.lookup(handle)) is not None:
                used[handle] = array
    return used


def _load(
    compiled: "CompiledObject",
    signatures: list[Signature],
    target: str,
    timer: Timer,
    *,
    from_cache: bool,
) -> Executable:
    """The executable for machine code of a program with public `signatures`."""
    from mlc.backend.jit import JITModule
    from mlc.backend.runtime import compiled_function

    with timer.phase("load"):
        jit = JITModule.from_object(compiled)
        functions: dict[str, CompiledFunction] = {}
        for sig in signatures:
            buffers = FunctionType.from_lists(
                [_buffer_type(t) for t in sig.inputs], [_buffer_type(t) for t in sig.outputs]
            )
            native = compiled_function(jit, sig.name, buffers)
            # `Signature.check` has checked the arguments: the runtime need not again
            functions[sig.name] = CompiledFunction(sig, native.unchecked)
    return Executable(
        functions, jit, target, from_cache=from_cache, compile_times=dict(timer.seconds)
    )


def _lower(
    module: ModuleOp,
    target: str,
    timer: Timer,
    graph_passes: bool,
    allow_tf32: bool = False,
    sm: str | None = None,
) -> None:
    """Run `target`'s stages on `module`, raising `CompileError` for a failed pass. The
    last stage's output (~10k llvm ops) goes straight to LLVM, whose own verifier checks
    the translated module: xDSL's would take seconds more."""
    stages = pipeline.stages_for(target)
    for stage in stages:
        with timer.phase(f"stage {stage}"):
            verify = stage != stages[-1]
            try:
                pipeline.run_stage(module, stage, graph_passes, verify, allow_tf32, target, sm)
            except DiagnosticError as error:
                raise CompileError(error.diagnostics) from None


def _device_architecture() -> str:
    """The GPU's architecture (`sm_90`); with no GPU, say so before compiling anything."""
    from mlc.backend import cuda

    try:
        return cuda.device().sm
    except cuda.CudaUnavailableError as error:
        raise CompileError([diagnostics.Diagnostic("error", str(error))]) from None


def _build_gpu(
    module: ModuleOp,
    target: str,
    signatures: list[Signature],
    timer: Timer,
    graph_passes: bool,
    allow_tf32: bool = False,
    sm: str | None = None,
) -> Executable:
    from mlc.backend import cuda

    types = {
        sig.name: FunctionType.from_lists(
            [_buffer_type(t) for t in sig.inputs], [_buffer_type(t) for t in sig.outputs]
        )
        for sig in signatures
    }
    with _cyclic_gc_paused():
        _lower(module, target, timer, graph_passes, allow_tf32, sm)
        natives = cuda.load(module, types)
    functions = {
        sig.name: CompiledFunction(sig, natives[sig.name], device_arrays=True) for sig in signatures
    }
    return Executable(functions, None, target, ptx=natives_ptx(natives))


def natives_ptx(natives: dict[str, Any]) -> str:
    """The PTX a GPU executable runs (kept where the CPU one keeps its LLVM IR)."""
    return next(iter(natives.values())).program.ptx if natives else ""


def _buffer_type(type_: Attribute) -> Attribute:
    """
    The type a tensor-level argument or result has once bufferized: the contiguous,
    row-major memref of `mlc.lowering.linalg.bufferize.memref_type`, built here so that a
    cache hit does not import the pass (and xDSL's linalg with it: ~0.5 s).
    """
    if isinstance(type_, TensorType):
        return MemRefType(type_.element_type, type_.get_shape())
    return type_


def _is_private(function: func.FuncOp) -> bool:
    visibility = function.sym_visibility
    return visibility is not None and visibility.data == "private"

"""
`mlc.compile` from end to end, in one straight path:

1. the keyword arguments become one `CompileOptions`, checked once;
2. the source is classified once (`Source`);
3. one key is computed: from the source's bytes when it has them, else from the
   printed IR of the parsed module;
4. one lookup under it, in memory then on disk (`executable_cache`): a hit from a
   source key runs no frontend at all;
5. on a miss, the source is parsed and verified, lowered through the target's stages
   and built by the target's backend (`targets.build`), then kept under the key.

With `emit`, steps 3 to 5 give way to the stages up to `emit`, and the module is
returned as it is then.

An ONNX model whose import needs the values of graph inputs (Reshape's shape, Slice's
starts...) becomes a `shape_inputs.ShapeSpecializedModel`, which compiles it, through
this same path, once per value set of those inputs, when it is called.
"""

import sys
from dataclasses import replace
from functools import partial
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from mlc import progress, timing
from mlc.compiler import executable_cache, shape_inputs, targets
from mlc.compiler.errors import CompileError
from mlc.compiler.executable import Executable
from mlc.compiler.options import CompileOptions, digest_cache_key, ir_cache_key
from mlc.compiler.signature import public_signatures
from mlc.compiler.source import Source, SourceKind, check_resources_held
from mlc.compiler.specialization import specializing
from mlc.ir import print_module
from mlc.timing import Timer


def compile(
    src: Any,
    target: str = "cpu",
    *,
    emit: str | None = None,
    graph_passes: bool = True,
    allow_tf32: bool = False,
    sm: str | None = None,
    precision: str = "f32",
    autotune: bool | None = None,
    specialize: bool | int | None = None,
    specialize_after: int | None = None,
) -> Any:
    """
    Compile `src` for `target`: MLIR text, a .mlir/.onnx path, an ONNX ModelProto or
    an xDSL `ModuleOp`. Returns an `Executable`, or with `emit=<stage>` the module as
    it is after that stage of `mlc.pipeline` (nothing is run). `graph_passes=False`
    skips the graph optimisations of the `mlc` stage (see `pipeline.lower`).
    `allow_tf32=True` lets f32 contractions on the GPU round their operands to tf32
    for the tensor cores (as torch's `allow_tf32`); f32 stays exact by default.
    `precision` ("f32", "tf32", "bf16", "f16") runs matmuls and convolutions in that
    precision with f32 accumulation, softmax and normalisation statistics in f32, and
    f32 arguments and results (docs/precision.md): "tf32" is `allow_tf32` on the GPU
    (f32 on the CPU), "bf16"/"f16" run the `autocast` pass.
    GPU kernels are chosen for the device's architecture (and cached per
    architecture); with `emit`, for `sm` (e.g. "sm_75"; default: sm_80 and later).
    An ONNX model whose shape-deciding inputs (Reshape's shape, Slice's starts, ...)
    are graph inputs gives a `ShapeSpecializedModel`, compiled per value set of those
    inputs when called (`mlc.compiler.shape_inputs`).
    `autotune=True` blocks each static matmul and convolution on the CPU as measured
    on this machine (`autotune-tiles`; choices kept per machine on disk, so a layer is
    measured once); default `MLC_AUTOTUNE`, else off (the cost model's blocking).
    `specialize=True` (or a count, default 4) gives a program with dynamic input dims
    a static build for the exact shapes and dtypes of a call, compiled once those
    shapes were seen in `specialize_after` calls (default 1) and kept, on disk too, for
    later calls with them; other shapes run the dynamic build, and the least recently
    used static build goes past the count (docs/specialization.md). Default
    `MLC_SPECIALIZE` and `MLC_SPECIALIZE_AFTER`, else off.
    """
    options = CompileOptions.of(
        target,
        emit=emit,
        graph_passes=graph_passes,
        allow_tf32=allow_tf32,
        sm=sm,
        precision=precision,
        autotune=autotune,
        specialize=specialize,
        specialize_after=specialize_after,
    )
    source = Source.of(src)
    if options.emit is not None:
        return emitted(source, options)
    executable = compile_source(source, options)
    executable.variant = partial(variant, source, options)
    if options.specialize and isinstance(executable, Executable):
        return specializing(executable, source, options, compile_module)
    return executable


def variant(source: Source, options: CompileOptions, **changes: Any) -> Any:
    """`source` compiled again with some options changed (`Executable.profile` compiles
    it with `profile=True`, and to `emit="mlc"` to price its layers)."""
    changed = replace(options, **changes)
    if changed.emit is not None:
        return emitted(source, changed)
    return compile_source(source, changed)


def emitted(source: Source, options: CompileOptions) -> ModuleOp:
    """The module of `source` after the stages up to `options.emit`."""
    timer = Timer()
    with timer.active(), progress.display(timer, source.label()):
        module = source.load()
        targets.lower(module, options, timer)
    return module


def compile_source(source: Source, options: CompileOptions) -> Any:
    """The executable of `source` for `options` (no `emit`): kept, or built and kept;
    for an ONNX model with shape inputs given at run time, a `ShapeSpecializedModel`."""
    try:
        return compile_module(source, options)
    except LoadError as error:
        if source.kind not in (SourceKind.ONNX_FILE, SourceKind.ONNX_MODEL):
            raise error.error from None
        return shape_inputs.specialize(
            source.value, error.error, lambda model: compile_module(Source.of(model), options)
        )


def compile_module(source: Source, options: CompileOptions, key: str | None = None) -> Executable:
    """The executable of `source` for `options` (no `emit`): kept, or built and kept;
    under `key` if given (else one computed from the source)."""
    if options.on_gpu:
        options = options.for_architecture(targets.device_architecture())
    timer = Timer()
    with timer.active(), progress.display(timer, source.label()):
        executable = _compiled(source, options, timer, key)
    if timing.enabled():
        report(executable, timer)
    return executable


def report(executable: Executable, timer: Timer) -> None:
    """Where the compile of `executable` spent its time, slowest first, on stderr."""
    if any(name.startswith("stage ") for name in timer.seconds):
        origin = "compiled"
    elif executable.from_cache and "cache lookup" in timer.seconds:
        origin = "from the disk cache"
    else:
        origin = "from memory"
    sys.stderr.write(f"mlc.compile: {executable.target}, {origin}\n")
    sys.stderr.write(timer.report(by_time=True))


def _compiled(
    source: Source, options: CompileOptions, timer: Timer, key: str | None = None
) -> Executable:
    module: ModuleOp | None = None
    if key is None:
        with timer.phase("source hash"):
            digest = source.digest()
            key = digest_cache_key(digest, options) if digest is not None else None
    if key is None:
        module = _parsed(source, timer)
        with timer.phase("hash"):
            # Locations count: compiled checks report them (mlc.backend.assertions).
            key = ir_cache_key(print_module(module, debuginfo=True), options)
    if (kept := executable_cache.lookup(key, options, timer)) is not None:
        return kept
    if module is None:
        module = _parsed(source, timer)
    executable = targets.build(module, public_signatures(module), options, key, timer)
    return executable_cache.remember(key, executable)


class LoadError(CompileError):
    """The source could not be parsed or imported (no pass has run): `error`, the
    importer's own, is what the caller sees when nothing else is tried."""

    def __init__(self, error: CompileError):
        super().__init__(error.diagnostics)
        self.error = error


def _parsed(source: Source, timer: Timer) -> ModuleOp:
    with timer.phase("parse and verify"):
        try:
            module = source.load()
        except CompileError as error:
            raise LoadError(error) from None
    check_resources_held(module)
    return module

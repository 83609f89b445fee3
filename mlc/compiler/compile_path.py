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
"""

from dataclasses import replace
from functools import partial
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from mlc.compiler import executable_cache, targets
from mlc.compiler.executable import Executable
from mlc.compiler.options import CompileOptions, ir_cache_key, source_cache_key
from mlc.compiler.signature import public_signatures
from mlc.compiler.source import Source, check_resources_held
from mlc.driver import Timer
from mlc.ir import print_module


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
    options = CompileOptions.of(
        target, emit=emit, graph_passes=graph_passes, allow_tf32=allow_tf32, sm=sm
    )
    source = Source.of(src)
    if options.emit is not None:
        return emitted(source, options)
    executable = compile_source(source, options)
    executable.variant = partial(variant, source, options)
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
    module = source.load()
    targets.lower(module, options, Timer())
    return module


def compile_source(source: Source, options: CompileOptions) -> Executable:
    """The executable of `source` for `options` (no `emit`): kept, or built and kept."""
    if options.on_gpu:
        options = options.for_architecture(targets.device_architecture())
    timer = Timer()
    module: ModuleOp | None = None
    with timer.phase("source hash"):
        data = source.data()
        key = source_cache_key(data, options) if data is not None else None
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
    return executable_cache.remember(key, executable, timer)


def _parsed(source: Source, timer: Timer) -> ModuleOp:
    with timer.phase("parse and verify"):
        module = source.load()
    check_resources_held(module)
    return module

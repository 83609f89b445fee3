"""
A verified module through its target's stages (`lower`) and into that target's
backend (`build`): one build-and-load entry per target, each returning the
`Executable`.

CPU: the lowered module becomes host machine code (`mlc.backend.cpu`), which is stored
in the disk cache before it is loaded. GPU: the kernels become PTX and the host code
machine code, loaded on the device (`mlc.backend.cuda`).
"""

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp

from mlc import collector, diagnostics, pipeline
from mlc.backend import cpu
from mlc.compiler import executable_cache
from mlc.compiler.errors import CompileError
from mlc.compiler.executable import Executable
from mlc.compiler.options import GPU_TARGETS, CompileOptions
from mlc.compiler.signature import Signature, buffer_types
from mlc.diagnostics import DiagnosticError
from mlc.timing import Timer


def lower(module: ModuleOp, options: CompileOptions, timer: Timer) -> None:
    """
    Run the stages of `options` on `module`, raising `CompileError` for a failed pass.

    The module is verified once, as MLIR's pass manager would with per-pass
    verification off: after the last stage, where `emit` hands it to the caller.
    Between stages it is not (xDSL's per-op verification of a ResNet-50 took 2 s a
    stage on the GPU's ~100k ops); `MLC_VERIFY_EACH=1` verifies after every pass and
    names the pass that broke the IR. Without `emit` the last stage's output goes
    straight to LLVM, whose own verifier checks the translated module.
    """
    stages = options.stages
    with collector.paused():
        for stage in stages:
            with timer.phase(f"stage {stage}"):
                verify = options.emit is not None and stage == stages[-1]
                try:
                    pipeline.run_pipeline(module, options.stage_text(stage), verify)
                except DiagnosticError as error:
                    raise CompileError(error.diagnostics) from None


def build(
    module: ModuleOp,
    signatures: Sequence[Signature],
    options: CompileOptions,
    key: str,
    timer: Timer,
) -> Executable:
    """The executable of `module` (public functions `signatures`) for `options.target`;
    a disk cache entry under `key` where the target keeps one."""
    return BUILDERS[options.target](module, signatures, options, key, timer)


def _build_cpu(
    module: ModuleOp,
    signatures: Sequence[Signature],
    options: CompileOptions,
    key: str,
    timer: Timer,
) -> Executable:
    with collector.paused():
        lower(module, options, timer)
        compiled = cpu.build(module, timer)
    executable_cache.store(key, compiled, signatures, timer)
    return Executable.on_cpu(compiled, signatures, options.target, timer, from_cache=False)


def _build_gpu(
    module: ModuleOp,
    signatures: Sequence[Signature],
    options: CompileOptions,
    key: str,
    timer: Timer,
) -> Executable:
    # Imported here: the GPU backend imports xDSL's gpu and llvm dialects (~0.4 s),
    # which a CPU compile, or a cache hit, never needs.
    from mlc.backend import cuda

    with collector.paused():
        lower(module, options, timer)
        natives = cuda.load(module, buffer_types(signatures))
    return Executable.on_gpu(natives, signatures, options.target, timer)


Builder = Callable[[ModuleOp, Sequence[Signature], CompileOptions, str, Timer], Executable]

BUILDERS: dict[str, Builder] = {
    "cpu": _build_cpu,
    **{target: _build_gpu for target in GPU_TARGETS},
}


def device_architecture() -> str:
    """The GPU's architecture (`sm_90`); with no GPU, say so before compiling anything."""
    from mlc.backend import cuda  # imported here: see `_build_gpu`

    try:
        return cuda.device().sm
    except cuda.CudaUnavailableError as error:
        raise CompileError([diagnostics.Diagnostic("error", str(error))]) from None

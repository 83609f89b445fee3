"""
The default pipeline, stage by stage: the only place that lists passes in order.

Each stage is a textual pass pipeline, so any stage can be replayed by hand with
`mlc-opt -p '<stage text>'` and tested with lit; `mlc-opt --list-stages` prints them.
The stages of a target run in order; `lower(..., emit=stage)` stops after one of
them, as Toy's `--emit` does.

    mlc     graph passes on `ml` + `scf`: simplification, chain reordering, hoisting
    linalg  `ml` ops become `linalg.generic`s on tensors
    loops   tensors become buffers, generics become loops over memrefs
    llvm    everything becomes the `llvm` dialect, ready for llvmlite
"""

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from mlc import diagnostics
from mlc.diagnostics import Diagnostic, DiagnosticError, OpError
from mlc.registry import make_context, parse_pipeline

STAGES: dict[str, str] = {
    "mlc": "shape-inference,canonicalize,cse,matmul-chain-reorder,licm,canonicalize,cse",
    "linalg": "convert-ml-to-linalg",
    "loops": "bufferize,convert-linalg-to-loops,lower-affine,canonicalize,cse",
    "llvm": "convert-to-llvm",
}

TARGET_STAGES: dict[str, tuple[str, ...]] = {
    "cpu": ("mlc", "linalg", "loops", "llvm"),
}


def stages_for(target: str, emit: str | None = None) -> tuple[str, ...]:
    """The stages a target runs, up to and including `emit`."""
    if target not in TARGET_STAGES:
        known = ", ".join(TARGET_STAGES)
        raise ValueError(f"unknown target '{target}' (known: {known})")
    stages = TARGET_STAGES[target]
    if emit is None:
        return stages
    if emit not in stages:
        raise ValueError(
            f"unknown stage '{emit}' for target '{target}' (stages: {', '.join(stages)})"
        )
    return stages[: stages.index(emit) + 1]


def run_stage(module: ModuleOp, stage: str) -> None:
    """Apply one stage's passes in place; raise `DiagnosticError` if one fails."""
    run_pipeline(module, STAGES[stage])


def run_pipeline(module: ModuleOp, spec: str) -> None:
    """Apply a textual pipeline in place, verifying once it has run."""
    ctx = make_context()
    for module_pass in parse_pipeline(spec):
        try:
            module_pass.apply(ctx, module)
        except OpError as error:
            raise DiagnosticError([error.diagnostic()]) from None
        except DiagnosticException as error:
            message = diagnostics.one_line(str(error))
            failure = Diagnostic("error", f"pass '{module_pass.name}' failed: {message}")
            raise DiagnosticError([failure]) from None
    if errors := diagnostics.verify_module(module):
        raise DiagnosticError(errors)


def lower(module: ModuleOp, target: str = "cpu", emit: str | None = None) -> ModuleOp:
    """Run the target's stages on `module` in place, up to `emit`; return it."""
    for stage in stages_for(target, emit):
        run_stage(module, stage)
    return module


def describe(target: str = "cpu") -> Sequence[str]:
    """One line per stage of `target`: its name and its pass pipeline."""
    return [f"{stage}: {STAGES[stage]}" for stage in stages_for(target)]

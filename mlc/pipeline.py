"""
The default pipeline, stage by stage: the only place that lists passes in order.

Each stage is a textual pass pipeline, so any stage can be replayed by hand with
`mlc-opt -p '<stage text>'` and tested with lit; `describe()` lists them.
The stages of a target run in order; `lower(..., emit=stage)` stops after one of
them, as Toy's `--emit` does.

    mlc     graph passes on `ml` + `scf`: simplification, chain reordering, hoisting
    linalg  `ml` ops become `linalg.generic`s on tensors
    loops   tensors become buffers, generics become loops over memrefs
    llvm    everything becomes the `llvm` dialect, ready for llvmlite

The `gpu` target (alias `cuda`) shares the first two stages, then:

    parallel-loops  tensors become buffers, generics become `scf.parallel` over `scf.for`,
                    contractions tiled `gpu.launch`es, built once for each repeated kind
    gpu             each outermost parallel loop becomes a kernel in `gpu.module @kernels`,
                    one kernel for each kind of identical ones
    nvvm            kernels and host code become the `llvm` dialect: kernels with NVVM
                    intrinsics (for `mlc.backend.ptx`), host code calling the CUDA driver

`run_stage` and `lower` verify the module once a stage has run (`mlc.compile` only
after its last stage: `mlc.compiler.targets.lower`). With `MLC_VERIFY_EACH=1` in the
environment (or `verify_each=True`) it is verified after every pass of every stage,
the last included, and IR a pass leaves invalid is reported with that pass's name:
an internal error then says which pass broke the IR (`mlc-opt --verify-each` does the
same, and is on by default there).
"""

import os
import re
from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.arg_spec import parse_pipeline as parse_specs
from xdsl.utils.exceptions import DiagnosticException

from mlc import diagnostics, timing
from mlc.diagnostics import Diagnostic, DiagnosticError, OpError
from mlc.gpu_architectures import compute_capability
from mlc.registry import make_context, parse_pipeline

STAGES: dict[str, str] = {
    "mlc": (
        "simplify-graph,fuse-attention,fold-batch-norm,cse,matmul-chain-reorder,licm,"
        "simplify-graph,cse"
    ),
    "linalg": "decompose-attention,convert-ml-to-linalg,linalg-fuse-elementwise",
    "loops": (
        "bufferize,outline-kernels,collapse-parallel-generics,linalg-tile,"
        "convert-linalg-to-loops,lower-affine,canonicalize,cse,promote-accumulators"
    ),
    "llvm": "convert-to-llvm",
    "parallel-loops": (
        "linalg-fuse-elementwise,bufferize,convert-attention-to-gpu,outline-contractions,"
        "convert-contractions-to-gpu,"
        "convert-linalg-to-parallel-loops,lower-affine,canonicalize,cse"
    ),
    "gpu": (
        "fuse-row-epilogues,convert-parallel-loops-to-gpu,bound-device-sizes,gpu-kernel-outlining,"
        "canonicalize,cse,merge-identical-kernels,defer-device-checks"
    ),
    "nvvm": "convert-gpu-to-nvvm,convert-gpu-host-to-llvm",
}

# Where a target runs a stage's passes with other options. On the GPU softmax is
# online (two passes over x, two `exp` an element): a GPU has the arithmetic to spare,
# and fewer kernels and passes over memory pay; the CPU's three passes do one `exp`.
# Scatters are not grouped on the GPU (its counting loops are one-thread kernels: the MoE
# bench read 21 ms against 7.9 ms on an H200): they run one thread an update with atomics
# (`scatter-atomic`, convert_ml_to_linalg/scatter_atomic.py), O(updates), where the
# reduction allows; the others walk their updates from each result element.
TARGET_STAGE_TEXT: dict[str, dict[str, str]] = {
    "gpu": {
        "linalg": (
            "convert-attention-to-gpu,decompose-attention,"
            "convert-ml-to-linalg{online-softmax=true scatter-group-pairs=-1 scatter-atomic=true},"
            "linalg-fuse-elementwise"
        )
    },
}
TARGET_STAGE_TEXT["cuda"] = TARGET_STAGE_TEXT["gpu"]

# The `mlc` stage without the graph optimisations (`lower(..., graph_passes=False)`),
# for comparing a program's results with and without them.
UNOPTIMIZED_MLC_STAGE = "cse"

# What a profiling compile (`mlc.compile(...).profile`) adds to a stage: a pass, after
# the pass named, once every kernel is one op (mlc.lowering.cpu.instrument_kernels) or
# one launch (mlc.lowering.gpu.instrument_launches).
PROFILING_PASSES: dict[str, tuple[str, str]] = {
    "loops": ("linalg-tile", "instrument-kernels"),
    "gpu": ("merge-identical-kernels", "instrument-launches"),
}


def profiled(stage: str, text: str) -> str:
    """The pipeline `text` of `stage` with the profiling compile's pass in its place."""
    if stage not in PROFILING_PASSES:
        return text
    after, added = PROFILING_PASSES[stage]
    specs = [str(spec) for spec in parse_specs(text)]
    place = next(i for i, spec in enumerate(specs) if spec.split("{")[0] == after)
    return ",".join([*specs[: place + 1], added, *specs[place + 1 :]])


TARGET_STAGES: dict[str, tuple[str, ...]] = {
    "cpu": ("mlc", "linalg", "loops", "llvm"),
    "gpu": ("mlc", "linalg", "parallel-loops", "gpu", "nvvm"),
}
TARGET_STAGES["cuda"] = TARGET_STAGES["gpu"]


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


# The pass that chooses the GPU's contraction kernels, which takes the options below.
CONTRACTIONS = "convert-contractions-to-gpu"
OUTLINE_CONTRACTIONS = "outline-contractions"  # takes `tf32` too
ATTENTION = "convert-attention-to-gpu"  # takes `sm` too (tensor cores from sm_80)


# The Hopper wgmma kernel's compile choice (`wgmma_choice`): `auto`, `off`, or a tile.
WGMMA_VARIABLE = "MLC_WGMMA"


def wgmma_choice() -> str | None:
    """
    `MLC_WGMMA`, the choice of the sm_90a wgmma kernel for contractions: `off` (the
    mma.sync kernels), `auto` (wgmma where it applies: the pass's default) or
    `ROWS,COLS,STAGES` (`auto` with that tile), either of the last two followed by
    `,tma` (operands copied by TMA, `wgmma-tma`: the pass's default) or `,cp.async`
    (copied by every thread's cp.async); `tma` or `cp.async` alone is `auto` with that
    feed; None when unset. A bad value is a one-line `ValueError`; a tile the pass cannot build is
    its own one-line error.
    """
    text = os.environ.get(WGMMA_VARIABLE, "").strip().lower()
    if not text:
        return None
    if re.fullmatch(r"auto|off|(auto,)?(tma|cp\.async)|\d+,\d+,\d+(,(tma|cp\.async))?", text):
        return text
    raise ValueError(
        f"{WGMMA_VARIABLE} must be auto, off or ROWS,COLS,STAGES (the last two may end in "
        f",tma or ,cp.async), got '{text}'"
    )


def wgmma_options(choice: str | None) -> dict[str, tuple[bool | int | str, ...]]:
    """The contraction pass's options for a `wgmma_choice`."""
    if choice is None:
        return {}
    fields = choice.split(",")
    feeds = {"tma": True, "cp.async": False}
    tma: dict[str, tuple[bool | int | str, ...]] = {
        "wgmma-tma": (feeds[f],) for f in fields if f in feeds
    }
    sizes = [f for f in fields if f not in ("auto", *feeds)]
    if sizes == ["off"]:
        return {"wgmma": ("off",)}
    if not sizes:
        return {"wgmma": ("auto",), **tma}
    return {"wgmma": ("auto",), "wgmma-tile": tuple(int(n) for n in sizes), **tma}


def contraction_options(
    text: str, allow_tf32: bool = False, sm: str | None = None, wgmma: str | None = None
) -> str:
    """
    `text` with `CONTRACTIONS` given the options: with `allow_tf32`, contractions
    multiply on the tensor cores in tf32; `sm` (an architecture such as `sm_75`) is the
    one kernels are built for, else the pass's default (sm_80 and later), given to the
    attention kernels' pass (`ATTENTION`) too (and `allow_tf32` to
    `OUTLINE_CONTRACTIONS`); `wgmma` a `wgmma_choice` (None: the pass's default).
    Options the text already gives the pass (a tile shape, say) stay, and win over these.
    """
    added: dict[str, tuple[bool | int | str, ...]] = {"tf32": (True,)} if allow_tf32 else {}
    if sm is not None:
        added["sm"] = (compute_capability(sm),)
    added |= wgmma_options(wgmma)
    if not added:
        return text
    attention = {k: v for k, v in added.items() if k == "sm"}
    wanted: dict[str, dict[str, tuple[bool | int | str, ...]]] = {
        CONTRACTIONS: added,
        ATTENTION: attention,
        OUTLINE_CONTRACTIONS: {k: v for k, v in added.items() if k == "tf32"},
    }
    specs = [
        ArgSpec(
            spec.name,
            {**spec.parameters, **{k: v for k, v in extra.items() if k not in spec.parameters}},
        )
        if (extra := wanted.get(spec.name))
        else spec
        for spec in parse_specs(text)
    ]
    return ",".join(map(str, specs))


def stage_text(
    stage: str,
    graph_passes: bool = True,
    allow_tf32: bool = False,
    target: str = "cpu",
    sm: str | None = None,
    wgmma: str | None = None,
) -> str:
    """The pass pipeline of `stage` for `target` (GPU kernels for architecture `sm`,
    the wgmma kernel as `wgmma` chooses); the `mlc` stage without graph passes is only
    `cse`."""
    skip = stage == "mlc" and not graph_passes
    text = (
        UNOPTIMIZED_MLC_STAGE
        if skip
        else TARGET_STAGE_TEXT.get(target, {}).get(stage, STAGES[stage])
    )
    return contraction_options(text, allow_tf32, sm, wgmma)


def run_stage(
    module: ModuleOp,
    stage: str,
    graph_passes: bool = True,
    verify: bool = True,
    allow_tf32: bool = False,
    target: str = "cpu",
    sm: str | None = None,
    wgmma: str | None = None,
) -> None:
    """Apply one stage's passes in place; raise `DiagnosticError` if one fails."""
    text = stage_text(stage, graph_passes, allow_tf32, target, sm, wgmma)
    run_pipeline(module, text, verify)


VERIFY_EACH_ENV = "MLC_VERIFY_EACH"


def verify_each_requested() -> bool:
    """Whether `MLC_VERIFY_EACH` asks for the IR to be verified after every pass."""
    return os.environ.get(VERIFY_EACH_ENV, "0").strip().lower() not in ("", "0", "false", "no")


def verify_after(module: ModuleOp, pass_name: str) -> list[Diagnostic]:
    """The module's verifier errors, each naming `pass_name` as the pass it ran after
    (the IR verified before it, so that pass broke it); none if it verifies."""
    return [
        Diagnostic(d.severity, f"{d.message} (invalid after pass '{pass_name}')", d.location)
        for d in diagnostics.verify_module(module)
    ]


def run_pipeline(
    module: ModuleOp, spec: str, verify: bool = True, verify_each: bool | None = None
) -> None:
    """
    Apply a textual pipeline in place, verifying once it has run (unless told not to,
    by a caller that hands the result to a verifier of its own). With `verify_each`
    (None: `MLC_VERIFY_EACH`) the module is verified after every pass instead, and an
    invalid one is reported with the name of the pass that broke it. Each pass and the
    verification are timed into the active `mlc.timing` timer, if any.
    """
    each = verify_each_requested() if verify_each is None else verify_each
    ctx = make_context()
    for module_pass in parse_pipeline(spec):
        try:
            with timing.phase(module_pass.name):
                module_pass.apply(ctx, module)
        except OpError as error:
            raise DiagnosticError([error.diagnostic()]) from None
        except DiagnosticException as error:
            message = diagnostics.one_line(str(error))
            failure = Diagnostic("error", f"pass '{module_pass.name}' failed: {message}")
            raise DiagnosticError([failure]) from None
        if each:
            with timing.phase("verify"):
                errors = verify_after(module, module_pass.name)
            if errors:
                raise DiagnosticError(errors)
    if verify and not each:
        with timing.phase("verify"):
            errors = diagnostics.verify_module(module)
        if errors:
            raise DiagnosticError(errors)


def lower(
    module: ModuleOp,
    target: str = "cpu",
    emit: str | None = None,
    graph_passes: bool = True,
    allow_tf32: bool = False,
    sm: str | None = None,
    wgmma: str | None = None,
) -> ModuleOp:
    """
    Run the target's stages on `module` in place, up to `emit`; return it.

    With `graph_passes=False` the `mlc` stage runs only `UNOPTIMIZED_MLC_STAGE`;
    `allow_tf32`, `sm` and `wgmma` are the GPU contractions' options
    (`contraction_options`).
    """
    for stage in stages_for(target, emit):
        run_stage(module, stage, graph_passes, True, allow_tf32, target, sm, wgmma)
    return module


def describe(target: str = "cpu") -> Sequence[str]:
    """One line per stage of `target`: its name and its pass pipeline."""
    return [f"{stage}: {stage_text(stage, target=target)}" for stage in stages_for(target)]


def _has_tensors(module: ModuleOp) -> bool:
    for op in module.walk():
        if any(isinstance(r.type, TensorType) for r in op.results):
            return True
        for region in op.regions:
            for block in region.blocks:
                if any(isinstance(a.type, TensorType) for a in block.args):
                    return True
    return False


def remaining_pipelines(module: ModuleOp) -> list[str]:
    """
    The CPU pipelines that take `module` from the level it is at down to `llvm`.

    For tools that accept IR at any level (`mlc-translate`).

    The level is that of the highest op in it: any `ml` op needs every stage; tensors
    anywhere need bufferization and what follows; linalg on memrefs needs the loops
    stage without `bufferize` (which rejects memref linalg); anything else that is not
    `llvm` needs `convert-to-llvm`.
    """
    stages = stages_for("cpu")
    names = {op.name for op in module.walk() if op is not module}
    if any(name.startswith("ml.") for name in names):
        return [STAGES[s] for s in stages]
    if _has_tensors(module):
        return [STAGES[s] for s in stages[stages.index("loops") :]]
    if any(name.startswith("linalg.") for name in names):
        loops = ",".join(p for p in STAGES["loops"].split(",") if p != "bufferize")
        return [loops, STAGES["llvm"]]
    if any(not name.startswith("llvm.") for name in names):
        return [STAGES["llvm"]]
    return []


def remaining_gpu_pipelines(module: ModuleOp, sm: str | None = None) -> list[str]:
    """
    The `gpu` pipelines that take `module` from the level it is at to kernels in the
    `llvm` dialect for architecture `sm` (for `mlc-translate --mlir-to-ptx`).

    `ml` ops need every stage; tensors, bufferization onwards; linalg on memrefs, the
    parallel-loops stage without `bufferize`; `scf.parallel` or `gpu.launch`, the gpu
    stage; `gpu.func` kernels, the nvvm stage; an `llvm`-only module, nothing.
    """
    stages = stages_for("gpu")
    names = {op.name for op in module.walk() if op is not module}
    if any(name.startswith("ml.") for name in names):
        start = 0
    elif _has_tensors(module):
        start = stages.index("parallel-loops")
    elif any(name.startswith("linalg.") for name in names):
        parallel_loops = stage_text("parallel-loops", target="gpu", sm=sm).split(",")
        loops = ",".join(p for p in parallel_loops if p != "bufferize")
        return [loops, *(STAGES[s] for s in stages[stages.index("gpu") :])]
    elif names & {"scf.parallel", "gpu.launch"}:
        start = stages.index("gpu")
    elif any(name.startswith("gpu.") for name in names):
        start = stages.index("nvvm")
    else:
        return []
    return [stage_text(s, target="gpu", sm=sm) for s in stages[start:]]

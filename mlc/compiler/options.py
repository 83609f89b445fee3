"""
`CompileOptions`: everything besides the program that decides what `mlc.compile`
makes, checked once, and the cache key of a program compiled with them.

The keyword arguments of `mlc.compile` become one frozen value (`CompileOptions.of`,
which raises the one-line `ValueError`s for options that do not apply); the thread
count, which `linalg-tile` bakes into the loops, is read once into it too. Every later
step takes the value, never the flags one by one.
"""

import hashlib
import os
from dataclasses import dataclass, field, replace

from mlc import pipeline
from mlc.backend import cache
from mlc.backend.jit import OPT_LEVEL
from mlc.gpu_architectures import PTX_FEATURES
from mlc.tiling_model import thread_count

GPU_TARGETS = ("gpu", "cuda")

AUTOTUNE_ENV = "MLC_AUTOTUNE"  # 1: `autotune=True` unless `mlc.compile` says otherwise
_ON = ("1", "true", "yes", "on")


SPECIALIZE_ENV = "MLC_SPECIALIZE"  # `specialize=` unless `mlc.compile` says otherwise
SPECIALIZE_AFTER_ENV = "MLC_SPECIALIZE_AFTER"  # `specialize_after=`, likewise
DEFAULT_SPECIALIZATIONS = 4  # `specialize=True`: static builds kept per function


def autotune_requested() -> bool:
    """Whether `MLC_AUTOTUNE` asks for measured tile sizes (`autotune-tiles`)."""
    return os.environ.get(AUTOTUNE_ENV, "").strip().lower() in _ON


def specializations(value: object, what: str = "specialize") -> int:
    """How many static builds `specialize=` asks to keep per function: True is
    `DEFAULT_SPECIALIZATIONS`, False or 0 none, an int that many."""
    if isinstance(value, bool):
        return DEFAULT_SPECIALIZATIONS if value else 0
    if isinstance(value, int) and value >= 0:
        return value
    raise ValueError(
        f"{what} must be True, False or a number of static builds to keep (>= 0), got {value!r}"
    )


def calls_before_specializing(value: object, what: str = "specialize_after") -> int:
    """How many calls with one set of shapes `specialize_after=` waits for before
    compiling their static build (1: the first call)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ValueError(f"{what} must be a number of calls >= 1, got {value!r}")


def _from_environment(name: str, default: object) -> object:
    """`MLC_SPECIALIZE`'s or `MLC_SPECIALIZE_AFTER`'s value: a number, on or off."""
    text = os.environ.get(name, "").strip().lower()
    if not text:
        return default
    if text.isdigit():
        return int(text)
    if text in _ON:
        return True
    return False if text in ("false", "no", "off") else text


# `precision=`: the types matmuls and convolutions may run in (docs/precision.md).
PRECISIONS = ("f32", "tf32", "bf16", "f16")


@dataclass(frozen=True)
class CompileOptions:
    """
    How to compile: for `target`, up to stage `emit` (None: to an executable), with
    or without the graph passes of the `mlc` stage, f32 contractions in tf32 on the GPU
    (`allow_tf32`), GPU kernels built for architecture `sm` (None: the pass's default),
    for `threads` threads (default: `mlc.tiling_model.thread_count()`), with timers
    around each kernel when `profile` (`mlc.profiler`), the sm_90a wgmma kernel as
    `wgmma` chooses (default: `MLC_WGMMA`, `pipeline.wgmma_choice`; None: the pass's
    `auto`). `precision` "bf16"/"f16" runs
    the `autocast` pass first; "tf32" is `allow_tf32` on the GPU and f32 on the CPU.
    `autotune` runs `autotune-tiles` before `linalg-tile` on the CPU: each static matmul
    and convolution blocked as measured on this machine (default: `MLC_AUTOTUNE`).
    `specialize`: how many static builds a function with dynamic input dims keeps for
    the exact shapes it is called with, each compiled once those shapes were seen in
    `specialize_after` calls (`mlc.compiler.specialization`); not part of the cache key,
    since the dynamic build is the same program.
    """

    target: str = "cpu"
    emit: str | None = None
    graph_passes: bool = True
    allow_tf32: bool = False
    sm: str | None = None
    threads: int = field(default_factory=thread_count)
    profile: bool = False
    precision: str = "f32"
    wgmma: str | None = field(default_factory=pipeline.wgmma_choice)
    autotune: bool = field(default_factory=autotune_requested)
    specialize: int = 0
    specialize_after: int = 1

    def __post_init__(self) -> None:
        specializations(self.specialize)
        calls_before_specializing(self.specialize_after)
        _check_tf32(self.allow_tf32, self.target)
        _check_precision(self.precision)
        if self.sm is not None and self.sm not in PTX_FEATURES:
            known = ", ".join(PTX_FEATURES)
            raise ValueError(f"unknown GPU architecture '{self.sm}' (known: {known})")
        pipeline.stages_for(self.target, self.emit)  # an unknown target or stage raises

    @staticmethod
    def of(
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
    ) -> "CompileOptions":
        """The options `mlc.compile`'s keyword arguments ask for; `ValueError` for those
        that do not apply (`sm` chooses the architecture of an emitted module only: an
        executable's is its device's)."""
        _check_tf32(allow_tf32, target)
        _check_precision(precision)
        if sm is not None and (target not in GPU_TARGETS or emit is None):
            raise ValueError("sm chooses the GPU architecture of an `emit`ted module only")
        if precision == "tf32" and target in GPU_TARGETS:
            allow_tf32 = True  # on the CPU, f32 is computed in full: within tf32's tolerance
        tuned = autotune_requested() if autotune is None else autotune
        if specialize is None:
            kept = specializations(_from_environment(SPECIALIZE_ENV, 0), SPECIALIZE_ENV)
        else:
            kept = specializations(specialize)
        if specialize_after is None:
            wanted = _from_environment(SPECIALIZE_AFTER_ENV, 1)
            after = calls_before_specializing(wanted, SPECIALIZE_AFTER_ENV)
        else:
            after = calls_before_specializing(specialize_after)
        if kept and emit is not None and specialize is not None:
            raise ValueError("specialize applies to executables, not to an `emit`ted module")
        return CompileOptions(
            target,
            emit,
            graph_passes,
            allow_tf32,
            sm,
            precision=precision,
            autotune=tuned,
            specialize=kept if emit is None else 0,
            specialize_after=after,
        )

    @property
    def on_gpu(self) -> bool:
        return self.target in GPU_TARGETS

    def for_architecture(self, sm: str) -> "CompileOptions":
        """These options with GPU kernels built for `sm` (the device's)."""
        return replace(self, sm=sm)

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages of `mlc.pipeline` these options run, up to `emit`."""
        return pipeline.stages_for(self.target, self.emit)

    def stage_text(self, stage: str) -> str:
        """The pass pipeline of `stage` under these options."""
        text = pipeline.stage_text(
            stage, self.graph_passes, self.allow_tf32, self.target, self.sm, self.wgmma
        )
        if stage == "mlc" and self.precision in ("bf16", "f16"):
            # After fuse-attention, which matches f32 matmuls around a softmax: autocast
            # then narrows the fused attention's operands as it narrows a matmul's.
            autocast = f"autocast{{precision={self.precision}}}"
            head, fused, tail = text.partition("fuse-attention,")
            text = f"{head}{fused}{autocast},{tail}" if fused else f"{autocast},{text}"
        if stage == "loops" and self.autotune:
            text = text.replace("bufferize,", "bufferize,autotune-tiles,", 1)
        return pipeline.profiled(stage, text) if self.profile else text

    def pipeline_text(self) -> str:
        """What besides the program decides its machine code: the pipeline (with the GPU's
        architecture), the LLVM level and the thread count (`linalg-tile` bakes static
        splits for it into the loops)."""
        texts = [self.stage_text(s) for s in pipeline.stages_for(self.target)]
        return ";".join([*texts, f"O{OPT_LEVEL}", f"threads {self.threads}"])


def _check_tf32(allow_tf32: bool, target: str) -> None:
    if allow_tf32 and target not in GPU_TARGETS:
        raise ValueError(f"allow_tf32 applies to the GPU targets ('cuda'), not '{target}'")


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        known = ", ".join(f'"{p}"' for p in PRECISIONS)
        raise ValueError(f"precision must be one of {known}, got {precision!r}")


def source_cache_key(data: bytes, options: CompileOptions) -> str:
    """The cache key of a program given by its source bytes (`Source.data`)."""
    return digest_cache_key(hashlib.sha256(data).hexdigest(), options)


def digest_cache_key(digest: str, options: CompileOptions) -> str:
    """The cache key of a program given by the sha256 of its source (`Source.digest`)."""
    return cache.key(f"source {digest}", options.target, options.pipeline_text())


def specialized_cache_key(base: str, function: str, shapes: str, options: CompileOptions) -> str:
    """The cache key of function `function`'s static build for the argument `shapes` of
    the program kept under `base` (its dynamic build's key): found without hashing the
    specialised program, so a new process reuses it before compiling anything."""
    text = f"specialized {base} @{function} {shapes}"
    return cache.key(text, options.target, options.pipeline_text())


def ir_cache_key(ir_text: str, options: CompileOptions) -> str:
    """The cache key of a program given by its printed IR (locations included)."""
    return cache.key(ir_text, options.target, options.pipeline_text())

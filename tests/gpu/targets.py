"""
Compiling test programs for each target, so one numerical test serves the CPU and GPU.

`TARGETS` parametrises a test over `cpu` and `cuda` (the latter marked `gpu`, which
the device run selects with `-m gpu`). `compile_for(module, "cuda")` compiles and loads
on the GPU when there is one. Without a GPU it still lowers the program through the
`gpu` pipeline and, where CUDA's `ptxas` is on PATH, assembles its PTX for sm_90 (so
every test program's PTX is checked on machines with the toolkit but no GPU), then
skips the numerical part with the reason (`sm` picks the architectures, `wgmma` the
wgmma kernel's compile choice). `compile_once` does so once per program text and
options, `compile_all` checks several programs before skipping, and `jit_for` routes
`mlc.jit`'s compiles through `compile_for`. Tests take the `target` fixture
(tests/e2e/conftest.py) and run unchanged on a GPU machine (`pytest -m gpu`).
"""

import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import mlc
from mlc import pipeline

TARGETS = [pytest.param("cpu"), pytest.param("cuda", marks=pytest.mark.gpu)]


def cpu_variants_and_cuda(variants: Sequence[str]) -> list[Any]:
    """
    Params `(variant, target)`: each CPU pipeline variant (say, linalg-tile's tile sizes)
    on `cpu`, and the first on `cuda`, whose pipeline has no such variants.
    """
    params = [pytest.param((v, "cpu"), id=f"cpu-{v}") for v in variants]
    return [*params, pytest.param((variants[0], "cuda"), marks=pytest.mark.gpu, id="cuda")]


@cache
def gpu_unavailable_reason() -> str | None:
    """Why the `cuda` target cannot run here, or None when it can."""
    from mlc.backend import cuda

    try:
        cuda.device()
    except cuda.CudaUnavailableError as error:
        return str(error)
    return None


def device_upload() -> Callable[[Any], Any]:
    """How a cuda test puts an array on the device: pycuda's `to_gpu`, or without a GPU
    the stand-in `GPUArray` (tests/fake_device.py), whose shape and dtype alone are read
    before `compile_for` assembles the PTX and skips."""
    if gpu_unavailable_reason() is None:
        from pycuda import gpuarray  # pyright: ignore[reportMissingImports]

        return gpuarray.to_gpu
    from tests.fake_device import GPUArray

    return GPUArray


def assemble(ptx: str, sm: str = "sm_90", verbose: bool = False) -> str:
    """Assemble PTX with ptxas (skip when it is not on PATH); fail with its message.
    Returns what ptxas printed: with `verbose` (`-v`), each kernel's registers and
    spills."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas (CUDA toolkit) not on PATH: PTX not assembled")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernels.ptx"
        path.write_text(ptx)
        cubin = str(Path(tmp) / "kernels.cubin")
        done = subprocess.run(
            [ptxas, *(["-v"] if verbose else []), f"-arch={sm}", str(path), "-o", cubin],
            capture_output=True,
            text=True,
        )
    assert done.returncode == 0, f"ptxas rejected the PTX:\n{done.stderr}"
    return done.stderr


@contextmanager
def wgmma_choice(choice: str | None) -> Iterator[None]:
    """Compiles inside take the wgmma kernel as `choice` says (`MLC_WGMMA`: `auto`, `off`,
    `ROWS,COLS,STAGES`; None: as the environment says)."""
    if choice is None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(pipeline.WGMMA_VARIABLE, choice)
        yield


def compile_for(
    module: Any,
    target: str,
    *,
    sm: str | Sequence[str] | None = None,
    wgmma: str | None = None,
    holds: Sequence[str] = (),
    **options: Any,
) -> Any:
    """
    `mlc.compile(module, target, **options)`, or for `cuda` without a GPU: check PTX,
    then skip. The PTX is built for `sm` (the first of several; None: the pass's
    default) and assembled for each (default sm_90), and must hold each of `holds`;
    `wgmma` is the wgmma kernel's compile choice (`wgmma_choice`).
    """
    if target == "cpu":
        return mlc.compile(module, **options)
    reason = gpu_unavailable_reason()
    if reason is None:
        with wgmma_choice(wgmma):
            return mlc.compile(module, target="cuda", **options)
    if shutil.which("ptxas") is None:
        pytest.skip(f"{reason}; ptxas not on PATH either")
    from mlc.backend.ptx import kernel_names, to_ptx

    architectures = [sm] if isinstance(sm, str) else list(sm or [])
    built = architectures[0] if architectures else None
    with wgmma_choice(wgmma):
        lowered = mlc.compile(module, target="gpu", emit="nvvm", sm=built, **options)
    if kernel_names(lowered):  # a program of scalars alone has no kernels
        ptx = to_ptx(lowered, built or "sm_90")
        for wanted in holds:
            assert wanted in ptx, f"the PTX holds no {wanted}"
        for architecture in architectures or ["sm_90"]:
            assemble(ptx, architecture)
    pytest.skip(f"{reason} (PTX assembled with ptxas)")


def compile_all(*compilations: Callable[[], Any]) -> list[Any]:
    """
    Run each compilation (say, `compile_for` of two forms of a program to compare); a
    skip (no GPU) is raised only once all have run, so every program's PTX is checked.
    """
    results: list[Any] = []
    skipped: BaseException | None = None
    for compilation in compilations:
        try:
            results.append(compilation())
        except pytest.skip.Exception as skip:
            skipped = skip
    if skipped is not None:
        raise skipped
    return results


def jit_for(target: str, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """
    `mlc.jit(target=target, **options)` as a decorator whose compiles go through
    `compile_for`: without a GPU, the first program's PTX is checked, then the test skips.
    """

    def wrap(fn: Callable[..., Any]) -> Any:
        jitted = mlc.jit(fn, target=target, **options)
        if target != "cpu":
            jitted.compile = lambda module, on_gpu=False: compile_for(  # on_gpu: target is one
                module, target, precision=jitted.precision
            )
        return jitted

    return wrap


_COMPILED: dict[str, Any] = {}


def compile_once(program: str, target: str = "cuda", **options: Any) -> Any:
    """`compile_for` (its options too: `sm`, `wgmma`, `holds`), once per program text
    and options: later calls reuse it (or repeat its skip)."""
    key = f"{target}\n{sorted(options.items())}\n{program}"
    if key not in _COMPILED:
        try:
            _COMPILED[key] = compile_for(program, target, **options)
        except pytest.skip.Exception as skipped:
            _COMPILED[key] = skipped
    found = _COMPILED[key]
    if isinstance(found, BaseException):
        raise found
    return found

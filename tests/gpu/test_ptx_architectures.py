"""
Every architecture mlc targets gets kernels it can run: the examples and a set of
contraction programs (matmul, batched, convolution, tf32 allowed) are lowered for
sm_70, sm_75, sm_80 and sm_90 and their PTX assembled with ptxas (skipped where it
is not on PATH). sm_70 and sm_75 are built without `cp.async` and tf32 `mma`, which
they lack; a ptxas that no longer knows sm_70 (CUDA 13) assembles its PTX for the
oldest architecture it knows, which runs sm_70 PTX. The refusal in `to_ptx` stays as
a safety net for kernels chosen for a newer architecture. No numerics run here.
"""

import re
import shutil
import subprocess
from functools import cache

import pytest

import mlc
from mlc.backend.ptx import PTXError, to_ptx
from tests.gpu.targets import assemble
from tests.gpu.test_conv_gemm import _conv_program
from tests.gpu.test_tiled_matmul import BATCHED, BIAS_RELU_RESIDUAL

pytestmark = pytest.mark.gpu

EXAMPLES = ["examples/mlp.mlir", "examples/transformer_block.mlir", "examples/convnet.mlir",
            "examples/pagerank.mlir"]  # fmt: skip
PROGRAMS = {"bias-relu-residual": BIAS_RELU_RESIDUAL, "conv": _conv_program(3, 33, 3, 2, 1)}
ARCHITECTURES = ["sm_70", "sm_75", "sm_80", "sm_90"]
OLD = ("sm_70", "sm_75")  # no cp.async, no tf32 mma


@cache
def _lowered(source: str, sm: str, allow_tf32: bool = False):
    """The kernels of `source` chosen for `sm`, lowered once."""
    return mlc.compile(source, target="gpu", emit="nvvm", sm=sm, allow_tf32=allow_tf32)


def _kernels(source: str, sm: str, allow_tf32: bool = False):
    """The kernels of `source` for `sm`: sm_70 takes sm_75's, sm_90 sm_80's (the same)."""
    return _lowered(source, "sm_75" if sm in OLD else "sm_80", allow_tf32)


@cache
def _ptxas_architectures() -> tuple[int, ...]:
    help_text = subprocess.run(["ptxas", "--help"], capture_output=True, text=True).stdout
    return tuple(sorted({int(n) for n in re.findall(r"'sm_(\d+)'", help_text)}))


def _assemble(ptx: str, sm: str) -> None:
    """Assemble `ptx` for `sm`, or for the oldest newer architecture ptxas knows."""
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas (CUDA toolkit) not on PATH: PTX not assembled")
    wanted = int(sm[3:])
    newer = [n for n in _ptxas_architectures() if n >= wanted]
    assert newer, f"ptxas knows no architecture from {sm} on"
    assemble(ptx, f"sm_{newer[0]}")


def _check(ptx: str, sm: str) -> None:
    assert f".target {sm}" in ptx
    if sm in OLD:
        assert "cp.async" not in ptx and "mma.sync" not in ptx
    _assemble(ptx, sm)


@pytest.mark.parametrize("sm", ARCHITECTURES)
@pytest.mark.parametrize("path", EXAMPLES)
def test_example_assembles(path, sm):
    _check(to_ptx(_kernels(path, sm), sm), sm)


@pytest.mark.parametrize("sm", ARCHITECTURES)
@pytest.mark.parametrize("name", PROGRAMS)
def test_contraction_assembles(name, sm):
    _check(to_ptx(_kernels(PROGRAMS[name], sm), sm), sm)


@pytest.mark.parametrize("sm", ARCHITECTURES)
def test_tf32_is_declined_before_sm80(sm):
    ptx = to_ptx(_kernels(BIAS_RELU_RESIDUAL, sm, allow_tf32=True), sm)
    assert ("mma.sync.aligned.m16n8k8" in ptx) == (sm not in OLD)
    _check(ptx, sm)


def test_kernels_for_sm80_are_refused_for_sm75():
    with pytest.raises(PTXError, match=r"cp\.async, which sm_75 lacks .*\{sm=75\}"):
        to_ptx(_lowered(BIAS_RELU_RESIDUAL, "sm_80"), "sm_75")
    with pytest.raises(PTXError, match=r"multiply in tf32, which sm_70 lacks"):
        to_ptx(_lowered(BIAS_RELU_RESIDUAL, "sm_80", allow_tf32=True), "sm_70")


def test_sm80_and_sm90_choose_the_same_kernels():
    assert str(_lowered(BATCHED, "sm_80")) == str(_lowered(BATCHED, "sm_90"))


def test_sm_applies_to_emitted_gpu_modules_only():
    with pytest.raises(ValueError, match="unknown GPU architecture 'sm_61'"):
        mlc.compile(BATCHED, target="gpu", emit="nvvm", sm="sm_61")
    with pytest.raises(ValueError, match="emit"):
        mlc.compile(BATCHED, target="cpu", sm="sm_80")

"""
A program of repeated blocks (`relu(x @ w_i + b_i) + x`, four times, each block with
its own weights) compiles each distinct kernel once (`merge_identical_functions` on the
CPU, `merge-identical-kernels` on the GPU, where `outline-contractions` builds each kind
of contraction kernel once) and still computes what numpy does.
"""

import numpy as np
import pytest
from xdsl.dialects import func, gpu, llvm

import mlc
from mlc.lowering.support.kernel_outlining import KERNEL_ATTR
from tests.gpu.targets import compile_for

BLOCKS = 4


def _program(rows: int, width: int, dtype: str) -> str:
    t = f"tensor<{rows}x{width}x{dtype}>"
    w, b = f"tensor<{width}x{width}x{dtype}>", f"tensor<{width}x{dtype}>"
    args = ", ".join(f"%w{i}: {w}, %b{i}: {b}" for i in range(BLOCKS))
    lines = [f"func.func @main(%x0: {t}, {args}) -> {t} {{"]
    for i in range(BLOCKS):
        lines += [
            f"  %m{i} = ml.matmul %x{i}, %w{i} : ({t}, {w}) -> {t}",
            f"  %a{i} = ml.add %m{i}, %b{i} : ({t}, {b}) -> {t}",
            f"  %r{i} = ml.relu %a{i} : ({t}) -> {t}",
            f"  %x{i + 1} = ml.add %r{i}, %x{i} : ({t}, {t}) -> {t}",
        ]
    lines += [f"  func.return %x{BLOCKS} : {t}", "}"]
    return "\n".join(lines)


def _reference(x: np.ndarray, weights: list[np.ndarray]) -> np.ndarray:
    for w, b in zip(weights[::2], weights[1::2]):
        x = np.maximum(x @ w + b, 0) + x
    return x


def _inputs(rows: int, width: int, dtype: type) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng()
    x = rng.standard_normal((rows, width)).astype(dtype)
    weights = []
    for _ in range(BLOCKS):
        weights.append((rng.standard_normal((width, width)) / np.sqrt(width)).astype(dtype))
        weights.append(rng.standard_normal(width).astype(dtype))
    return x, weights


def test_cpu_compiles_each_block_kernel_once():
    lowered = mlc.compile(_program(5, 24, "f32"), emit="llvm")
    chunks = [
        op
        for op in lowered.ops
        if isinstance(op, llvm.FuncOp) and op.sym_name.data.endswith("_chunk")
    ]
    assert 0 < len(chunks) < BLOCKS  # the blocks' kernels are shared


@pytest.mark.parametrize(("rows", "width", "dtype"), [(5, 24, "f32"), (3, 17, "f64")])
def test_cpu_repeated_blocks_match_numpy(rows, width, dtype):
    numpy_type = np.float32 if dtype == "f32" else np.float64
    x, weights = _inputs(rows, width, numpy_type)
    got = mlc.compile(_program(rows, width, dtype))(x, *weights)
    tolerance = 1e-4 if dtype == "f32" else 1e-10
    np.testing.assert_allclose(got, _reference(x, weights), rtol=tolerance, atol=tolerance)


def test_gpu_launches_each_block_kernel_once():
    """Lowering only (no GPU needed): one kernel serves the four blocks' launches."""
    lowered = mlc.compile(_program(5, 24, "f32"), target="gpu", emit="gpu")
    kernels = [
        inner
        for op in lowered.ops
        if isinstance(op, gpu.ModuleOp)
        for inner in op.body.ops
        if isinstance(inner, gpu.FuncOp)
    ]
    launches = [op for op in lowered.walk() if isinstance(op, gpu.LaunchFuncOp)]
    assert len(launches) >= BLOCKS
    assert len(kernels) * BLOCKS <= len(launches)
    names = {kernel.sym_name.data for kernel in kernels}
    assert {launch.kernel.nested_references.data[0].data for launch in launches} == names


@pytest.mark.gpu
def test_cuda_repeated_blocks_match_numpy():
    x, weights = _inputs(5, 24, np.float32)
    exe = compile_for(_program(5, 24, "f32"), "cuda")
    got = np.asarray(exe(x, *weights))
    np.testing.assert_allclose(got, _reference(x, weights), rtol=1e-4, atol=1e-4)


# Large enough for `convert-contractions-to-gpu`'s tiled kernel (>= 32768 outputs).
CONTRACTION_ROWS, CONTRACTION_WIDTH = 256, 128


def test_gpu_builds_each_block_contraction_once():
    """Lowering only: the four blocks' matmuls (with their fused epilogues) are one
    function called four times, so the tiled kernel is built once (`outline-contractions`)."""
    program = _program(CONTRACTION_ROWS, CONTRACTION_WIDTH, "f32")
    lowered = mlc.compile(program, target="gpu", emit="parallel-loops")
    outlined = [
        op for op in lowered.ops if isinstance(op, func.FuncOp) and KERNEL_ATTR in op.attributes
    ]
    assert len(outlined) == 1
    name = outlined[0].sym_name.data
    calls = [op for op in lowered.walk() if isinstance(op, func.CallOp)]
    assert [call.callee.root_reference.data for call in calls].count(name) == BLOCKS
    assert any(isinstance(op, gpu.LaunchOp) for op in outlined[0].walk())  # built there
    main = next(op for op in lowered.ops if isinstance(op, func.FuncOp) and op not in outlined)
    assert not any(isinstance(op, gpu.LaunchOp) for op in main.walk())


@pytest.mark.gpu
def test_cuda_repeated_contractions_match_numpy():
    x, weights = _inputs(CONTRACTION_ROWS, CONTRACTION_WIDTH, np.float32)
    exe = compile_for(_program(CONTRACTION_ROWS, CONTRACTION_WIDTH, "f32"), "cuda")
    got = np.asarray(exe(x, *weights))
    np.testing.assert_allclose(got, _reference(x, weights), rtol=1e-3, atol=1e-3)

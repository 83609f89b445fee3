"""
Tiled, vectorised and parallel code (linalg-tile, scf.parallel) against numpy and the
untiled loops, on odd sizes: primes, 1, and sizes below and above the tile sizes.
"""

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, TensorType

from mlc import pipeline
from mlc.backend.jit import JITModule
from mlc.backend.runtime import compiled_function
from mlc.ir import parse_module
from mlc.lowering.bufferize import memref_type

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
TOLERANCE = {"f32": 2e-4, "f64": 1e-11, "i32": 0}


def matmul_source(a_shape: str, b_shape: str, c_shape: str, dtype: str, name: str = "f") -> str:
    a, b, c = (f"tensor<{s}x{dtype}>" for s in (a_shape, b_shape, c_shape))
    return f"""
    func.func @{name}(%a: {a}, %b: {b}) -> {c} {{
      %c = ml.matmul %a, %b : ({a}, {b}) -> {c}
      func.return %c : {c}
    }}"""


def build_all(source: str, tile: str | None = "linalg-tile") -> dict[str, Any]:
    """
    Compile every function of `source` with the CPU stages, the tiling pass replaced by
    `tile` (None: none), in one module (one pipeline run and one JIT for many cases).
    """
    module = parse_module(source)
    signatures = {
        op.sym_name.data: op.function_type for op in module.body.ops if isinstance(op, func.FuncOp)
    }
    for stage in pipeline.stages_for("cpu"):
        passes = pipeline.STAGES[stage].split(",")
        passes = [(tile if p == "linalg-tile" else p) for p in passes]
        pipeline.run_pipeline(module, ",".join(p for p in passes if p))
    jit = JITModule(module)
    functions: dict[str, Any] = {}
    for name, signature in signatures.items():
        buffers = FunctionType.from_lists(
            [memref_type(t) if isinstance(t, TensorType) else t for t in signature.inputs],
            [memref_type(t) if isinstance(t, TensorType) else t for t in signature.outputs],
        )
        functions[name] = compiled_function(jit, name, buffers)
    return functions


def build(source: str, tile: str | None = "linalg-tile") -> Any:
    """`@f` of `source`, compiled as `build_all` does."""
    return build_all(source, tile)["f"]


def random(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> NDArray[Any]:
    if dtype.startswith("i"):
        return rng.integers(-5, 5, shape).astype(DTYPES[dtype])
    return rng.standard_normal(shape).astype(DTYPES[dtype])


def check_matmuls(cases: list[tuple[int, int, int, str]], tile: str | None = "linalg-tile") -> None:
    """Compile one module with a matmul per case; compare each with numpy in f64."""
    source = "\n".join(
        matmul_source(f"{m}x{k}", f"{k}x{n}", f"{m}x{n}", dtype, f"case{i}")
        for i, (m, k, n, dtype) in enumerate(cases)
    )
    functions = build_all(source, tile)
    for i, (m, k, n, dtype) in enumerate(cases):
        rng = np.random.default_rng(m * 10_000 + k * 100 + n)
        a, b = random((m, k), dtype, rng), random((k, n), dtype, rng)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        atol = TOLERANCE[dtype] * (np.sqrt(k) + 1)
        np.testing.assert_allclose(
            functions[f"case{i}"](a, b), expected, rtol=0, atol=atol, err_msg=str(cases[i])
        )


def check_matmul(m: int, k: int, n: int, dtype: str, tile: str | None = "linalg-tile"):
    check_matmuls([(m, k, n, dtype)], tile)


# primes, 1, and sizes below and above one vector / register block
SIZES = [(1, 1, 1), (2, 3, 5), (7, 13, 17), (1, 64, 33), (37, 29, 53), (61, 1, 47), (13, 41, 1)]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_tiled_matmul_matches_numpy(dtype: str):
    check_matmuls([(*size, dtype) for size in SIZES])


def test_small_tiles_cover_every_edge():
    # MR=3, NR=8 (two vectors of 4), KC=16, MC=6: many row, depth and column blocks
    cases = [(29, 70, 45, "f32"), (50, 9, 1, "f32"), (17, 33, 16, "f32"), (6, 16, 8, "f64")]
    check_matmuls(cases, "linalg-tile{tile-sizes=3,8,16,6 vector-length=4}")


def test_tiled_matches_untiled_loops():
    rng = np.random.default_rng(3)
    a, b = random((67, 131), "f32", rng), random((131, 71), "f32", rng)
    source = matmul_source("67x131", "131x71", "67x71", "f32")
    tiled, plain = build(source), build(source, tile=None)
    np.testing.assert_allclose(tiled(a, b), plain(a, b), rtol=1e-5, atol=1e-4)


def test_integer_matmul_is_left_to_the_loops():
    check_matmul(19, 23, 31, "i32")


def test_dynamic_dims():
    source = matmul_source("?x?", "?x?", "?x?", "f32", "general")
    source += matmul_source("?x?", "?x1", "?x1", "f32", "matvec")
    functions = build_all(source)
    rng = np.random.default_rng(5)
    for m, k, n in [(5, 7, 40), (33, 65, 1), (1, 1, 1), (300, 17, 3)]:
        a, b = random((m, k), "f32", rng), random((k, n), "f32", rng)
        for name in ("general", "matvec") if n == 1 else ("general",):
            np.testing.assert_allclose(functions[name](a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_batch_matmul():
    rng = np.random.default_rng(7)
    a, b = random((3, 17, 19), "f32", rng), random((3, 19, 23), "f32", rng)
    f = build(matmul_source("3x17x19", "3x19x23", "3x17x23", "f32"))
    np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_results_do_not_depend_on_the_thread_count(monkeypatch: pytest.MonkeyPatch):
    rng = np.random.default_rng(11)
    a, b = random((301, 257), "f32", rng), random((257, 263), "f32", rng)
    f = build(matmul_source("301x257", "257x263", "301x263", "f32"))
    monkeypatch.setenv("MLC_NUM_THREADS", "1")
    one = f(a, b)
    monkeypatch.setenv("MLC_NUM_THREADS", "3")
    three = f(a, b)
    np.testing.assert_array_equal(one, three)
    np.testing.assert_allclose(one, a @ b, rtol=1e-4, atol=1e-3)


def test_large_matmul_runs_in_parallel_and_matches():
    check_matmul(256, 256, 256, "f32")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_matvec_row_counts_around_the_block(dtype: str):
    """Eight rows per task: fewer rows than a task (one task, no parallel loop), one
    task exactly, and a partial last task; K below, at and above one vector."""
    check_matmuls([(m, k, 1, dtype) for m in (1, 3, 8, 9, 17) for k in (1, 7, 8, 9, 33)])

"""
Tiled, vectorised and parallel code (linalg-tile, scf.parallel) against numpy and the
untiled loops, on odd sizes: primes, 1, and sizes below and above the tile sizes.

The programs that check numerics also run on `cuda` (its own tiling, one compile per
program); those comparing CPU tilings, thread counts or the CPU kernel's IR stay on
the CPU.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.linalg.ops import GenericOp

import mlc
from mlc import pipeline
from mlc.backend.jit import JITModule
from mlc.backend.runtime import compiled_function
from mlc.ir import parse_module
from mlc.lowering.linalg.bufferize import memref_type
from tests.e2e.programs import bias_relu
from tests.gpu.targets import compile_once, cpu_variants_and_cuda

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32}
TOLERANCE = {"f32": 2e-4, "f64": 1e-11, "i32": 0}


def matmul_source(a_shape: str, b_shape: str, c_shape: str, dtype: str, name: str = "f") -> str:
    a, b, c = (f"tensor<{s}x{dtype}>" for s in (a_shape, b_shape, c_shape))
    return f"""
    func.func @{name}(%a: {a}, %b: {b}) -> {c} {{
      %c = ml.matmul %a, %b : ({a}, {b}) -> {c}
      func.return %c : {c}
    }}"""


def build_all(
    source: str,
    tile: str | None = "linalg-tile",
    target: str = "cpu",
    inspect: dict[str, Callable[[ModuleOp], None]] | None = None,
) -> Any:
    """
    Compile every function of `source` with the CPU stages, the tiling pass replaced by
    `tile` (None: none), in one module (one pipeline run and one JIT for many cases);
    for `cuda`, with the GPU pipeline (`tile` does not apply), once per source.
    `inspect` maps a pass of the CPU stages (`linalg-tile` for `tile`) to a check of the
    module as that pass leaves it, so that a test looks at the IR of the compile it runs.
    """
    if target != "cpu":
        return compile_once(source, target)
    inspect = dict(inspect or {})
    module = parse_module(source)
    signatures = {
        op.sym_name.data: op.function_type for op in module.body.ops if isinstance(op, func.FuncOp)
    }
    for stage in pipeline.stages_for("cpu"):
        passes: list[str] = []
        for name in pipeline.STAGES[stage].split(","):
            spec = tile if name == "linalg-tile" else name
            if spec:
                passes.append(spec)
            if name in inspect:
                if passes:
                    pipeline.run_pipeline(module, ",".join(passes))
                inspect.pop(name)(module)
                passes = []
        if passes:
            pipeline.run_pipeline(module, ",".join(passes))
    assert not inspect, f"no pass {', '.join(inspect)} in the CPU stages"
    jit = JITModule(module)
    functions: dict[str, Any] = {}
    for name, signature in signatures.items():
        buffers = FunctionType.from_lists(
            [memref_type(t) if isinstance(t, TensorType) else t for t in signature.inputs],
            [memref_type(t) if isinstance(t, TensorType) else t for t in signature.outputs],
        )
        functions[name] = compiled_function(jit, name, buffers)
    return functions


def build(source: str, tile: str | None = "linalg-tile", target: str = "cpu") -> Any:
    """`@f` of `source`, compiled as `build_all` does."""
    return build_all(source, tile, target)["f"]


def random(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> NDArray[Any]:
    if dtype.startswith("i"):
        return rng.integers(-5, 5, shape).astype(DTYPES[dtype])
    return rng.standard_normal(shape).astype(DTYPES[dtype])


def check_matmuls(
    cases: list[tuple[int, int, int, str]], tile: str | None = "linalg-tile", target: str = "cpu"
) -> None:
    """Compile one module with a matmul per case; compare each with numpy in f64."""
    source = "\n".join(
        matmul_source(f"{m}x{k}", f"{k}x{n}", f"{m}x{n}", dtype, f"case{i}")
        for i, (m, k, n, dtype) in enumerate(cases)
    )
    functions = build_all(source, tile, target)
    for i, (m, k, n, dtype) in enumerate(cases):
        rng = np.random.default_rng(m * 10_000 + k * 100 + n)
        a, b = random((m, k), dtype, rng), random((k, n), dtype, rng)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        atol = TOLERANCE[dtype] * (np.sqrt(k) + 1)
        np.testing.assert_allclose(
            functions[f"case{i}"](a, b), expected, rtol=0, atol=atol, err_msg=str(cases[i])
        )


def check_matmul(m: int, k: int, n: int, dtype: str, target: str = "cpu"):
    check_matmuls([(m, k, n, dtype)], target=target)


# primes, 1, and sizes below and above one vector / register block
SIZES = [(1, 1, 1), (2, 3, 5), (7, 13, 17), (1, 64, 33), (37, 29, 53), (61, 1, 47), (13, 41, 1)]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_tiled_matmul_matches_numpy(dtype: str, target: str):
    check_matmuls([(*size, dtype) for size in SIZES], target=target)


def test_small_tiles_cover_every_edge():
    # MR=3, NR=8 (two vectors of 4), KC=16, MC=6: many row, depth and column blocks
    cases = [(29, 70, 45, "f32"), (50, 9, 1, "f32"), (17, 33, 16, "f32"), (6, 16, 8, "f64")]
    check_matmuls(cases, "linalg-tile{tile-sizes=3,8,16,6 vector-length=4}")


def test_packed_a_blocks_match_numpy():
    # N at and above the packing threshold (8 panels), K above half a K block: M not a
    # multiple of MR nor of MC, K across several K blocks, a partial last column panel,
    # M = 1; with the host's tiles (NR = 2 vectors, KC = 256) and with small ones
    # (NR = 8, KC = 16: A packed from N = 64 and K = 9); short K reads A in place.
    wide = [(1, 133, 200), (29, 300, 131), (97, 257, 257), (13, 7, 128), (6, 1, 500)]
    check_matmuls([(*size, "f32") for size in wide] + [(37, 41, 130, "f64")])
    small = [(29, 70, 67), (1, 17, 64), (8, 33, 71), (50, 9, 100)]
    check_matmuls(
        [(*size, "f32") for size in small], "linalg-tile{tile-sizes=3,8,16,6 vector-length=4}"
    )


def test_tiled_matches_untiled_loops():
    rng = np.random.default_rng(3)
    a, b = random((67, 131), "f32", rng), random((131, 71), "f32", rng)
    source = matmul_source("67x131", "131x71", "67x71", "f32")
    tiled, plain = build(source), build(source, tile=None)
    np.testing.assert_allclose(tiled(a, b), plain(a, b), rtol=1e-5, atol=1e-4)


def test_integer_matmul_is_left_to_the_loops(target: str):
    check_matmul(19, 23, 31, "i32", target)


def test_dynamic_dims(target: str):
    source = matmul_source("?x?", "?x?", "?x?", "f32", "general")
    source += matmul_source("?x?", "?x1", "?x1", "f32", "matvec")
    functions = build_all(source, target=target)
    rng = np.random.default_rng(5)
    for m, k, n in [(5, 7, 40), (33, 65, 1), (1, 1, 1), (300, 17, 3)]:
        a, b = random((m, k), "f32", rng), random((k, n), "f32", rng)
        for name in ("general", "matvec") if n == 1 else ("general",):
            np.testing.assert_allclose(functions[name](a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_batch_matmul(target: str):
    rng = np.random.default_rng(7)
    a, b = random((3, 17, 19), "f32", rng), random((3, 19, 23), "f32", rng)
    f = build(matmul_source("3x17x19", "3x19x23", "3x17x23", "f32"), target=target)
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


# the last case has the work to run on the thread pool
MATVEC_CASES = [(m, k) for m in (1, 5, 8, 9, 17) for k in (1, 7, 8, 9, 33)] + [(997, 301)]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_matvec_row_counts_around_the_block(
    dtype: str, target: str, monkeypatch: pytest.MonkeyPatch
):
    """Eight rows per task: fewer rows than a task (one task, no parallel loop), one
    task exactly, a partial last task; K below, at and above one vector (with and
    without the vector loop and the scalar tail). One thread and two give the same
    bits."""
    source = "\n".join(
        matmul_source(f"{m}x{k}", f"{k}x1", f"{m}x1", dtype, f"case{i}")
        for i, (m, k) in enumerate(MATVEC_CASES)
    )
    functions = build_all(source, target=target)
    for i, (m, k) in enumerate(MATVEC_CASES):
        rng = np.random.default_rng(m * 100 + k)
        a, x = random((m, k), dtype, rng), random((k, 1), dtype, rng)
        results = []
        for threads in ("1", "2"):
            monkeypatch.setenv("MLC_NUM_THREADS", threads)
            results.append(functions[f"case{i}"](a, x))
        expected = a.astype(np.float64) @ x.astype(np.float64)
        atol = TOLERANCE[dtype] * (np.sqrt(k) + 1)
        np.testing.assert_allclose(results[0], expected, rtol=0, atol=atol, err_msg=str((m, k)))
        np.testing.assert_array_equal(results[0], results[1], err_msg=str((m, k)))


def epilogue_source(m: str, k: int, n: int, dtype: str, name: str) -> str:
    """gelu(x @ w + bias) * scale[rows] + residual: an epilogue with every kind of read."""
    x, w, y = f"tensor<{m}x{k}x{dtype}>", f"tensor<{k}x{n}x{dtype}>", f"tensor<{m}x{n}x{dtype}>"
    bias, scale = f"tensor<{n}x{dtype}>", f"tensor<{m}x1x{dtype}>"
    return f"""
    func.func @{name}(%x: {x}, %w: {w}, %bias: {bias}, %scale: {scale}, %res: {y}) -> {y} {{
      %mm = ml.matmul %x, %w : ({x}, {w}) -> {y}
      %b = ml.add %mm, %bias : ({y}, {bias}) -> {y}
      %g = ml.gelu %b : ({y}) -> {y}
      %s = ml.mul %g, %scale : ({y}, {scale}) -> {y}
      %o = ml.add %s, %res : ({y}, {y}) -> {y}
      func.return %o : {y}
    }}"""


def gelu(h: NDArray[Any]) -> NDArray[Any]:
    from math import erf

    return 0.5 * h * (1 + np.vectorize(erf)(h / np.sqrt(2)))


EPILOGUE_SIZES = [(1, 1, 1), (2, 3, 17), (7, 13, 16), (37, 29, 53), (61, 70, 47), (13, 41, 33)]


@pytest.mark.parametrize(
    "tile", ["linalg-tile", "linalg-tile{tile-sizes=3,8,16,6 vector-length=4}"]
)
def test_epilogue_applied_by_the_kernel(tile: str):
    # On `cuda`: tests/gpu/test_tiled_matmul.py's epilogue tests.
    # Odd sizes below and above the tiles, several K blocks with the small tiles, and
    # one dynamic-row case: the result must equal numpy's at every element.
    cases = [(str(m), k, n) for m, k, n in EPILOGUE_SIZES] + [("?", 29, 53)]
    source = "\n".join(
        epilogue_source(m, k, n, "f32", f"case{i}") for i, (m, k, n) in enumerate(cases)
    )

    def fused(module: ModuleOp) -> None:
        generics = [op for op in module.walk() if op.name == "linalg.generic"]
        assert any(any(o.name == "scf.if" for o in g.walk()) for g in generics)

    functions = build_all(source, tile, inspect={"linalg-fuse-elementwise": fused})
    for i, (m, k, n) in enumerate(cases):
        rows = 37 if m == "?" else int(m)
        rng = np.random.default_rng(rows * 10_000 + k * 100 + n)
        x, w = random((rows, k), "f32", rng), random((k, n), "f32", rng)
        bias, scale = random((n,), "f32", rng), random((rows, 1), "f32", rng)
        res = random((rows, n), "f32", rng)
        want = gelu(x.astype(np.float64) @ w + bias) * scale + res
        got = functions[f"case{i}"](x, w, bias, scale, res)
        atol = 2e-4 * (np.sqrt(k) + 1)
        np.testing.assert_allclose(got, want, rtol=0, atol=atol, err_msg=str(cases[i]))


def test_epilogue_matches_unfused_and_untiled():
    source = epilogue_source("67", 131, 71, "f64", "f")
    rng = np.random.default_rng(13)
    args = [random(s, "f64", rng) for s in ((67, 131), (131, 71), (71,), (67, 1), (67, 71))]
    tiled, plain = build(source), build(source, tile=None)
    np.testing.assert_allclose(tiled(*args), plain(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "shapes",
    [
        ("5x17x19", "5x19x23", "5x17x23"),  # one B per batch
        ("2x3x7x33", "33x17", "2x3x7x17"),  # B shared by every batch
        ("4x9x8", "1x8x40", "4x9x40"),  # B broadcast from one batch
        ("?x13x21", "?x21x16", "?x13x16"),  # dynamic batch
    ],
)
def test_batched_matmul_through_the_kernel(shapes: tuple[str, str, str], target: str):
    source = matmul_source(*shapes, "f32")

    def kernel_ran(module: ModuleOp) -> None:
        assert any(op.name == "vector.fma" for op in module.walk())  # the micro-kernel ran

    f = build_all(source, target=target, inspect={"linalg-tile": kernel_ran})["f"]
    rng = np.random.default_rng(17)
    a_shape, b_shape = ([int(d) if d != "?" else 3 for d in s.split("x")] for s in shapes[:2])
    a, b = random(tuple(a_shape), "f32", rng), random(tuple(b_shape), "f32", rng)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(f(a, b), want, rtol=0, atol=1e-4 * np.sqrt(a.shape[-1]))


# (image, weight, strides, dilations, pads, groups): odd sizes above and below the tiles
CONVS = [
    ((2, 5, 13, 11), (7, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    ((1, 6, 17, 9), (10, 3, 3, 2), (2, 1), (1, 2), (0, 1, 2, 0), 2),
    ((3, 16, 7, 7), (33, 16, 1, 1), (1, 1), (1, 1), (0, 0, 0, 0), 1),  # 1x1: a plain GEMM
    ((1, 4, 6, 5), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 4),  # depthwise: its own kernel
    ((2, 3, 5, 70), (5, 3, 3, 3), (1, 1), (1, 2), (1, 0, 1, 3), 1),  # rows of 69: vector packing
    ((2, 4, 8, 8), (6, 4, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # rows of 8: panels span rows
    ((1, 3, 6, 12), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # rows of 12: some vectors fit
    # rows narrower than a vector, panels starting mid-row: copied in masked row pieces
    ((2, 8, 7, 7), (9, 8, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # rows of 7
    ((1, 5, 14, 14), (6, 5, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # rows of 14
    ((3, 4, 3, 3), (5, 4, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # one panel past N
    # stride 2: each row piece read as two vectors of the image row, even lanes kept
    ((2, 3, 11, 23), (4, 3, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1),  # rows of 12
    ((1, 3, 32, 32), (8, 3, 7, 7), (2, 2), (1, 1), (3, 3, 3, 3), 1),  # a 7x7 stem
    ((1, 2, 9, 40), (3, 2, 3, 3), (1, 2), (1, 2), (0, 0, 0, 0), 1),  # dilated, rows of 18
    ((1, 2, 10, 10), (3, 2, 3, 3), (3, 3), (1, 1), (1, 1, 1, 1), 1),  # stride 3: by columns
    # at most 4 columns (2x2, 1x1 outputs): one 4-lane panel
    ((8, 32, 2, 2), (32, 32, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    ((3, 16, 4, 4), (9, 16, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), 1),
    ((2, 8, 3, 3), (5, 8, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1),  # 1x1 output
    ((2, 64, 1, 1), (70, 64, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # 1x1, mostly padding
]


@pytest.mark.parametrize(
    "tile_target", cpu_variants_and_cuda(["", "{tile-sizes=3,8,16,6 vector-length=4}"])
)
@pytest.mark.parametrize("case", CONVS, ids=range(len(CONVS)))
def test_conv_through_the_kernel(case, tile_target, monkeypatch: pytest.MonkeyPatch):
    # relu(conv(x, w) + bias, scaled per channel) + residual: the epilogue fuses into
    # the convolution and the micro-kernel applies it to the implicit GEMM's tiles.
    from mlc.dialects import ml
    from tests.e2e.programs import program, tensor
    from tests.e2e.test_ml_ops_cpu import conv2d_reference

    tile, target = tile_target
    x_shape, w_shape, strides, dilations, pads, groups = case
    attrs = dict(strides=strides, dilations=dilations, pads=pads, groups=groups)
    rng = np.random.default_rng(sum(x_shape) * 100 + sum(w_shape))
    x, w = random(x_shape, "f32", rng), random(w_shape, "f32", rng)
    bias, scale = random((w_shape[0],), "f32", rng), random((w_shape[0], 1, 1), "f32", rng)
    plain = conv2d_reference(x.astype(np.float64), w.astype(np.float64), bias, **attrs)
    residual = random(plain.shape, "f32", rng)
    want = np.maximum(plain * scale + residual, 0)
    types = [tensor(a.shape, "float32") for a in (x, w, bias, scale, residual)]

    def build(x, w, b, s, r):
        conv = ml.Conv2dOp(x, w, b, **attrs)
        scaled = ml.MulOp(conv, s)
        total = ml.AddOp(scaled, r)
        return [conv, scaled, total, ml.ReluOp(total)]

    module = program(types, build)
    if target == "cpu":
        loops = pipeline.STAGES["loops"].replace("linalg-tile", "linalg-tile" + tile)
        monkeypatch.setitem(pipeline.STAGES, "loops", loops)
        lowered = pipeline.lower(module.clone(), emit="loops")
        depthwise = groups == w_shape[0] and w_shape[1] == 1  # `depthwise_conv`'s scalar taps
        if not depthwise:
            assert any(op.name == "vector.fma" for op in lowered.walk())  # the micro-kernel ran
        assert not any(op.name == "linalg.generic" for op in lowered.walk())  # epilogue too
    got = compile_once(str(module), target)(x, w, bias, scale, residual)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(np.prod(w_shape[1:])))


# (a shape, a's transpose, b shape, b's transpose, bias + relu epilogue): `ml.transpose`
# folded into the matmul's map, the kernel packing B from its own layout; odd sizes
# below and above the tiles, batched and broadcast, attention's head permutations.
TRANSPOSED = [
    ((37, 29), None, (53, 29), (1, 0), False),
    ((29, 37), (1, 0), (29, 53), None, False),
    ((70, 13), (1, 0), (47, 70), (1, 0), True),
    ((2, 3), None, (17, 3), (1, 0), True),
    ((64, 100), None, (130, 100), (1, 0), True),
    ((3, 17, 19), None, (3, 23, 19), (0, 2, 1), False),
    ((2, 7, 33), None, (40, 33), (1, 0), True),
    ((1, 13, 4, 8), (0, 2, 1, 3), (1, 13, 4, 8), (0, 2, 3, 1), False),
    ((1, 4, 13, 13), None, (1, 13, 4, 9), (0, 2, 1, 3), False),
    (("?", 29), None, (53, 29), (1, 0), True),
    ((40, 23), (1, 0), (40, 140), None, True),  # A packed from its transpose
    ((3, 19, 17), (0, 2, 1), (3, 133, 19), (0, 2, 1), True),  # batched, both, packed A
]


def _type(shape: tuple[Any, ...]) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}xf32>"


def transposed_source(case: tuple[Any, ...], name: str) -> str:
    a_shape, a_perm, b_shape, b_perm, epilogue = case
    a_t, b_t = (
        [s[p] for p in perm] if perm else list(s)
        for s, perm in ((a_shape, a_perm), (b_shape, b_perm))
    )
    out = _type((*a_t[:-1], b_t[-1]))
    bias = _type((b_t[-1],))
    lines = [
        f"func.func @{name}(%a: {_type(a_shape)}, %b: {_type(b_shape)}, %bias: {bias}) -> {out} {{"
    ]
    names = []
    for n, (shape, perm, moved) in enumerate(((a_shape, a_perm, a_t), (b_shape, b_perm, b_t))):
        value = "%a" if n == 0 else "%b"
        if perm:
            attribute = f"{{perm = array<i64: {', '.join(map(str, perm))}>}}"
            lines.append(
                f'  %t{n} = "ml.transpose"({value}) {attribute}'
                f" : ({_type(shape)}) -> {_type(tuple(moved))}"
            )
            value = f"%t{n}"
        names.append((value, _type(tuple(moved))))
    (a, a_type), (b, b_type) = names
    lines.append(f"  %m = ml.matmul {a}, {b} : ({a_type}, {b_type}) -> {out}")
    result = bias_relu(lines, "%m", out, bias) if epilogue else "%m"
    lines += [f"  func.return {result} : {out}", "}"]
    return "\n".join(lines)


@pytest.fixture(
    scope="module", params=["linalg-tile", "linalg-tile{tile-sizes=3,8,16,6 vector-length=4}"]
)
def transposed_functions(request: pytest.FixtureRequest) -> dict[str, Any]:
    # On `cuda`: tests/gpu/test_tiled_matmul.py's transposed operands.
    source = "\n".join(transposed_source(case, f"case{i}") for i, case in enumerate(TRANSPOSED))

    def in_the_kernel(module: ModuleOp) -> None:
        # every matmul in the kernel (`A^T @ B^T` may be reordered to `(B @ A)^T` first)
        generics = [op for op in module.walk() if isinstance(op, GenericOp)]
        assert all("reduction" not in str(op.iterator_types) for op in generics)

    return build_all(source, request.param, inspect={"linalg-tile": in_the_kernel})


@pytest.mark.parametrize("index", range(len(TRANSPOSED)))
def test_transposed_operands_through_the_kernel(transposed_functions: dict[str, Any], index: int):
    a_shape, a_perm, b_shape, b_perm, epilogue = TRANSPOSED[index]
    rng = np.random.default_rng(index)
    a_shape = tuple(31 if d == "?" else d for d in a_shape)
    a, b = random(a_shape, "f32", rng), random(b_shape, "f32", rng)
    a_t = a.astype(np.float64).transpose(a_perm) if a_perm else a.astype(np.float64)
    b_t = b.astype(np.float64).transpose(b_perm) if b_perm else b.astype(np.float64)
    bias = random((b_t.shape[-1],), "f32", rng)
    want = a_t @ b_t
    if epilogue:
        want = np.maximum(want + bias, 0)
    got = transposed_functions[f"case{index}"](a, b, bias)
    atol = 2e-4 * (np.sqrt(a_t.shape[-1]) + 1)
    np.testing.assert_allclose(got, want, rtol=0, atol=atol, err_msg=str(TRANSPOSED[index]))


def test_transposed_matrix_vector_products(target: str):
    # N = 1 with A or B read transposed: not the dot-product kernel's plain rows of A
    cases = [((29, 37), (1, 0), (29, 1), None, False), ((37, 29), None, (1, 29), (1, 0), False)]
    source = "\n".join(transposed_source(case, f"case{i}") for i, case in enumerate(cases))
    functions = build_all(source, target=target)
    rng = np.random.default_rng(29)
    for i, (a_shape, a_perm, b_shape, b_perm, _) in enumerate(cases):
        a, b = random(a_shape, "f32", rng), random(b_shape, "f32", rng)
        a_t, b_t = (v.transpose(p) if p else v for v, p in ((a, a_perm), (b, b_perm)))
        got = functions[f"case{i}"](a, b, random((1,), "f32", rng))
        np.testing.assert_allclose(got, a_t.astype(np.float64) @ b_t, rtol=0, atol=1e-4 * 6)


def test_constant_weights_are_packed_at_compile_time():
    # Weights as `dense_resource` constants (as the ONNX frontend makes them), read
    # plainly, transposed (Gemm's transB) and with an epilogue, N not a multiple of NR:
    # their panels are packed once when compiling, and no call packs them.
    from mlc import resources

    rng = np.random.default_rng(23)
    rows, k = 37, 29
    w_plain, w_t = random((k, 45), "f32", rng), random((53, k), "f32", rng)
    bias = random((53,), "f32", rng)
    h_plain, h_t, h_bias = (
        resources.register(v, name) for v, name in ((w_plain, "w"), (w_t, "wt"), (bias, "b"))
    )
    x_type = f"tensor<?x{k}xf32>"
    source = f"""
    func.func @f(%x: {x_type}) -> (tensor<?x45xf32>, tensor<?x53xf32>) {{
      %w = arith.constant dense_resource<{h_plain}> : tensor<{k}x45xf32>
      %wt = arith.constant dense_resource<{h_t}> : tensor<53x{k}xf32>
      %b = arith.constant dense_resource<{h_bias}> : tensor<53xf32>
      %t = ml.transpose %wt {{perm = array<i64: 1, 0>}} : (tensor<53x{k}xf32>) -> tensor<{k}x53xf32>
      %y = ml.matmul %x, %w : ({x_type}, tensor<{k}x45xf32>) -> tensor<?x45xf32>
      %z = ml.matmul %x, %t : ({x_type}, tensor<{k}x53xf32>) -> tensor<?x53xf32>
      %s = ml.add %z, %b : (tensor<?x53xf32>, tensor<53xf32>) -> tensor<?x53xf32>
      func.return %y, %s : tensor<?x45xf32>, tensor<?x53xf32>
    }}"""
    module = parse_module(source)  # once: a second parse would rename the handles
    lowered = pipeline.lower(module.clone(), emit="loops")
    panels = [op for op in lowered.walk() if "panels" in str(op.properties.get("sym_name", ""))]
    assert len(panels) == 2
    allocs = [op for op in lowered.walk() if op.name == "memref.alloc"]
    assert all(len(op.results[0].type.get_shape()) < 4 for op in allocs)  # no pack buffer
    x = random((rows, k), "f32", rng)
    y, z = mlc.compile(module)(x)
    np.testing.assert_allclose(y, x @ w_plain.astype(np.float64), rtol=0, atol=1e-4 * np.sqrt(k))
    want = x @ w_t.T.astype(np.float64) + bias
    np.testing.assert_allclose(z, want, rtol=0, atol=1e-4 * np.sqrt(k))


def test_partial_tiles_do_not_grow_the_stack():
    # 256 K blocks x 42 row blocks of partial column tiles per task: the stack buffers
    # they once went through added up past a 1 MiB stack (a crash); they now store
    # their lanes below N with masked stores, no buffer at all.
    import resource
    import subprocess
    import sys

    program = f"""
import numpy as np, mlc
from mlc import pipeline
tiles = "linalg-tile{{tile-sizes=6,16,16,252}}"
pipeline.STAGES["loops"] = pipeline.STAGES["loops"].replace("linalg-tile", tiles)
source = '''{matmul_source("504x4096", "4096x17", "504x17", "f32")}'''
rng = np.random.default_rng(0)
a, b = rng.standard_normal((504, 4096), np.float32), rng.standard_normal((4096, 17), np.float32)
print(np.abs(mlc.compile(source)(a, b) - a @ b).max())
"""

    def small_stack() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))

    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, preexec_fn=small_stack
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) < 0.05

"""
`fuse-row-epilogues` keeps the numbers: programs lowered as the GPU lowers them (online
softmax, generics as `scf.parallel`s), fused, then run on the CPU, whose backend runs
`scf.parallel` as it is; against numpy in float64 on fresh random inputs. Each program
must fuse to one loop nest (the GPU's one kernel) where its reduction has consumers.
Then softmax (after a bias) and layer norm over rows of many widths, on each target:
on `cuda` they are the fused warp kernels (short rows: several a warp).
"""

import numpy as np
import pytest

import mlc
from mlc import pipeline
from tests.gpu.targets import compile_for

SOFTMAX = """
func.func @main(%x: tensor<?x37xf32>) -> tensor<?x37xf32> {
  %y = ml.softmax %x {axis = -1 : i64} : (tensor<?x37xf32>) -> tensor<?x37xf32>
  func.return %y : tensor<?x37xf32>
}
"""
SOFTMAX_3D = """
func.func @main(%x: tensor<2x5x70xf32>) -> tensor<2x5x70xf32> {
  %y = ml.softmax %x {axis = 2 : i64} : (tensor<2x5x70xf32>) -> tensor<2x5x70xf32>
  func.return %y : tensor<2x5x70xf32>
}
"""
LAYER_NORM = """
func.func @main(%x: tensor<?x96xf32>, %g: tensor<96xf32>, %b: tensor<96xf32>) -> tensor<?x96xf32> {
  %y = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32}
      : (tensor<?x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<?x96xf32>
  func.return %y : tensor<?x96xf32>
}
"""
CENTERED = """
func.func @main(%x: tensor<9x33xf32>) -> (tensor<9x33xf32>, tensor<9x1xf32>) {
  %m = ml.reduce_mean %x {axes = array<i64: 1>, keepdims = true}
      : (tensor<9x33xf32>) -> tensor<9x1xf32>
  %y = ml.sub %x, %m : (tensor<9x33xf32>, tensor<9x1xf32>) -> tensor<9x33xf32>
  func.return %y, %m : tensor<9x33xf32>, tensor<9x1xf32>
}
"""
BIAS_SOFTMAX = """
func.func @main(%x: tensor<?x10xf32>, %b: tensor<10xf32>) -> tensor<?x10xf32> {
  %s = ml.add %x, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %y = ml.softmax %s {axis = -1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  func.return %y : tensor<?x10xf32>
}
"""
ROW_SUMS = """
func.func @main(%x: tensor<9x33xf32>) -> tensor<9xf32> {
  %s = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = false}
      : (tensor<9x33xf32>) -> tensor<9xf32>
  func.return %s : tensor<9xf32>
}
"""
HEAD_SOFTMAX = """
func.func @main(%x: tensor<?x40xf32>, %w: tensor<40x10xf32>, %b: tensor<10xf32>)
    -> tensor<?x10xf32> {
  %h = ml.matmul %x, %w : (tensor<?x40xf32>, tensor<40x10xf32>) -> tensor<?x10xf32>
  %s = ml.add %h, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %y = ml.softmax %s {axis = -1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  func.return %y : tensor<?x10xf32>
}
"""
HEAD_BIAS = """
func.func @main(%x: tensor<?x40xf32>, %w: tensor<40x7xf32>, %b: tensor<7xf32>)
    -> tensor<?x7xf32> {
  %h = ml.matmul %x, %w : (tensor<?x40xf32>, tensor<40x7xf32>) -> tensor<?x7xf32>
  %s = ml.add %h, %b : (tensor<?x7xf32>, tensor<7xf32>) -> tensor<?x7xf32>
  func.return %s : tensor<?x7xf32>
}
"""
COLUMN_SOFTMAX = """
func.func @main(%x: tensor<24x24xf32>) -> tensor<24x24xf32> {
  %y = ml.softmax %x {axis = 0 : i64} : (tensor<24x24xf32>) -> tensor<24x24xf32>
  func.return %y : tensor<24x24xf32>
}
"""


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, g, b):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b


def centered(x):
    m = x.mean(1, keepdims=True)
    return x - m, m


@pytest.fixture
def gpu_loops(monkeypatch: pytest.MonkeyPatch):
    """The CPU compiles through the GPU's linalg and parallel-loops forms, then fuses."""
    loops = pipeline.stage_text("parallel-loops", target="gpu").split(",")
    loops = [p for p in loops if not p.startswith(pipeline.CONTRACTIONS)]
    monkeypatch.setitem(pipeline.STAGES, "linalg", pipeline.TARGET_STAGE_TEXT["gpu"]["linalg"])
    monkeypatch.setitem(pipeline.STAGES, "loops", ",".join([*loops, "fuse-row-epilogues"]))


def loop_nests(source: str) -> int:
    module = mlc.compile(source, emit="loops")
    return sum(1 for op in module.walk() if op.name == "scf.parallel")


CASES = {
    "softmax": (SOFTMAX, [(6, 37)], lambda x: softmax(x), 1),
    "softmax_3d": (SOFTMAX_3D, [(2, 5, 70)], lambda x: softmax(x), 1),
    "layer_norm": (LAYER_NORM, [(7, 96), (96,), (96,)], layer_norm, 1),
    "centered": (CENTERED, [(9, 33)], centered, 1),
    # the MLP's head: the bias joins both passes, the normalisation writes in place
    "bias_softmax": (BIAS_SOFTMAX, [(13, 10), (10,)], lambda x, b: softmax(x + b), 1),
    "row_sums": (ROW_SUMS, [(9, 33)], lambda x: x.sum(1), 1),
    # a narrow contraction's rows: the softmax over its columns joins them, unrolled
    "head_softmax": (
        HEAD_SOFTMAX,
        [(11, 40), (40, 10), (10,)],
        lambda x, w, b: softmax(x @ w + b),
        1,
    ),
    # its fused bias, peeled after the reduction
    "head_bias": (HEAD_BIAS, [(11, 40), (40, 7), (7,)], lambda x, w, b: x @ w + b, 1),
    # reduced along the rows: the consumer's rows are not the reduction's, no fusion
    "column_softmax": (COLUMN_SOFTMAX, [(24, 24)], lambda x: softmax(x, 0), 2),
}


@pytest.mark.parametrize("name", CASES)
def test_fused_programs_match_numpy(gpu_loops, name):
    source, shapes, reference, nests = CASES[name]
    assert loop_nests(source) == nests
    exe = mlc.compile(source)
    rng = np.random.default_rng()
    args = [(rng.standard_normal(s) * 4).astype(np.float32) for s in shapes]
    got = exe(*args)
    want = reference(*(a.astype(np.float64) for a in args))
    got, want = (v if isinstance(v, tuple) else (v,) for v in (got, want))
    for g, w in zip(got, want, strict=True):
        # An f32 sum of terms near 100 that cancels to near 0 keeps their rounding
        # noise: the absolute tolerance follows the size of the results.
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6 * max(1.0, np.abs(w).max()))


def test_rows_holding_inf_and_nan_stay_their_own(gpu_loops):
    exe = mlc.compile(SOFTMAX)
    x = np.random.default_rng().standard_normal((5, 37)).astype(np.float32)
    x[1, 3], x[2, 30], x[3, :] = np.inf, np.nan, -np.inf
    got = exe(x)
    assert np.isnan(got[1:4]).all()
    np.testing.assert_allclose(got[[0, 4]], softmax(x[[0, 4]].astype(np.float64)), rtol=2e-5)


def row_program(op: str, rows: str, columns: int) -> str:
    """`op` over rows of `columns` elements (`rows` may be `?`), with its parameters."""
    t, v = f"tensor<{rows}x{columns}xf32>", f"tensor<{columns}xf32>"
    if op == "layer_norm":
        params = f"%x: {t}, %g: {v}, %b: {v}"
        body = (
            f"%y = ml.layer_norm %x, %g, %b {{axis = -1 : i64, epsilon = 1.0e-05 : f32}}"
            f" : ({t}, {v}, {v}) -> {t}"
        )
    else:
        params = f"%x: {t}, %b: {v}"
        body = (
            f"%s = ml.add %x, %b : ({t}, {v}) -> {t}\n"
            f"  %y = ml.softmax %s {{axis = -1 : i64}} : ({t}) -> {t}"
        )
    return f"func.func @main({params}) -> {t} {{\n  {body}\n  func.return %y : {t}\n}}"


# Rows a part of a warp takes (1, 3, 10, 16 columns), a warp (17, 40), and many
# unrolled steps a lane with a tail (1000, 4104); static and dynamic row counts that
# leave the last warp partly empty.
@pytest.mark.parametrize("op", ["softmax", "layer_norm"])
@pytest.mark.parametrize("columns", [1, 3, 10, 16, 17, 40, 1000, 4104])
@pytest.mark.parametrize("rows", ["7", "?"])
def test_row_programs_match_numpy(op, columns, rows, target):
    exe = compile_for(row_program(op, rows, columns), target)
    rng = np.random.default_rng()
    for n in [7] if rows == "7" else [1, 5, 33]:
        x = (rng.standard_normal((n, columns)) * 4).astype(np.float32)
        g, b = (rng.standard_normal(columns).astype(np.float32) for _ in range(2))
        wide = [v.astype(np.float64) for v in (x, g, b)]
        if op == "layer_norm":
            got, want = exe(x, g, b), layer_norm(*wide)
        else:
            got, want = exe(x, b), softmax(wide[0] + wide[2])
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=5e-6, err_msg=f"{n} rows")


def head_program(rows: str, depth: int, columns: int) -> str:
    """A classifier head: softmax(x @ w + b) over `columns` outputs a row."""
    x, w = f"tensor<{rows}x{depth}xf32>", f"tensor<{depth}x{columns}xf32>"
    y, b = f"tensor<{rows}x{columns}xf32>", f"tensor<{columns}xf32>"
    return (
        f"func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{\n"
        f"  %h = ml.matmul %x, %w : ({x}, {w}) -> {y}\n"
        f"  %s = ml.add %h, %b : ({y}, {b}) -> {y}\n"
        f"  %y = ml.softmax %s {{axis = -1 : i64}} : ({y}) -> {y}\n"
        f"  func.return %y : {y}\n}}"
    )


# Narrow heads (at most 16 columns: a warp shares each row, the softmax joins it) and
# one just past them (17: the tiled kernel, then a softmax kernel), over a depth that a
# quarter warp takes in one step (5) and in many with a tail (300), with the weights
# staged in shared memory (static, under 16 KiB) or not (300 x 16 floats is more).
@pytest.mark.parametrize("columns", [1, 3, 10, 16, 17])
@pytest.mark.parametrize("depth", [5, 300])
@pytest.mark.parametrize("rows", ["4099", "?"])
def test_heads_match_numpy(columns, depth, rows, target):
    exe = compile_for(head_program(rows, depth, columns), target)
    rng = np.random.default_rng()
    for n in [4099] if rows != "?" else [1, 6, 1001]:
        x = rng.standard_normal((n, depth)).astype(np.float32)
        w = (rng.standard_normal((depth, columns)) / np.sqrt(depth)).astype(np.float32)
        b = rng.standard_normal(columns).astype(np.float32)
        want = softmax(x.astype(np.float64) @ w.astype(np.float64) + b)
        np.testing.assert_allclose(exe(x, w, b), want, rtol=1e-4, atol=1e-6, err_msg=f"{n} rows")


def test_head_rows_holding_inf_and_nan_stay_their_own(target):
    exe = compile_for(head_program("?", 40, 10), target)
    rng = np.random.default_rng()
    x = rng.standard_normal((6, 40)).astype(np.float32)
    w = rng.standard_normal((40, 10)).astype(np.float32)
    b = rng.standard_normal(10).astype(np.float32)
    x[1, 0], x[2, 3] = np.inf, np.nan
    got = exe(x, w, b)
    assert np.isnan(got[1:3]).all()
    rest = [0, 3, 4, 5]
    want = softmax(x[rest].astype(np.float64) @ w.astype(np.float64) + b)
    np.testing.assert_allclose(got[rest], want, rtol=1e-4, atol=1e-6)

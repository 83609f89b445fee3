"""
GEMMs of different sizes calling the program's shared micro-kernel functions
(`mlc.lowering.cpu.shared_micro_kernel`) against numpy: chains of matmuls of odd sizes
(N ending inside a panel, M not a multiple of MR, K of one and several blocks, A read
transposed) and of convolutions (batch 1 and 8, strides, padding), in f32 and f64. The
tiled IR holds one function per kind, called from every GEMM.
"""

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import mlc
from mlc.compiler import executable_cache

# (M, K, N) of a chain x @ w1 @ w2 @ w3: K of the next is N of the last
CHAIN = [(13, 29, 37), (13, 37, 300), (13, 300, 17)]


def _matmul_chain(element: str) -> str:
    """x @ w1 @ w2 @ w3, and x^T's product with a fourth weight (A read transposed)."""
    (m, k, _), ns = CHAIN[0], [n for _, _, n in CHAIN]
    t = lambda r, c: f"tensor<{r}x{c}x{element}>"  # noqa: E731
    lines = [
        f"func.func @main(%x: {t(m, k)}, %w1: {t(k, ns[0])}, %w2: {t(ns[0], ns[1])}, "
        f"%w3: {t(ns[1], ns[2])}, %w4: {t(m, 11)}) -> ({t(m, ns[2])}, {t(k, 11)}) {{",
        f"  %h1 = ml.matmul %x, %w1 : ({t(m, k)}, {t(k, ns[0])}) -> {t(m, ns[0])}",
        f"  %h2 = ml.matmul %h1, %w2 : ({t(m, ns[0])}, {t(ns[0], ns[1])}) -> {t(m, ns[1])}",
        f"  %h3 = ml.matmul %h2, %w3 : ({t(m, ns[1])}, {t(ns[1], ns[2])}) -> {t(m, ns[2])}",
        f"  %xt = ml.transpose %x {{perm = array<i64: 1, 0>}} : ({t(m, k)}) -> {t(k, m)}",
        f"  %g = ml.matmul %xt, %w4 : ({t(k, m)}, {t(m, 11)}) -> {t(k, 11)}",
        f"  func.return %h3, %g : {t(m, ns[2])}, {t(k, 11)}",
        "}",
    ]
    return "\n".join(lines)


def _conv_chain(batch: int, element: str) -> str:
    """Two convolutions (3x3 stride 2 padded, then 1x1) and a ReLU between them."""
    x, w1 = f"tensor<{batch}x3x17x15x{element}>", f"tensor<10x3x3x3x{element}>"
    h, w2 = f"tensor<{batch}x10x9x8x{element}>", f"tensor<21x10x1x1x{element}>"
    y = f"tensor<{batch}x21x9x8x{element}>"
    return f"""
func.func @main(%x: {x}, %w1: {w1}, %w2: {w2}) -> {y} {{
  %h = ml.conv2d %x, %w1 {{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}}
      : ({x}, {w1}) -> {h}
  %r = ml.relu %h : ({h}) -> {h}
  %y = ml.conv2d %r, %w2 : ({h}, {w2}) -> {y}
  func.return %y : {y}
}}
"""


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """Cross-correlation in float64 (NCHW, OIHW)."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _, _, kh, kw = w.shape
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for p in range(kh):
        for q in range(kw):
            window = xp[:, :, p : p + stride * oh : stride, q : q + stride * ow : stride]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, p, q].astype(np.float64))
    return out


def _kernels(text: str) -> tuple[set[str], int]:
    """The micro-kernel functions the tiled IR defines, and its calls of them."""
    module = mlc.compile(text, emit="loops")
    assert isinstance(module, ModuleOp)
    ir = str(module)
    defined = set(re.findall(r"func\.func private @(mlc_micro_kernel\w+)", ir))
    return defined, len(re.findall(r"func\.call @mlc_micro_kernel", ir))


TOLERANCE = {"f32": 1e-4, "f64": 1e-10}
DTYPES = {"f32": np.float32, "f64": np.float64}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    executable_cache.clear()


@pytest.mark.parametrize("element", ["f32", "f64"])
def test_matmuls_of_odd_sizes_share_a_kernel_and_match_numpy(element: str):
    text = _matmul_chain(element)
    defined, calls = _kernels(text)
    assert defined and all(element in name for name in defined)
    assert calls >= 4  # each of the four matmuls calls one
    rng = np.random.default_rng(0)
    (m, k, _), ns = CHAIN[0], [n for _, _, n in CHAIN]
    shapes = [(m, k), (k, ns[0]), (ns[0], ns[1]), (ns[1], ns[2]), (m, 11)]
    x, w1, w2, w3, w4 = (rng.standard_normal(s).astype(DTYPES[element]) for s in shapes)
    got, got_t = mlc.compile(text)(x, w1, w2, w3, w4)
    wide = [a.astype(np.float64) for a in (x, w1, w2, w3, w4)]
    want = wide[0] @ wide[1] @ wide[2] @ wide[3]
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=TOLERANCE[element], atol=TOLERANCE[element] * scale)
    np.testing.assert_allclose(got_t, wide[0].T @ wide[4], rtol=TOLERANCE[element], atol=1e-4)


@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("batch", [1, 8])
def test_convolutions_share_a_kernel_and_match_numpy(batch: int, element: str):
    text = _conv_chain(batch, element)
    defined, calls = _kernels(text)
    assert defined and calls >= 2
    rng = np.random.default_rng(batch)
    dtype = DTYPES[element]
    x = rng.standard_normal((batch, 3, 17, 15)).astype(dtype)
    w1 = rng.standard_normal((10, 3, 3, 3)).astype(dtype)
    w2 = rng.standard_normal((21, 10, 1, 1)).astype(dtype)
    got = mlc.compile(text)(x, w1, w2)
    want = _conv(np.maximum(_conv(x, w1, 2, 1), 0), w2, 1, 0)
    np.testing.assert_allclose(got, want, rtol=TOLERANCE[element], atol=TOLERANCE[element] * 10)


@pytest.mark.parametrize("element", ["f32", "f64"])
def test_kernel_prefetching_its_c_tile_matches_numpy(element: str):
    """The micro-kernel prefetches its C tile (`prefetch_tile`) before the K loop: rows of
    1000 columns start off a cache line, the last row tile is partial (301 rows), K is
    several blocks deep, and C is both stored (first K block) and added to; the prefetch
    of columns past N (the last panel) or rows past M must not change a result."""
    m, k, n = 301, 700, 1000
    t = lambda r, c: f"tensor<{r}x{c}x{element}>"  # noqa: E731
    bias_type = f"tensor<{n}x{element}>"
    text = f"""func.func @main(%a: {t(m, k)}, %b: {t(k, n)}, %bias: {bias_type}) -> {t(m, n)} {{
  %c = ml.matmul %a, %b : ({t(m, k)}, {t(k, n)}) -> {t(m, n)}
  %d = ml.add %c, %bias : ({t(m, n)}, {bias_type}) -> {t(m, n)}
  %r = ml.relu %d : ({t(m, n)}) -> {t(m, n)}
  func.return %r : {t(m, n)}
}}"""
    exe = mlc.compile(text)
    assert "@llvm.prefetch" in exe.llvm_ir
    rng = np.random.default_rng(3)
    dtype = DTYPES[element]
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    got = exe(a, b, bias)
    np.testing.assert_allclose(got, want, rtol=TOLERANCE[element], atol=TOLERANCE[element] * 30)


@pytest.mark.parametrize("transposed", [False, True])
def test_b_packing_is_shared_among_threads(monkeypatch: pytest.MonkeyPatch, transposed: bool):
    """B's packing, a loop of calls of the shared packing function, is weighed by what the
    function does: at two threads a 512 x 512 B (1 MiB) is packed by the thread pool, in
    a chunk function of its own, not by four calls on the calling thread; the product,
    with B given as is and transposed, is numpy's."""
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    m = k = n = 512
    t = lambda r, c: f"tensor<{r}x{c}xf32>"  # noqa: E731
    b_type = t(n, k) if transposed else t(k, n)
    b = "%bt" if transposed else "%b"
    flip = f"  %bt = ml.transpose %b {{perm = array<i64: 1, 0>}} : ({b_type}) -> {t(k, n)}\n"
    text = (
        f"func.func @main(%a: {t(m, k)}, %b: {b_type}) -> {t(m, n)} {{\n"
        + (flip if transposed else "")
        + f"  %c = ml.matmul %a, {b} : ({t(m, k)}, {t(k, n)}) -> {t(m, n)}\n"
        f"  func.return %c : {t(m, n)}\n}}"
    )
    exe = mlc.compile(text)
    chunks = re.split(r"\ndefine ", exe.llvm_ir)
    packing = [c for c in chunks if c.startswith("internal void @main_parallel")]
    assert any(re.search(r"call fastcc void @mlc_pack_b_f32", c) for c in packing)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b_value = rng.standard_normal((n, k) if transposed else (k, n), dtype=np.float32)
    want = a.astype(np.float64) @ (b_value.T if transposed else b_value).astype(np.float64)
    np.testing.assert_allclose(exe(a, b_value), want, rtol=0, atol=2e-4 * np.sqrt(k))

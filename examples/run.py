"""
The main job of `make run`: compile each example program for the CPU and run it.

For each `examples/*.mlir`, `mlc.compile` takes the program through the whole
pipeline (`mlc.pipeline`: graph passes, linalg, buffers and loops, LLVM) to native
code; the script runs it on random inputs next to a numpy version of the same
program, checks that they agree, and prints both times (medians of alternating runs)
and their ratio. Speed is not the point yet (fusion and tiling come later); the
point is that every program compiles, runs and gives numpy's answer.
"""

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import mlc
from mlc import pipeline

HERE = Path(__file__).parent
rng = np.random.default_rng(0)


def randn(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + eps) * g + b


def mlp(x, w1, b1, w2, b2):
    return softmax(np.maximum(x @ w1 + b1, 0) @ w2 + b2)


def block(x, g1, be1, wq, wk, wv, g2, be2, w1, w2):
    n1 = layer_norm(x, g1, be1)
    q, k, v = n1 @ wq, n1 @ wk, n1 @ wv
    h = x + softmax((q @ k.T) * np.float32(0.0883883461)) @ v
    u = layer_norm(h, g2, be2) @ w1
    gelu = 0.5 * u * (1 + np.tanh(np.float32(np.sqrt(2 / np.pi)) * (u + 0.044715 * u**3)))
    return h + gelu @ w2


def conv2d(x, w, stride=1, pad=1):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    _n, _c, h, wd = x.shape
    _o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride][:, :, :oh, :ow]
    return np.einsum("nchwij,ocij->nohw", windows, w, optimize=True)


def convnet(x, w1, b1, s, t, m, v, w2, fc):
    c = lambda a: a.reshape(1, -1, 1, 1)  # noqa: E731
    y = conv2d(x, w1) + c(b1)
    y = np.maximum((y - c(m)) / np.sqrt(c(v) + 1e-5) * c(s) + c(t), 0)
    n, ch, h, w = y.shape
    y = y.reshape(n, ch, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    y = np.maximum(conv2d(y, w2, stride=2), 0)
    return y.mean(axis=(2, 3)) @ fc


def pagerank(G, p, e, u):
    for _ in range(20):
        p = 0.85 * (G @ p) + (1 - 0.85) * (e @ (u @ p))
    return p


def pagerank_inputs():
    G = rng.random((1000, 1000)).astype(np.float32)
    G /= G.sum(axis=0, keepdims=True)
    return [
        G,
        np.full((1000, 1), 1e-3, np.float32),
        np.ones((1000, 1), np.float32),
        np.full((1, 1000), 1e-3, np.float32),
    ]


EXAMPLES: dict[str, tuple[Callable[..., np.ndarray], Callable[[], list[np.ndarray]]]] = {
    "mlp.mlir": (
        mlp,
        lambda: [
            randn(64, 784),
            randn(784, 128, scale=0.05),
            randn(128),
            randn(128, 10, scale=0.1),
            randn(10),
        ],
    ),
    "transformer_block.mlir": (
        block,
        lambda: [
            randn(64, 128),
            randn(128),
            randn(128),
            *(randn(128, 128, scale=0.1) for _ in range(3)),
            randn(128),
            randn(128),
            randn(128, 512, scale=0.1),
            randn(512, 128, scale=0.05),
        ],
    ),
    "convnet.mlir": (
        convnet,
        lambda: [
            randn(8, 3, 32, 32),
            randn(16, 3, 3, 3, scale=0.3),
            randn(16),
            randn(16),
            randn(16),
            randn(16),
            np.abs(randn(16)) + 0.5,
            randn(32, 16, 3, 3, scale=0.1),
            randn(32, 10),
        ],
    ),
    "pagerank.mlir": (pagerank, pagerank_inputs),
}


def median_times(a: Callable[[], object], b: Callable[[], object], rounds: int = 7):
    """Medians of `a` and `b` timed alternately, so both see the same machine noise."""
    ta, tb = [], []
    for _ in range(rounds):
        for fn, times in ((a, ta), (b, tb)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return float(np.median(ta)), float(np.median(tb))


def main() -> int:
    print("mlc: compile each example for the CPU, check it against numpy, time both")
    print("pipeline:", *pipeline.describe("cpu"), sep="\n  ")
    failed = False
    for name, (reference, make_inputs) in EXAMPLES.items():
        start = time.perf_counter()
        try:
            exe = mlc.compile(HERE / name)
        except mlc.CompileError as error:
            print(f"{name}: {error}", file=sys.stderr)
            failed = True
            continue
        compile_s = time.perf_counter() - start
        args = make_inputs()
        got, want = exe(*args), reference(*args)
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-4)
        failed |= not ok
        t_mlc, t_numpy = median_times(lambda: exe(*args), lambda: reference(*args))
        shapes = ", ".join("x".join(map(str, a.shape)) for a in args)
        print(f"\n== {name} ({shapes})")
        print(
            f"   compiled in {compile_s:.2f} s; result {got.shape} {got.dtype}, "
            f"checksum {float(got.sum()):.6g}, max |mlc - numpy| "
            f"{float(np.abs(got - want).max()):.2e}: {'ok' if ok else 'MISMATCH'}"
        )
        print(
            f"   mlc {t_mlc * 1e3:8.3f} ms   numpy {t_numpy * 1e3:8.3f} ms   "
            f"vs numpy {t_numpy / t_mlc:5.2f}x (above 1: mlc is faster)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

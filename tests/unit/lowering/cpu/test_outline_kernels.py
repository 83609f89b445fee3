"""
Kernels outlined before `linalg-tile` (`outline-kernels`): layers of one shape compile to
one kernel function, constant weights reach it as pre-packed panels, and the program
still computes what numpy does (dynamic rows, f32 and f64, fresh random inputs).
"""

import numpy as np
import pytest
from xdsl.dialects import func

import mlc
from mlc import resources
from mlc.lowering.cpu.linalg_tile import PANELS_ATTR
from mlc.lowering.support.kernel_outlining import KERNEL_ATTR

LAYERS = 3


def _mlp(width: int, dtype: str, weights: list[np.ndarray]) -> str:
    """`relu(x @ w_i)` LAYERS times and one narrower layer, the weights constants."""
    t = f"tensor<?x{width}x{dtype}>"
    lines = [f"func.func @main(%x0: {t}) -> tensor<?x7x{dtype}> {{"]
    for i, w in enumerate(weights):
        handle = resources.register(w, f"w{i}")
        wt = f"tensor<{w.shape[0]}x{w.shape[1]}x{dtype}>"
        out = f"tensor<?x{w.shape[1]}x{dtype}>"
        lines += [
            f"  %w{i} = arith.constant dense_resource<{handle}> : {wt}",
            f"  %m{i} = ml.matmul %x{i}, %w{i} : ({t}, {wt}) -> {out}",
            f"  %x{i + 1} = ml.relu %m{i} : ({out}) -> {out}",
        ]
    lines += [f"  func.return %x{len(weights)} : tensor<?x7x{dtype}>", "}"]
    return "\n".join(lines)


def _weights(width: int, dtype: type, rng: np.random.Generator) -> list[np.ndarray]:
    shapes = [(width, width)] * LAYERS + [(width, 7)]
    return [(rng.standard_normal(s) / np.sqrt(width)).astype(dtype) for s in shapes]


def _kernels(module) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes]


def test_identical_layers_are_one_kernel_with_panels_passed_in():
    weights = _weights(24, np.float32, np.random.default_rng())
    loops = mlc.compile(_mlp(24, "f32", weights), emit="loops")
    kernels = _kernels(loops)
    assert len(kernels) == 1  # the three 24 x 24 layers; the 24 x 7 one, alone, stays
    calls = [op for op in loops.walk() if isinstance(op, func.CallOp)]
    called = [c.callee.root_reference.data for c in calls]
    assert [called.count(k.sym_name.data) for k in kernels] == [LAYERS]
    for kernel in kernels:  # B's panels packed at compile time, passed in
        assert kernel.arg_attrs is not None
        assert any(PANELS_ATTR in attrs.data for attrs in kernel.arg_attrs.data)


@pytest.mark.parametrize(("rows", "width", "dtype"), [(5, 24, "f32"), (3, 17, "f64")])
def test_outlined_layers_match_numpy(rows: int, width: int, dtype: str):
    numpy_type = np.float32 if dtype == "f32" else np.float64
    rng = np.random.default_rng()
    weights = _weights(width, numpy_type, rng)
    exe = mlc.compile(_mlp(width, dtype, weights))
    for batch in (rows, rows + 2):  # dynamic rows: one compile, two sizes
        x = rng.standard_normal((batch, width)).astype(numpy_type)
        want = x
        for w in weights:
            want = np.maximum(want @ w, 0)
        tolerance = 1e-4 if dtype == "f32" else 1e-10
        np.testing.assert_allclose(exe(x), want, rtol=tolerance, atol=tolerance)


def _convnet(weights: list[np.ndarray]) -> str:
    """Two 3x3 convolutions of one shape with biases, then a strided one, on NCHW."""
    t = "tensor<?x8x9x9xf32>"
    lines = [f"func.func @main(%x0: {t}) -> tensor<?x8x5x5xf32> {{"]
    for i, (w, b) in enumerate(zip(weights[::2], weights[1::2])):
        strided = i == 2
        out = "tensor<?x8x5x5xf32>" if strided else t
        attrs = "{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}"
        attrs = attrs if strided else "{pads = array<i64: 1, 1, 1, 1>}"
        lines += [
            f"  %w{i} = arith.constant dense_resource<{resources.register(w, f'c{i}')}>"
            " : tensor<8x8x3x3xf32>",
            f"  %b{i} = arith.constant dense_resource<{resources.register(b, f'b{i}')}>"
            " : tensor<8xf32>",
            f"  %c{i} = ml.conv2d %x{i}, %w{i}, %b{i} {attrs} : ({t}, tensor<8x8x3x3xf32>,"
            f" tensor<8xf32>) -> {out}",
            f"  %x{i + 1} = ml.relu %c{i} : ({out}) -> {out}",
        ]
    lines += ["  func.return %x3 : tensor<?x8x5x5xf32>", "}"]
    return "\n".join(lines)


def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    size = (padded.shape[2] - 3) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], size, size), np.float64)
    for kh in range(3):
        for kw in range(3):
            window = padded[
                :, :, kh : kh + stride * size : stride, kw : kw + stride * size : stride
            ]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, kh, kw])
    return out + b[None, :, None, None]


def test_outlined_convolutions_match_numpy():
    """Two convolutions of one shape and a strided one: two kernels (the lit tests
    count them), the same results as numpy."""
    rng = np.random.default_rng()
    weights = []
    for _ in range(3):
        weights += [rng.standard_normal((8, 8, 3, 3)).astype(np.float32) / 8]
        weights += [rng.standard_normal(8).astype(np.float32)]
    source = _convnet(weights)
    x = rng.standard_normal((2, 8, 9, 9)).astype(np.float32)
    want = x
    for i, (w, b) in enumerate(zip(weights[::2], weights[1::2])):
        want = np.maximum(_conv(want, w, b, 2 if i == 2 else 1), 0)
    np.testing.assert_allclose(mlc.compile(source)(x), want, rtol=1e-4, atol=1e-4)

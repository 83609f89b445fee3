"""
The matmul kernel's two ways of reading A against numpy, on a token count known only at
run time (a mixture-of-experts expert's rows): A read along its rows in place (`x @ w`,
with a SiLU epilogue as an expert's `up` has, B a constant packed at compile time or an
argument packed per call), and A read across its rows, packed per task (ONNX Gemm's
transA). Row counts 0, 1, odd and several tasks; N ends inside a column panel.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc

K, N = 131, 300
ROWS = [0, 1, 7, 67, 256]


def _model(
    nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], weights
) -> onnx.ModelProto:
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", N])
    graph = helper.make_graph(nodes, "a_layouts", inputs, [out], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _x(shape: list[object]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


@pytest.fixture(scope="module")
def weight() -> np.ndarray:
    return (np.random.default_rng(0).standard_normal((K, N)) / np.sqrt(K)).astype(np.float32)


def test_rows_read_in_place_with_constant_b_and_silu(weight: np.ndarray):
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["u"]),
        helper.make_node("Sigmoid", ["u"], ["s"]),
        helper.make_node("Mul", ["u", "s"], ["y"]),
    ]
    exe = mlc.compile(_model(nodes, [_x(["m", K])], [numpy_helper.from_array(weight, "w")]))
    rng = np.random.default_rng(1)
    for m in ROWS:
        x = rng.standard_normal((m, K)).astype(np.float32)
        want = _silu(x.astype(np.float64) @ weight)
        np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-4, err_msg=f"M={m}")


def test_rows_read_in_place_with_b_an_argument():
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [K, N])
    exe = mlc.compile(
        _model([helper.make_node("MatMul", ["x", "w"], ["y"])], [_x(["m", K]), w], [])
    )
    rng = np.random.default_rng(2)
    for m in ROWS:
        x = rng.standard_normal((m, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
        want = x.astype(np.float64) @ b
        np.testing.assert_allclose(
            exe(x, b), want, rtol=0, atol=2e-4 * np.sqrt(K), err_msg=f"M={m}"
        )


def test_rows_read_across_packed(weight: np.ndarray):
    gemm = helper.make_node("Gemm", ["x", "w"], ["y"], transA=1)
    exe = mlc.compile(_model([gemm], [_x([K, "m"])], [numpy_helper.from_array(weight, "w")]))
    rng = np.random.default_rng(3)
    for m in ROWS:
        x = rng.standard_normal((K, m)).astype(np.float32)
        want = x.T.astype(np.float64) @ weight
        np.testing.assert_allclose(exe(x), want, rtol=0, atol=2e-4 * np.sqrt(K), err_msg=f"M={m}")


def test_run_time_column_groups_on_two_threads(weight: np.ndarray, monkeypatch):
    """Built for two threads, a dynamic M splits its panels between them where the row
    tiles split unevenly (67 and 242 rows: 5 + 4 and 16 + 15 row tiles) and by rows
    where they split evenly (256) or the work is one task's (0, 1, 7)."""
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["u"]),
        helper.make_node("Sigmoid", ["u"], ["s"]),
        helper.make_node("Mul", ["u", "s"], ["y"]),
    ]
    exe = mlc.compile(_model(nodes, [_x(["m", K])], [numpy_helper.from_array(weight, "w")]))
    rng = np.random.default_rng(4)
    for m in [*ROWS, 242, 30]:
        x = rng.standard_normal((m, K)).astype(np.float32)
        want = _silu(x.astype(np.float64) @ weight)
        np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-4, err_msg=f"M={m}")

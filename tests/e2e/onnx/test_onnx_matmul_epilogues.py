"""
BERT's feed-forward block, whose second matmul takes as its epilogue the bias, the
residual and the normalisation of that residual, recomputed from two operands of
run-time shape (their dims may be 1 when it runs, so they are read by computed indices):
against onnxruntime at batch 1 and 8, odd sizes, and with a residual operand that
really broadcasts at run time.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def feed_forward(n: int, hidden: int) -> onnx.ModelProto:
    """h = LayerNorm(r + s); y = LayerNorm(relu(h @ w1) @ w2 + b + h)."""
    rng = np.random.default_rng(n * hidden)
    weights = {
        "w1": rng.normal(0, 0.2, (n, hidden)).astype(np.float32),
        "w2": rng.normal(0, 0.2, (hidden, n)).astype(np.float32),
        "b": rng.normal(0, 1, (n,)).astype(np.float32),
        "g": rng.normal(1, 0.1, (n,)).astype(np.float32),
        "beta": rng.normal(0, 0.1, (n,)).astype(np.float32),
    }
    nodes = [
        helper.make_node("Add", ["r", "s"], ["rs"]),
        helper.make_node("LayerNormalization", ["rs", "g", "beta"], ["h"], axis=-1),
        helper.make_node("MatMul", ["h", "w1"], ["up"]),
        helper.make_node("Relu", ["up"], ["act"]),
        helper.make_node("MatMul", ["act", "w2"], ["down"]),
        helper.make_node("Add", ["down", "b"], ["dense"]),
        helper.make_node("Add", ["dense", "h"], ["sum"]),
        helper.make_node("LayerNormalization", ["sum", "g", "beta"], ["y"], axis=-1),
    ]
    inputs = [
        helper.make_tensor_value_info("r", TensorProto.FLOAT, ["rb", "rs", n]),
        helper.make_tensor_value_info("s", TensorProto.FLOAT, ["sb", "ss", n]),
    ]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", n])
    inits = [numpy_helper.from_array(v, name) for name, v in weights.items()]
    graph = helper.make_graph(nodes, "feed_forward", inputs, [output], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize(("n", "hidden"), [(32, 64), (19, 37)])
@pytest.mark.parametrize("broadcast", [False, True])
def test_feed_forward(target: str, batch: int, n: int, hidden: int, broadcast: bool):
    rng = np.random.default_rng(batch + n)
    r = rng.normal(0, 1, (batch, 7, n)).astype(np.float32)
    s = rng.normal(0, 1, (1, 7, n) if broadcast else (batch, 7, n)).astype(np.float32)
    model = feed_forward(n, hidden)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"r": r, "s": s})
    got = compile_for(model, target)(r, s)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

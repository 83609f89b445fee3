"""loop_fusion: an LSTM time step on the GPU is two launches (the recurrent matmul, then
the gates, cell and hidden state with its copy into the output sequence in one)."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func, gpu, scf

import mlc


def lstm_model(hidden: int = 16, features: int = 8, sequence: int = 5, batch: int = 3):
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
        for name, shape in [
            ("w", (1, 4 * hidden, features)),
            ("r", (1, 4 * hidden, hidden)),
            ("b", (1, 8 * hidden)),
        ]
    ]
    node = helper.make_node("LSTM", ["x", "w", "r", "b"], ["y"], hidden_size=hidden)
    graph = helper.make_graph(
        [node],
        "lstm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [sequence, batch, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [sequence, 1, batch, hidden])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_an_lstm_step_is_two_launches():
    module = mlc.compile(lstm_model(), target="gpu", emit="gpu")
    host = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    steps = [op for f in host for op in f.walk() if isinstance(op, scf.ForOp)]
    assert steps, "the time loop stays on the host"
    for step in steps:
        launches = [op for op in step.walk() if isinstance(op, gpu.LaunchFuncOp)]
        assert len(launches) == 2

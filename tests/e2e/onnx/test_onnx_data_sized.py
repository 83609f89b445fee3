"""NonZero: folded at import when its input is known, a located error when it is not."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc


def non_zero_model(x: np.ndarray, known: bool):
    nodes = [
        helper.make_node("NonZero", ["x"], ["n"]),
        helper.make_node("Add", ["n", "one"], ["y"]),
    ]
    inputs = [] if known else [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    initializers = [numpy_helper.from_array(np.array(1, np.int64), "one")]
    if known:
        initializers.append(numpy_helper.from_array(x, "x"))
    y = helper.make_tensor_value_info("y", TensorProto.INT64, ["a", "b"])
    graph = helper.make_graph(nodes, "nz", inputs, [y], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_non_zero_of_a_known_input_folds():
    x = np.random.default_rng().standard_normal((3, 4)).astype(np.float32)
    x[x < 0] = 0
    got = mlc.compile(non_zero_model(x, known=True))()
    np.testing.assert_array_equal(got, np.stack(np.nonzero(x)) + 1)


def test_non_zero_of_a_run_time_input_is_a_located_error():
    model = non_zero_model(np.zeros((3, 4), np.float32), known=False)
    with pytest.raises(mlc.CompileError) as error:
        mlc.compile(model)
    message = str(error.value)
    assert "\n" not in message.strip()
    assert "node 'NonZero_0'" in message
    assert "must be known at import time" in message
    assert "output size depends on its values" in message

"""
MaxUnpool against onnxruntime: after a MaxPool with Indices (static and dynamic dims,
with and without the output_shape input), and an index out of range, on the CPU and
`cuda`.
"""

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def unpool_model(shape: tuple[int, ...], attrs: dict[str, Any], dynamic: bool, with_shape: bool):
    """MaxPool with Indices, then MaxUnpool of both (to the input's shape, if `with_shape`)."""
    pool = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    shape_input = [onnx.numpy_helper.from_array(np.array(shape, np.int64), "s")]
    unpool = helper.make_node(
        "MaxUnpool", ["y", "i", "s"] if with_shape else ["y", "i"], ["z"], **attrs
    )
    dims: list[Any] = [f"d{i}" for i in range(len(shape))] if dynamic else list(shape)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [f"z{i}" for i in range(len(shape))])
    graph = helper.make_graph([pool, unpool], "unpool", [x], [z], shape_input if with_shape else [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.mark.parametrize(
    ("shape", "attrs", "dynamic", "with_output_shape"),
    [
        ((2, 3, 6, 4), dict(kernel_shape=[2, 2], strides=[2, 2]), True, False),
        ((2, 3, 7, 5), dict(kernel_shape=[2, 2], strides=[2, 2]), False, True),
        ((1, 2, 7), dict(kernel_shape=[3], strides=[2], pads=[1, 1]), False, False),
    ],
    ids=["dynamic", "output-shape", "1d-pads"],
)
def test_max_unpool(shape, attrs, dynamic, with_output_shape, target):
    model = unpool_model(shape, attrs, dynamic, with_output_shape)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for size in [shape, (1, *shape[1:])] if dynamic else [shape]:
        x = rng.standard_normal(size).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        got = exe(x)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_max_unpool_index_out_of_range(target):
    node = helper.make_node("MaxUnpool", ["x", "i"], ["z"], kernel_shape=[2], strides=[2])
    graph = helper.make_graph(
        [node],
        "unpool",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1, 3]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 1, 6])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)
    exe = compile_for(model, target)
    x = np.ones((1, 1, 3), np.float32)
    np.testing.assert_array_equal(exe(x, np.array([[[5, 0, 2]]], np.int64)), [[[1, 0, 1, 0, 0, 1]]])
    with pytest.raises(mlc.RuntimeCheckError, match="MaxUnpool"):
        exe(x, np.array([[[1, 6, 2]]], np.int64))

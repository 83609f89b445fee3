"""
The checker and shape inference on a copy without the large weights
(`mlc.frontends.onnx.weightless`): the model `load` returns is the one inference of the
whole model gives, byte for byte, and a bad weight is still reported.
"""

import numpy as np
import onnx
import onnx.shape_inference
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc.frontends.onnx.model import OnnxImportError, load
from mlc.frontends.onnx.weightless import LARGE, is_weight, without_weights


def conv_reshape_matmul(ir_version: int = 8, weights_as_inputs: bool = False) -> onnx.ModelProto:
    """A convolution (a large weight), a Reshape by a shape initializer to (C, 25), a
    MatMul (a large weight), an Add of a small bias: inference needs the shape's values."""
    rng = np.random.default_rng()
    channels = int(rng.integers(11, 17))  # C x C x 3 x 3 >= LARGE elements
    conv_w = rng.standard_normal((channels, channels, 3, 3)).astype(np.float32)
    fc_w = rng.standard_normal((25, 64)).astype(np.float32)
    inits = [
        numpy_helper.from_array(conv_w, "conv_w"),
        numpy_helper.from_array(np.array([channels, -1], np.int64), "shape"),
        numpy_helper.from_array(fc_w, "fc_w"),
        numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "bias"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv_w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["c", "shape"], ["r"]),
        helper.make_node("MatMul", ["r", "fc_w"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 5, 5])]
    if weights_as_inputs:
        inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    output = helper.make_tensor_value_info("y", TensorProto.FLOAT, [channels, 64])
    graph = helper.make_graph(nodes, "g", inputs, [output], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = ir_version
    return proto


def inferred_whole(proto: onnx.ModelProto) -> bytes:
    onnx.checker.check_model(proto)
    return onnx.shape_inference.infer_shapes(
        proto, strict_mode=True, data_prop=True
    ).SerializeToString()


def test_only_large_floating_point_initializers_are_weights():
    assert is_weight(numpy_helper.from_array(np.zeros(LARGE, np.float32)))
    assert is_weight(numpy_helper.from_array(np.zeros((2, LARGE), np.float16)))
    assert not is_weight(numpy_helper.from_array(np.zeros(LARGE - 1, np.float32)))
    assert not is_weight(numpy_helper.from_array(np.zeros(LARGE, np.int64)))


@pytest.mark.parametrize("weights_as_inputs", [False, True])
def test_load_gives_what_inference_of_the_whole_model_gives(weights_as_inputs: bool):
    proto = conv_reshape_matmul(weights_as_inputs=weights_as_inputs)
    before = proto.SerializeToString()
    light = without_weights(proto)
    kept = {"conv_w", "shape", "fc_w", "bias"} if weights_as_inputs else {"shape", "bias"}
    assert {t.name for t in light.graph.initializer} == kept  # inputs keep their defaults
    assert proto.SerializeToString() == before  # the caller's model is not touched
    loaded = load(proto, lambda node, opset: True).proto
    assert loaded.SerializeToString() == inferred_whole(proto)
    assert proto.SerializeToString() == before


def test_old_ir_version_keeps_initializers_that_are_not_inputs():
    proto = conv_reshape_matmul(ir_version=3, weights_as_inputs=False)
    assert without_weights(proto) is proto  # the checker's complaint is kept


def test_model_without_weights_is_not_copied():
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert without_weights(proto) is proto


def test_a_bad_weight_is_still_an_import_error():
    proto = conv_reshape_matmul()
    weight = proto.graph.initializer[0]
    weight.float_data.extend([1.0])  # raw data and float data: two value fields
    with pytest.raises(OnnxImportError) as info:
        mlc.import_onnx(proto)
    assert str(info.value) == (  # the checker's words, as when it saw the whole model
        "g: error: invalid ONNX model: TensorProto (tensor name: conv_w) should contain "
        "one and only one value field."
    )

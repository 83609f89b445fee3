"""
Convolutions whose bias is all zeros (`canonicalize` drops a +0.0 one, keeps a -0.0 one:
`mlc.lowering.graph.patterns.ml.DropZeroBias`) against onnxruntime on random inputs:
1x1, depthwise (strides 1 and 2) and dense 3x3 with pads, with MobileNet's clip, at
batch 1, 3 and 8 through a dynamic batch dim.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc

ort = pytest.importorskip("onnxruntime")

CASES = {
    # in channels, out channels, groups, kernel, stride, pads, size
    "pointwise": (8, 48, 1, 1, 1, 0, 16),
    "depthwise-stride1": (48, 48, 48, 3, 1, 1, 9),
    "depthwise-stride2": (48, 48, 48, 3, 2, 1, 11),
    "dense-3x3": (5, 7, 1, 3, 1, 2, 7),
}


def model(cin, cout, groups, kernel, stride, pad, size, zero):
    rng = np.random.default_rng(7)
    weight = rng.standard_normal((cout, cin // groups, kernel, kernel)).astype(np.float32)
    inits = [
        numpy_helper.from_array(weight, "w"),
        numpy_helper.from_array(np.full(cout, zero, np.float32), "b"),
        numpy_helper.from_array(np.array(0, np.float32), "lo"),
        numpy_helper.from_array(np.array(6, np.float32), "hi"),
    ]
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w", "b"],
            ["c"],
            group=groups,
            kernel_shape=[kernel, kernel],
            strides=[stride, stride],
            pads=[pad] * 4,
        ),
        helper.make_node("Clip", ["c", "lo", "hi"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", cin, size, size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", cout, "h", "w"])
    graph = helper.make_graph(nodes, "conv", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("zero", [0.0, -0.0], ids=["plus-zero", "minus-zero"])
@pytest.mark.parametrize("case", CASES)
def test_zero_bias_matches_onnxruntime(case, zero):
    onnx_model = model(*CASES[case], zero)
    exe = mlc.compile(onnx_model)
    session = ort.InferenceSession(onnx_model.SerializeToString())
    cin, size = CASES[case][0], CASES[case][-1]
    rng = np.random.default_rng()
    for batch in (1, 3, 8):
        x = rng.standard_normal((batch, cin, size, size)).astype(np.float32)
        (expected,) = session.run(None, {"x": x})
        np.testing.assert_allclose(exe(x), expected, rtol=1e-5, atol=1e-5)


def test_plus_zero_bias_leaves_no_broadcast():
    """The +0.0 bias is gone before linalg: no generic reads a 48-element vector."""
    lowered = str(mlc.compile(model(*CASES["pointwise"], 0.0), emit="linalg"))
    assert "tensor<48xf32>" not in lowered
    kept = str(mlc.compile(model(*CASES["pointwise"], -0.0), emit="linalg"))
    assert "tensor<48xf32>" in kept

"""
Convolutions with one output pixel per image, or a few each reading most of it
(`convert_ml_to_linalg.conv_pixel`: a matmul over the batch) against onnxruntime on
random inputs: 1x1 images through 1x1 and 3x3 kernels, 2x2 images through a stride-2
3x3 kernel, a dilated kernel, a window that reads part of the image only (zero rows)
or too little of it (the implicit GEMM instead), 2x2 and 2x3 outputs at strides 1 and
2, odd channel counts, with and without bias, a Clip or Relu after, batch 1, 3 and 8,
a dynamic batch; on the CPU and `cuda`.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")

# (in channels, image, out channels, kernel, stride, pad, dilation, bias, activation)
CASES = [
    (80, (1, 1), 129, 1, 1, 0, 1, True, "Clip"),  # MobileNet's last 1x1 conv
    (64, (1, 1), 64, 3, 1, 1, 1, False, "Relu"),  # ResNet's layer4 conv2: the centre tap
    (32, (2, 2), 67, 3, 2, 1, 1, True, "Relu"),  # layer4 conv1: four taps of nine
    (7, (3, 3), 5, 3, 1, 0, 1, True, None),  # a valid conv: every tap
    (5, (3, 2), 6, 3, 2, 1, 1, False, None),  # non-square image, asymmetric reads
    (6, (2, 2), 3, 2, 1, 1, 2, True, None),  # dilated: taps 1 apart read pixels 1 apart
    (4, (3, 3), 9, 2, 3, 0, 1, True, None),  # a 2x2 window on 3x3: 4 of 9 read, not taken
    # more output pixels than one, each reading most of the image
    (32, (2, 2), 33, 3, 1, 1, 1, True, "Relu"),  # ResNet's layer3 conv2: a 2x2 output
    (7, (3, 3), 5, 3, 2, 1, 1, True, None),  # stride 2 to 2x2: 4, 6, 6 and 9 of 9
    (5, (2, 3), 6, 3, 1, 1, 1, False, "Clip"),  # 2x3, no bias
    (3, (4, 4), 4, 3, 1, 1, 1, True, None),  # a 4x4 output: 39% read, not taken
]


def model(c_in, image, c_out, kernel, stride, pad, dilation, bias, activation, batch):
    rng = np.random.default_rng(c_in * 31 + c_out)
    inits = [
        numpy_helper.from_array(
            rng.standard_normal((c_out, c_in, kernel, kernel)).astype(np.float32), "w"
        )
    ]
    inputs = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(c_out).astype(np.float32), "b"))
        inputs.append("b")
    attrs = dict(pads=[pad] * 4, strides=[stride] * 2, dilations=[dilation] * 2)
    nodes = [helper.make_node("Conv", inputs, ["c" if activation else "y"], **attrs)]
    if activation == "Clip":
        inits += [numpy_helper.from_array(np.float32(v), k) for k, v in (("lo", 0), ("hi", 6))]
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
    elif activation:
        nodes.append(helper.make_node(activation, ["c"], ["y"]))
    out = [(s + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1 for s in image]
    graph = helper.make_graph(
        nodes,
        "pixel",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, c_in, *image])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, c_out, *out])],
        inits,
    )
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    built.ir_version = 8
    return built


@pytest.mark.parametrize("batch", [1, 3, 8])
@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_pixel_conv_matches_onnxruntime(case, batch, target):
    onnx_model = model(*case, batch)
    exe = compile_for(onnx_model, target)
    session = ort.InferenceSession(
        onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    rng = np.random.default_rng()
    x = rng.standard_normal((batch, case[0], *case[1])).astype(np.float32)
    want = session.run(None, {"x": x})[0]
    np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", [CASES[2], CASES[7]], ids=["one-pixel", "2x2"])
def test_pixel_conv_dynamic_batch(case):
    onnx_model = model(*case, "batch")
    exe = compile_for(onnx_model, "cpu")
    session = ort.InferenceSession(
        onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    rng = np.random.default_rng()
    for batch in (1, 8, 5):
        x = rng.standard_normal((batch, case[0], 2, 2)).astype(np.float32)
        np.testing.assert_allclose(exe(x), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)

"""
ResNet-style blocks (Conv, BatchNormalization, Relu, a residual Add) through
`mlc.compile` for the CPU and `cuda`, against onnxruntime on fresh random inputs: odd
channel counts (register blocks of 4, 5 and 6 rows), 7x7 and 3x3 kernels, strides 1
and 2, padding, batch 1 and 3, depths below and above one K block. The epilogues (batch
norm, relu, the residual add) run on the convolution's tiles.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")

# (batch, in channels, height x width, out channels, kernel, stride, pad, residual)
BLOCKS = [
    (1, 3, (17, 19), 13, 7, 2, 3, False),  # a ResNet stem: 7x7, stride 2
    (3, 5, (11, 9), 7, 3, 1, 1, False),
    (1, 16, (9, 9), 16, 3, 1, 1, True),  # 16 rows: blocks of 4
    (3, 32, (8, 8), 32, 3, 1, 1, True),  # K = 288: two K blocks
    (1, 16, (16, 15), 32, 3, 2, 1, False),  # the stride-2 downsampling conv
    (1, 10, (12, 13), 10, 3, 1, 1, True),  # 10 rows: blocks of 5
]


def block(batch, c_in, size, c_out, kernel, stride, pad, residual):
    """conv -> batch norm -> relu, or with `residual`: conv -> batch norm -> + x -> relu."""
    rng = np.random.default_rng(c_in * 100 + c_out)
    weight = rng.uniform(-1, 1, (c_out, c_in, kernel, kernel)) / np.sqrt(c_in * kernel**2)
    params = {
        "w": weight,
        "scale": rng.uniform(0.5, 1.5, c_out),
        "shift": rng.uniform(-0.1, 0.1, c_out),
        "mean": rng.uniform(-0.1, 0.1, c_out),
        "var": rng.uniform(0.5, 1.5, c_out),
    }
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in params.items()]
    conv = helper.make_node(
        "Conv", ["x", "w"], ["c"], pads=[pad] * 4, strides=[stride] * 2, name="conv"
    )
    norm = helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"])
    nodes = [conv, norm]
    last = "n"
    if residual:
        nodes.append(helper.make_node("Add", ["n", "x"], ["s"]))
        last = "s"
    nodes.append(helper.make_node("Relu", [last], ["y"]))
    out = [(s + 2 * pad - kernel) // stride + 1 for s in size]
    graph = helper.make_graph(
        nodes,
        "block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, c_in, *size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, c_out, *out])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("case", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_conv_block_matches_onnxruntime(case, target):
    model = block(*case)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    batch, c_in, size = case[:3]
    rng = np.random.default_rng()
    for _ in range(2):
        x = rng.standard_normal((batch, c_in, *size)).astype(np.float32)
        want = session.run(None, {"x": x})[0]
        np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-5)

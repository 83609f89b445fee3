"""
Depthwise convolutions (one channel per group: `linalg-tile`'s depthwise kernel,
`mlc.lowering.cpu.depthwise_conv`) through `mlc.compile`, against onnxruntime on fresh
random inputs: strides 1 and 2, dilation, asymmetric pads, 1-D and 2-D, odd sizes, with
the relu or clip of MobileNet fused, a dynamic batch and spatial size, and float64
(against onnxruntime in float32 at float32's tolerance: it has no float64 Conv).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def depthwise(channels, spatial, kernel, stride, pads, dilation, bias, act, dtype, dynamic):
    """A Conv with group = channels, then `act` (None, "relu" or "clip" to [0, 6])."""
    rng = np.random.default_rng()
    weight = rng.standard_normal((channels, 1, *kernel)).astype(dtype)
    inits = [numpy_helper.from_array(weight, "w")]
    inputs = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(channels).astype(dtype), "b"))
        inputs.append("b")
    attrs = dict(kernel_shape=list(kernel), strides=[stride] * len(kernel), pads=list(pads))
    nodes = [
        helper.make_node(
            "Conv", inputs, ["c"], group=channels, **attrs, dilations=[dilation] * len(kernel)
        )
    ]
    out = "c"
    if act == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
        out = "y"
    elif act == "clip":
        bounds = [np.array(0, dtype), np.array(6, dtype)]
        inits += [numpy_helper.from_array(v, n) for v, n in zip(bounds, ("lo", "hi"))]
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
        out = "y"
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    dims = [f"s{d}" for d in range(len(spatial))] if dynamic else list(spatial)
    x = helper.make_tensor_value_info("x", element, ["n", channels, *dims])
    y = helper.make_tensor_value_info(out, element, ["n", channels, *(f"o{d}" for d in dims)])
    graph = helper.make_graph(nodes, "depthwise", [x], [y], inits)
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8
    )  # onnxruntime 1.30 reads IR 8 but not the IR 14 onnx writes


def as_float32(model):
    """The same model in float32, for onnxruntime's reference."""
    copy = type(model)()
    copy.CopyFrom(model)
    for t in copy.graph.initializer:
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name))
    for v in [*copy.graph.input, *copy.graph.output]:
        v.type.tensor_type.elem_type = TensorProto.FLOAT
    return copy


CASES = {
    # channels, spatial, kernel, stride, pads, dilation, bias, act, dtype, dynamic
    "mobilenet-stride2-clip": (
        13,
        (15, 17),
        (3, 3),
        2,
        (1, 1, 1, 1),
        1,
        True,
        "clip",
        np.float32,
        False,
    ),
    "stride1-relu-no-bias": (
        7,
        (11, 13),
        (3, 3),
        1,
        (1, 1, 1, 1),
        1,
        False,
        "relu",
        np.float32,
        False,
    ),
    "5x5-dilated-asymmetric": (
        5,
        (12, 15),
        (5, 3),
        1,
        (0, 2, 1, 0),
        2,
        True,
        None,
        np.float32,
        False,
    ),
    "conv1d-7": (4, (19,), (7,), 1, (3, 3), 1, True, "relu", np.float32, False),
    "dynamic-hw": (6, (9, 10), (3, 3), 2, (1, 1, 1, 1), 1, True, "clip", np.float32, True),
    "float64": (6, (8, 9), (3, 3), 2, (1, 1, 1, 1), 1, True, "clip", np.float64, False),
    # the padding read in place: a wide strided row (one pass per tap), a kernel wider
    # than the image (no interior), stride 3 with pads of 0 to 3, and conv3d
    "wide-stride2-rows": (5, (9, 41), (3, 3), 2, (1, 1, 1, 1), 1, True, "relu", np.float32, False),
    "kernel-over-image": (3, (2, 3), (5, 5), 1, (2, 2, 2, 2), 1, True, None, np.float32, False),
    "stride3-pads-0-3": (4, (10, 11), (3, 4), 3, (2, 0, 1, 3), 1, False, None, np.float32, False),
    "conv3d": (3, (4, 5, 6), (3, 3, 3), 1, (1, 0, 1, 1, 2, 1), 1, True, "relu", np.float64, False),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_depthwise_matches_onnxruntime(case):
    model = depthwise(*case)
    channels, spatial, dtype, dynamic = case[0], case[1], case[8], case[9]
    exe = mlc.compile(model)
    session = ort.InferenceSession(as_float32(model).SerializeToString())
    rng = np.random.default_rng()
    for batch, grow in ((1, 0), (3, 2 if dynamic else 0)):
        x = rng.standard_normal((batch, channels, *(s + grow for s in spatial))).astype(dtype)
        want = session.run(None, {"x": x.astype(np.float32)})[0]
        got = exe(x)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_mobilenet_depthwise_on_each_target(target):
    """The same generic on the GPU (its parallel loops, no kernel of its own there)."""
    case = CASES["mobilenet-stride2-clip"]
    model = depthwise(*case)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString())
    x = np.random.default_rng().standard_normal((2, case[0], *case[1])).astype(np.float32)
    np.testing.assert_allclose(exe(x), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)

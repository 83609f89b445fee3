"""
ResNet-style blocks (Conv, BatchNormalization, Relu, a residual Add) through
`mlc.compile`, against onnxruntime on fresh random inputs: odd channel counts (register
blocks of 4, 5 and 6 rows), 7x7 and 3x3 kernels, strides 1 and 2, padding, batch 1
and 3, depths below and above one K block; these on the CPU and `cuda`. The batch norm
folds into the weights (`fold-batch-norm`), so the epilogue on the convolution's tiles
adds its bias, then the residual and the relu; a batch norm that cannot fold (weights
given at run time, a convolution read twice) runs there too.

The folded cases, on the CPU, vary the bias, groups (depthwise), 1-D/2-D/3-D, epsilon,
the dynamic batch and the dtype (float64 against numpy: onnxruntime has no float64 Conv).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
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


# ---------------------------------------------------------------------------
# Batch norm folded into the weights (`fold-batch-norm`), and left unfolded
# ---------------------------------------------------------------------------


def conv_bn(
    spatial,
    c_in,
    c_out,
    kernel,
    *,
    groups=1,
    stride=1,
    bias=True,
    epsilon=1e-3,
    residual=False,
    size=9,
    weights_input=False,
    conv_output=False,
    dtype=np.float32,
):
    """
    conv (+ bias) -> batch norm with random statistics -> (+ x) -> relu, on inputs of a
    dynamic batch and `size` along each spatial dim (an odd kernel, padded to keep it);
    with `weights_input` the weights are a graph input, with `conv_output` the
    convolution's result is a second output (both keep the batch norm unfolded).
    """
    rng = np.random.default_rng()
    shape = (c_out, c_in // groups, *(kernel,) * spatial)
    params = {"w": rng.uniform(-1, 1, shape) / np.sqrt(np.prod(shape[1:]))}
    if bias:
        params["b"] = rng.uniform(-0.5, 0.5, c_out)
    params |= {
        "scale": rng.uniform(0.5, 1.5, c_out),
        "shift": rng.uniform(-0.5, 0.5, c_out),
        "mean": rng.uniform(-0.5, 0.5, c_out),
        "var": rng.uniform(0.25, 2.0, c_out),
    }
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    conv = helper.make_node(
        "Conv",
        ["x", "w", *(["b"] if bias else [])],
        ["c"],
        group=groups,
        strides=[stride] * spatial,
        pads=[kernel // 2] * 2 * spatial,
    )
    norm = helper.make_node(
        "BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"], epsilon=epsilon
    )
    nodes, last = [conv, norm], "n"
    if residual:
        nodes.append(helper.make_node("Add", ["n", "x"], ["s"]))
        last = "s"
    nodes.append(helper.make_node("Relu", [last], ["y"]))
    out = (size - 1) // stride + 1
    inputs = [helper.make_tensor_value_info("x", element, ["N", c_in, *(size,) * spatial])]
    if weights_input:
        inputs.append(helper.make_tensor_value_info("w", element, shape))
    outputs = [
        helper.make_tensor_value_info(n, element, ["N", c_out, *(out,) * spatial])
        for n in ["y", "c"][: 1 + conv_output]
    ]
    inits = [
        numpy_helper.from_array(v.astype(dtype), k)
        for k, v in params.items()
        if not (weights_input and k == "w")
    ]
    graph = helper.make_graph(nodes, "conv_bn", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, params


def batch_norms_left(model) -> int:
    return str(mlc.compile(model, emit="mlc")).count("ml.batch_norm")


FOLDED = {
    "bias-eps1e-3": dict(spatial=2, c_in=5, c_out=7, kernel=3, epsilon=1e-3),
    "no-bias-residual": dict(spatial=2, c_in=6, c_out=6, kernel=3, bias=False, residual=True),
    "depthwise-stride2": dict(spatial=2, c_in=6, c_out=6, kernel=3, groups=6, stride=2),
    "grouped": dict(spatial=2, c_in=4, c_out=6, kernel=3, groups=2, epsilon=1e-5),
    "conv1d": dict(spatial=1, c_in=3, c_out=5, kernel=3),
    "conv3d": dict(spatial=3, c_in=2, c_out=3, kernel=3),
}


@pytest.mark.parametrize("case", FOLDED.values(), ids=FOLDED.keys())
def test_folded_batch_norm_matches_onnxruntime(case):
    model, _ = conv_bn(**case)
    assert batch_norms_left(model) == 0
    exe = mlc.compile(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for batch in [1, 3]:
        x = rng.standard_normal((batch, case["c_in"], *(9,) * case["spatial"]))
        x = x.astype(np.float32)
        want = session.run(None, {"x": x})[0]
        np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-5)


UNFOLDED = {
    "weights-input": dict(weights_input=True),
    "conv-also-output": dict(conv_output=True),
}


@pytest.mark.parametrize("case", UNFOLDED.values(), ids=UNFOLDED.keys())
def test_unfolded_batch_norm_epilogue_matches_onnxruntime(case):
    """The batch norm stays and runs on the convolution's tiles, as its epilogue."""
    model, params = conv_bn(2, 5, 7, 3, size=8, **case)
    assert batch_norms_left(model) == 1
    exe = mlc.compile(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng().standard_normal((2, 5, 8, 8)).astype(np.float32)
    feeds = {"x": x} | ({"w": params["w"].astype(np.float32)} if "weights_input" in case else {})
    got = exe(*feeds.values())
    for mine, want in zip(got if isinstance(got, tuple) else (got,), session.run(None, feeds)):
        np.testing.assert_allclose(mine, want, rtol=1e-4, atol=1e-5)


def reference_conv_bn(x, params, epsilon, groups, stride):
    """conv2d (pads kernel // 2) + bias -> batch norm -> relu in float64 numpy."""
    from numpy.lib.stride_tricks import sliding_window_view

    w = params["w"]
    k = w.shape[-1]
    padded = np.pad(x, ((0, 0), (0, 0), (k // 2,) * 2, (k // 2,) * 2))
    windows = sliding_window_view(padded, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    n, c, h, wd = windows.shape[:4]
    windows = windows.reshape(n, groups, c // groups, h, wd, k, k)
    kernels = w.reshape(groups, w.shape[0] // groups, *w.shape[1:])
    y = np.einsum("ngchwij,gocij->ngohw", windows, kernels).reshape(n, -1, h, wd)
    channel = (1, -1, 1, 1)
    y = y + params.get("b", np.zeros(w.shape[0])).reshape(channel)
    y = (y - params["mean"].reshape(channel)) / np.sqrt(params["var"].reshape(channel) + epsilon)
    return np.maximum(y * params["scale"].reshape(channel) + params["shift"].reshape(channel), 0)


@pytest.mark.parametrize("groups", [1, 2])
def test_folded_batch_norm_in_float64_matches_numpy(groups):
    """onnxruntime has no float64 Conv on the CPU: the reference is numpy's, in float64."""
    model, params = conv_bn(
        2, 4, 6, 3, groups=groups, stride=2, epsilon=1e-4, size=9, dtype=np.float64
    )
    assert batch_norms_left(model) == 0
    exe = mlc.compile(model)
    x = np.random.default_rng().standard_normal((3, 4, 9, 9))
    want = reference_conv_bn(x, params, 1e-4, groups, stride=2)
    np.testing.assert_allclose(exe(x), want, rtol=1e-11, atol=1e-12)

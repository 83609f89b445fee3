"""DeformConv against onnxruntime: padding, strides, dilations, groups, offset groups,
with and without bias and mask, and `?` batch and image dims."""

import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def deform_model(x_dims, w_dims, o_dims, bias=True, mask=True, **attrs):
    f = TensorProto.FLOAT
    inputs = [
        helper.make_tensor_value_info("x", f, x_dims),
        helper.make_tensor_value_info("w", f, w_dims),
        helper.make_tensor_value_info("offset", f, o_dims),
    ]
    names = ["x", "w", "offset", "b" if bias else "", "mask" if mask else ""]
    if bias:
        inputs.append(helper.make_tensor_value_info("b", f, [w_dims[0]]))
    if mask:
        taps = w_dims[2] * w_dims[3] * attrs.get("offset_group", 1)
        inputs.append(helper.make_tensor_value_info("mask", f, [o_dims[0], taps, *o_dims[2:]]))
    while names[-1] == "":
        names.pop()
    node = helper.make_node("DeformConv", names, ["y"], kernel_shape=w_dims[2:], **attrs)
    y = helper.make_tensor_value_info("y", f, ["n", w_dims[0], "h", "w"])
    graph = helper.make_graph([node], "deform_conv", inputs, [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def feeds_for(rng, model, shapes):
    feeds = {}
    for value, shape in zip(model.graph.input, shapes, strict=True):
        scale = 2.0 if value.name == "offset" else 1.0
        data = rng.random(shape) if value.name == "mask" else scale * rng.standard_normal(shape)
        feeds[value.name] = data.astype(np.float32)
    return feeds


CASES = {
    "groups": (
        dict(group=2, offset_group=2, pads=[1, 1, 2, 0], strides=[2, 1], dilations=[1, 2]),
        [2, 4, 7, 5], [6, 2, 1, 2], [2, 8, 5, 4], False, True,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_deform_conv(case, target):
    attrs, x, w, o, bias, mask = CASES[case]
    model = deform_model(x, w, o, bias, mask, **attrs)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    shapes = [x, w, o] + ([[w[0]]] if bias else []) + ([[o[0], o[1] // 2, *o[2:]]] if mask else [])
    feeds = feeds_for(np.random.default_rng(), model, shapes)
    (want,) = session.run(None, feeds)
    got = exe(*feeds.values())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(
    os.environ.get("MLC_TEST_SLOW") != "1", reason="compiles for 15 s: MLC_TEST_SLOW=1 runs it"
)  # the dynamic DeformConv node tests of `make conformance` run it too
def test_deform_conv_of_dynamic_images(target):
    """A 1x2 kernel, padded rows, bias and no mask, over `?` batch and image dims."""
    model = deform_model(
        ["n", 3, "h", "w"], [2, 3, 1, 2], ["n", 4, "oh", "ow"], mask=False, pads=[1, 0, 1, 0]
    )
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for n, h, w in [(2, 4, 3), (1, 6, 7)]:
        shapes = [[n, 3, h, w], [2, 3, 1, 2], [n, 4, h + 2, w - 1], [2]]
        feeds = feeds_for(rng, model, shapes)
        (want,) = session.run(None, feeds)
        np.testing.assert_allclose(exe(*feeds.values()), want, rtol=1e-5, atol=1e-5)


def test_deform_conv_of_dynamic_channels_specialises_on_its_dims():
    """The channels split into groups and the kernel is unrolled: a variant per shape."""
    model = deform_model([1, "c", 5, 5], [2, 2, 1, 2], [1, 4, 5, 4], bias=False, mask=False)
    exe = mlc.compile(model)
    assert exe.dim_inputs == ["x"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = feeds_for(np.random.default_rng(), model, [[1, 2, 5, 5], [2, 2, 1, 2], [1, 4, 5, 4]])
    (want,) = session.run(None, feeds)
    np.testing.assert_allclose(exe(*feeds.values()), want, rtol=1e-5, atol=1e-5)

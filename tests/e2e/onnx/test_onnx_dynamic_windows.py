"""
ONNX ops whose pads or split points depend on dynamic dims (auto_pad with strides,
ceil_mode, Split into equal parts, ConvTranspose), compiled once with `?` dims (a grouped
ConvTranspose's weights: a variant per shape) and run
against onnxruntime on fresh random inputs of several odd sizes, on the CPU and `cuda`.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

from mlc.frontends.onnx import import_onnx
from tests.gpu.targets import compile_for, gpu_unavailable_reason

ort = pytest.importorskip("onnxruntime")


def model_of(node, inputs: dict[str, list], outputs: dict[str, int]):
    """A one-node model; input dims given as None are dynamic, outputs have only `?` dims."""
    infos = [
        helper.make_tensor_value_info(
            name,
            TensorProto.FLOAT,
            [d if d is not None else f"{name}{i}" for i, d in enumerate(dims)],
        )
        for name, dims in inputs.items()
    ]
    results = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, [f"{name}{i}" for i in range(rank)])
        for name, rank in outputs.items()
    ]
    graph = helper.make_graph([node], "g", infos, results)
    # IR version 10 (that of opset 22), not onnx's newest: onnxruntime may lag behind it
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


def check(model, shapes: list[tuple[tuple[int, ...], ...]], target: str):
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in model.graph.input]
    rng = np.random.default_rng()
    for shape in shapes:
        args = [rng.standard_normal(s).astype(np.float32) for s in shape]
        want = session.run(None, dict(zip(names, args, strict=True)))
        got = exe(*args)
        got = list(got) if isinstance(got, tuple) else [got]
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("op", "auto_pad"), [("MaxPool", "SAME_UPPER"), ("AveragePool", "SAME_LOWER")]
)  # SAME_UPPER and SAME_LOWER only swap the begin and end pads (`resolve_pads`), for any op
def test_pool_auto_pad_with_strides(op, auto_pad, target):
    attrs = dict(kernel_shape=[3, 2], strides=[2, 2], auto_pad=auto_pad)
    if op == "AveragePool":
        attrs["count_include_pad"] = 1
    model = model_of(
        helper.make_node(op, ["x"], ["y"], **attrs), {"x": [None, 2, None, None]}, {"y": 4}
    )
    check(model, [((1, 2, 7, 5),), ((2, 2, 8, 9),)], target)
    if op == "AveragePool":
        # Counted pads are padded into the input, so each window divides by the kernel
        # size: no run-time count of the pads is needed.
        ops = {o.name for o in import_onnx(model).walk()}
        assert "ml.div" not in ops and "ml.avg_pool2d" in ops


@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_pool_ceil_mode(count_include_pad, target):
    node = helper.make_node(
        "AveragePool",
        ["x"],
        ["y"],
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 0, 1, 1],
        ceil_mode=1,
        count_include_pad=count_include_pad,
    )
    model = model_of(node, {"x": [1, 1, None, None]}, {"y": 4})
    check(model, [((1, 1, 6, 7),), ((1, 1, 9, 4),)], target)


def test_max_pool_3d_dilated_ceil(target):
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], strides=[2, 1, 2], dilations=[2, 1, 1],
        ceil_mode=1,
    )  # fmt: skip
    model = model_of(node, {"x": [None, 2, None, None, None]}, {"y": 5})
    check(model, [((1, 2, 6, 5, 7),), ((2, 2, 5, 4, 4),)], target)


def test_conv_same_upper_with_strides(target):
    node = helper.make_node(
        "Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2], kernel_shape=[3, 3]
    )
    model = model_of(node, {"x": [None, 3, None, None], "w": [4, 3, 3, 3]}, {"y": 4})
    check(model, [((1, 3, 7, 8), (4, 3, 3, 3)), ((2, 3, 5, 5), (4, 3, 3, 3))], target)


def test_conv_transpose_dynamic(target):
    node = helper.make_node(
        "ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], pads=[1, 0, 0, 1],
        output_padding=[1, 0],
    )  # fmt: skip
    model = model_of(node, {"x": [None, 2, None, None], "w": [2, 3, 3, 2]}, {"y": 4})
    check(model, [((1, 2, 3, 4), (2, 3, 3, 2)), ((2, 2, 5, 2), (2, 3, 3, 2))], target)


def test_grouped_conv_transpose_of_dynamic_weights(target):
    """Grouped channels are split statically: the model specialises on the weights'
    dims (a variant per shape), the image dims staying `?` within each."""
    if target != "cpu" and (reason := gpu_unavailable_reason()) is not None:
        pytest.skip(reason)  # the variants compile when called: nothing to lower ahead
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=2, strides=[2, 1])
    model = model_of(node, {"x": [None, None, None, None], "w": [None, None, None, None]}, {"y": 4})
    check(model, [((1, 4, 3, 5), (4, 1, 2, 3)), ((2, 2, 4, 3), (2, 3, 3, 1))], target)


@pytest.mark.parametrize("parts", [2, 3])
def test_split_equal_parts_dynamic(parts, target):
    outputs = [f"y{i}" for i in range(parts)]
    node = helper.make_node("Split", ["x"], outputs, axis=1, num_outputs=parts)
    model = model_of(node, {"x": [2, None]}, dict.fromkeys(outputs, 2))
    # uneven sizes leave the last part smaller, never empty (4 in 3 parts would be
    # 2, 2, 0: onnx's reference gives that, newer onnxruntime rejects it)
    check(model, [((2, 7),), ((2, 9),), ((2, 5),)], target)

"""
ConstantOfShape and Expand whose shape is computed at run time from a dynamic dim (the
zero initial states exporters build from the batch size), against onnxruntime on the
CPU and `cuda`.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def model():
    """
    zeros = ConstantOfShape([2, batch, 3], 1.5); wide = Expand(x, [1, 1, 3]) for x of
    [batch, 4, 1]; wider = Expand(row, [batch, 1]) for row of [1, 5].
    """
    ints = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)  # noqa: E731
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.5])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Concat", ["two", "batch", "three"], ["dims"], axis=0),
        helper.make_node("ConstantOfShape", ["dims"], ["zeros"], value=one),
        helper.make_node("Expand", ["x", "ones_three"], ["wide"]),
        helper.make_node("Concat", ["batch", "one_dim"], ["rows"], axis=0),
        helper.make_node("Expand", ["row", "rows"], ["wider"]),
    ]
    initializers = [
        ints("zero", [0]),
        ints("two", [2]),
        ints("three", [3]),
        ints("one_dim", [1]),
        ints("ones_three", [1, 1, 3]),
        numpy_helper.from_array(np.arange(5, dtype=np.float32).reshape(1, 5), "row"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 4, 1])]
    outputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, [f"{name}{i}" for i in range(rank)])
        for name, rank in (("zeros", 3), ("wide", 3), ("wider", 2))
    ]
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_shapes_computed_from_a_dynamic_dim(target):
    proto = model()
    exe = compile_for(proto, target)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for batch in (1, 3):
        x = rng.standard_normal((batch, 4, 1)).astype(np.float32)
        for got, want in zip(exe(x), session.run(None, {"x": x}), strict=True):
            np.testing.assert_array_equal(got, want)


def position_slice_model():
    """
    The position embeddings of an encoder: table[:, :seq] for seq = x.shape[1], and
    x[:, start:end] with bounds given as inputs (negative ones count from the end).
    """
    ints = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)  # noqa: E731
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "one_scalar"], ["seq"], axis=0),
        helper.make_node("Unsqueeze", ["seq", "zero"], ["ends"]),
        helper.make_node("Slice", ["table", "zero", "ends", "one"], ["positions"]),
        helper.make_node("Add", ["x", "positions"], ["embedded"]),
        helper.make_node("Slice", ["x", "starts", "stops", "one"], ["window"]),
    ]
    table = np.arange(2 * 9 * 4, dtype=np.float32).reshape(2, 9, 4)
    initializers = [
        ints("zero", [0]),
        ints("one", [1]),
        ints("one_scalar", 1),
        numpy_helper.from_array(table, "table"),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "s", 4]),
        helper.make_tensor_value_info("starts", TensorProto.INT64, [1]),
        helper.make_tensor_value_info("stops", TensorProto.INT64, [1]),
    ]
    outputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, ["b", "n", 4])
        for name in ("embedded", "window")
    ]
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize(
    ("seq", "start", "stop"),
    [(5, 1, 3), (9, -4, 100), (2, 0, -1), (7, 5, 2), (3, -100, 2), (1, 0, 9223372036854775807)],
)
def test_slice_bounds_known_at_run_time(target, seq, start, stop):
    proto = position_slice_model()
    exe = compile_for(proto, target)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng().standard_normal((2, seq, 4)).astype(np.float32)
    feeds = {"x": x, "starts": np.array([start]), "stops": np.array([stop])}
    for got, want in zip(exe(*feeds.values()), session.run(None, feeds), strict=True):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("dtype", "elem"), [(np.float32, TensorProto.FLOAT), (np.int64, TensorProto.INT64)]
)
def test_constant_pad_by_pads_given_at_run_time(dtype, elem, target):
    """Pads a graph input, negative ones cropping: one compiled function for all."""
    nodes = [helper.make_node("Pad", ["x", "pads", "value", "axes"], ["y"], mode="constant")]
    initializers = [
        numpy_helper.from_array(np.array(7, dtype), "value"),
        numpy_helper.from_array(np.array([0, -1], np.int64), "axes"),
    ]
    inputs = [
        helper.make_tensor_value_info("x", elem, ["a", 5, "b"]),
        helper.make_tensor_value_info("pads", TensorProto.INT64, [4]),
    ]
    y = helper.make_tensor_value_info("y", elem, ["p", 5, "q"])
    graph = helper.make_graph(nodes, "g", inputs, [y], initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    exe = compile_for(proto, target)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for shape, pads in [
        ((3, 5, 4), (1, -2, 0, 3)),
        ((2, 5, 6), (-1, 0, 2, -3)),
        ((1, 5, 1), (0, 0, 0, 0)),
    ]:
        x = (rng.standard_normal(shape) * 10).astype(dtype)
        args = {"x": x, "pads": np.array(pads, np.int64)}
        (want,) = session.run(None, args)
        got = exe(*args.values())
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)

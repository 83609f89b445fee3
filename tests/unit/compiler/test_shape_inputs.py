"""Which graph inputs decide shapes, found from what the importer needed (no compiling)."""

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper

from mlc.compiler.shape_inputs import (
    bind,
    fix_dims,
    graph_inputs,
    import_needs,
    inputs_deciding,
    needed_inputs,
)

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def slice_model():
    """y = Slice(x, Concat(a, b), ends, axes) + Shape(x)-derived starts for a second slice."""
    inputs = [
        helper.make_tensor_value_info("x", F32, ["n", 6]),
        helper.make_tensor_value_info("a", I64, [1]),
        helper.make_tensor_value_info("e", I64, [2]),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1, end=2),
        helper.make_node("Concat", ["a", "s"], ["starts"], axis=0),
        helper.make_node("Slice", ["x", "starts", "e"], ["y"]),
    ]
    out = helper.make_tensor_value_info("y", F32, ["r", "c"])
    graph = helper.make_graph(nodes, "g", inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_inputs_deciding_follow_values_not_shapes():
    model = slice_model()
    # `starts` comes from `a` and from x's shape: only `a` is bound; x is data.
    assert inputs_deciding(model, ["starts"]) == ["a"]
    assert inputs_deciding(model, ["s"]) == []
    assert inputs_deciding(model, ["e", "starts"]) == ["a", "e"]


def tile_model():
    """y = Tile(Tile(x, Concat(a, [1])), e): Tile's repeats decide shapes."""
    inputs = [
        helper.make_tensor_value_info("x", F32, ["n", 6]),
        helper.make_tensor_value_info("a", I64, [1]),
        helper.make_tensor_value_info("e", I64, [2]),
    ]
    one = helper.make_tensor("one", I64, [1], [1])
    nodes = [
        helper.make_node("Concat", ["a", "one"], ["repeats"], axis=0),
        helper.make_node("Tile", ["x", "repeats"], ["t"]),
        helper.make_node("Tile", ["t", "e"], ["y"]),
    ]
    out = helper.make_tensor_value_info("y", F32, ["r", "c"])
    graph = helper.make_graph(nodes, "g", inputs, [out], [one])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_needed_inputs_come_from_the_importer_one_at_a_time():
    model = tile_model()
    assert needed_inputs(model) == ["a"]
    bound = bind(model, {"a": np.array([2], np.int64)})
    assert [i.name for i in graph_inputs(bound)] == ["x", "e"]
    assert needed_inputs(bound) == ["e"]
    assert needed_inputs(bind(bound, {"e": np.array([3, 1], np.int64)})) == []


def test_slice_bounds_are_read_at_run_time_not_bound():
    assert needed_inputs(slice_model()) == []


def branch_model():
    """y = Tile(x, If(c, then: Identity(r), else: Add(r, r))): the repeats come out of an
    If whose branches capture `r` from the graph around them."""
    inputs = [
        helper.make_tensor_value_info("x", F32, ["n", 6]),
        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
        helper.make_tensor_value_info("r", I64, [2]),
    ]
    then = helper.make_graph(
        [helper.make_node("Identity", ["r"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", I64, [2])],
    )
    other = helper.make_graph(
        [helper.make_node("Add", ["r", "r"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", I64, [2])],
    )
    nodes = [
        helper.make_node("If", ["c"], ["repeats"], then_branch=then, else_branch=other),
        helper.make_node("Tile", ["x", "repeats"], ["y"]),
    ]
    out = helper.make_tensor_value_info("y", F32, ["r", "c"])
    graph = helper.make_graph(nodes, "g", inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_inputs_deciding_follow_the_captures_of_subgraphs():
    # The If's output depends on its condition and on what its branches read.
    assert inputs_deciding(branch_model(), ["repeats"]) == ["c", "r"]
    assert needed_inputs(branch_model()) == ["c", "r"]


def test_dims_needed_static_are_those_of_the_inputs_a_value_comes_from():
    # Det(Reshape(x, Shape(z))): the matrix comes from x's values and z's shape; the
    # importer needs its dims, so both inputs of dynamic dims are specialised on (z
    # through Shape, which only dims reach); `s`, whose dims are static, is not.
    inputs = [
        helper.make_tensor_value_info("x", F32, ["n"]),
        helper.make_tensor_value_info("z", F32, ["a", "b"]),
        helper.make_tensor_value_info("s", F32, [3]),
    ]
    nodes = [
        helper.make_node("Shape", ["z"], ["shape"]),
        helper.make_node("Reshape", ["x", "shape"], ["m"]),
        helper.make_node("Mul", ["m", "s"], ["ms"]),
        helper.make_node("Det", ["ms"], ["y"]),
    ]
    out = helper.make_tensor_value_info("y", F32, [])
    graph = helper.make_graph(nodes, "g", inputs, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    assert import_needs(model) == ([], ["x", "z"])
    fixed = fix_dims(model, {"x": (9,), "z": (3, 3)})
    shapes = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in fixed.graph.input]
    assert shapes == [[9], [3, 3], [3]]
    assert import_needs(fixed) == ([], [])

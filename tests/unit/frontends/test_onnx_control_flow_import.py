"""
Importing ONNX If, Loop and Scan (`mlc/frontends/onnx/ops/control_flow.py`, `scan.py`,
the nested scopes of `graph.py`): the `scf` form each gets, where subgraph ops are
located, names a subgraph shadows, and the one-line errors.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc.frontends.onnx.model import OnnxImportError

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "cf", inputs, outputs, list(initializers))
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    proto.ir_version = 8
    return proto


def body(nodes, carried, outputs, initializers=()):
    """A Loop body: step number, condition, then `carried` (name, shape) f32 values."""
    inputs = [info("i", I64, []), info("c", BOOL, [])]
    inputs += [info(n, F32, s) for n, s in carried]
    outs = [info("c_out", BOOL, []), *(info(n, F32, s) for n, s in outputs)]
    return helper.make_graph(nodes, "body", inputs, outs, list(initializers))


def accumulate(m="m", cond="", extra=(), scans=True):
    """x summed `m` times, each step's sum stacked; `extra` nodes go into the body."""
    nodes = [
        helper.make_node("Add", ["acc", "x"], ["acc_out"]),
        helper.make_node("Identity", ["acc_out"], ["row"]),
        helper.make_node("Identity", ["c"], ["c_out"]),
        *extra,
    ]
    outs = [("acc_out", [3])] + ([("row", [3])] if scans else [])
    loop = helper.make_node(
        "Loop",
        [m, cond, "zeros"],
        ["total", "rows"] if scans else ["total"],
        name="loop",
        body=body(nodes, [("acc", [3])], outs),
    )
    inputs = [info("x", F32, [3])] + ([info("m", I64, [])] if m == "m" else [])
    inputs += [info("go", BOOL, [])] if cond == "go" else []
    outputs = [info("total", F32, [3])] + ([info("rows", F32, [None, 3])] if scans else [])
    inits = [const("zeros", np.zeros(3, np.float32))]
    return model([loop], inputs, outputs, inits)


def test_loop_with_only_a_trip_count_is_an_scf_for():
    text = str(mlc.import_onnx(accumulate()))
    assert "scf.for" in text and "scf.while" not in text
    assert "tensor.insert_slice" in text


def test_loop_with_a_condition_is_an_scf_while_and_runs():
    text = str(mlc.import_onnx(accumulate(cond="go")))
    assert "scf.while" in text and "arith.cmpi slt" in text
    exe = mlc.compile(accumulate(cond="go"))
    x = np.random.default_rng().standard_normal(3).astype(np.float32)
    total, rows = exe(x, np.asarray(4, np.int64), np.asarray(True))
    np.testing.assert_allclose(rows, np.cumsum(np.tile(x, (4, 1)), axis=0), rtol=1e-6)
    total, rows = exe(x, np.asarray(4, np.int64), np.asarray(False))
    assert rows.shape == (0, 3) and not total.any()


def test_subgraph_ops_are_located_under_their_node():
    module = mlc.import_onnx(accumulate())
    adds = [op for op in module.walk() if op.name == "ml.add"]
    assert len(adds) == 1
    assert str(adds[0].location) == 'loc("loop/body/Add_0"("cf":0:0))'


def test_a_body_input_shadows_an_outer_value():
    # The body's input `x` (the carried value) hides the graph's `x` inside the body.
    nodes = [
        helper.make_node("Add", ["x", "x"], ["doubled"]),
        helper.make_node("Identity", ["c"], ["c_out"]),
    ]
    loop = helper.make_node(
        "Loop", ["m", "", "x"], ["total"], body=body(nodes, [("x", [3])], [("doubled", [3])])
    )
    proto = model(
        [loop, helper.make_node("Add", ["total", "x"], ["y"])],
        [info("x", F32, [3]), info("m", I64, [])],
        [info("y", F32, [3])],
    )
    x = np.random.default_rng().standard_normal(3).astype(np.float32)
    got = mlc.compile(proto)(x, np.asarray(3, np.int64))
    np.testing.assert_allclose(got, 8 * x + x, rtol=1e-6)


def test_known_condition_loop_that_never_runs():
    proto = accumulate(m="", cond="no", scans=False)
    proto.graph.initializer.append(const("no", np.bool_(False)))
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(mlc.compile(proto)(x), np.zeros(3, np.float32))


def errors(proto):
    with pytest.raises(OnnxImportError) as caught:
        mlc.import_onnx(proto)
    text = str(caught.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_scan_outputs_of_a_while_loop_grow():
    proto = accumulate(m="", cond="go")
    assert "ml.concat" in str(mlc.import_onnx(proto))
    total, rows = mlc.compile(proto)(np.ones(3, np.float32), np.asarray(False))
    assert rows.shape == (0, 3) and not total.any()


def test_a_loop_that_never_ends():
    text = errors(accumulate(m="", scans=False))
    assert "node 'loop' (Loop, opset 17): error: a Loop with neither a trip count" in text


def test_an_unsupported_op_in_a_body_names_the_inner_node():
    unique = helper.make_node("Unique", ["x"], ["u"])
    text = errors(accumulate(extra=[unique]))
    assert "node 'loop/body/Unique_3' (Unique, opset 17): error: mlc does not convert Unique" in (
        text
    )


def test_a_carried_value_that_changes_rank():
    nodes = [
        helper.make_node("Unsqueeze", ["acc", "zero"], ["acc_out"]),
        helper.make_node("Identity", ["c"], ["c_out"]),
    ]
    loop = helper.make_node(
        "Loop",
        ["m", "", "x"],
        ["y"],
        name="grow",
        body=body(nodes, [("acc", None)], [("acc_out", None)], [const("zero", [0])]),
    )
    proto = model([loop], [info("x", F32, [3]), info("m", I64, [])], [info("y", F32, [None])])
    text = errors(proto)
    assert "node 'grow' (Loop, opset 17): error: loop-carried value 'x' changes from " in text
    assert "tensor<3xf32> to tensor<1x3xf32> in the body" in text


def test_branches_of_different_ranks():
    def branch(name, nodes, shape):
        return helper.make_graph(nodes, name, [], [info(name, F32, shape)])

    then = branch("t", [helper.make_node("Identity", ["x"], ["t"])], [3])
    other = branch("e", [helper.make_node("Unsqueeze", ["x", "zero"], ["e"])], [1, 3])
    node = helper.make_node("If", ["c"], ["y"], name="pick", then_branch=then, else_branch=other)
    proto = model(
        [node],
        [info("c", BOOL, []), info("x", F32, [3])],
        [info("y", F32, [None])],
        [const("zero", np.int64([0]))],
    )
    text = errors(proto)
    assert "node 'pick' (If, opset 17): error: output 0: the branches give tensor<3xf32> " in text


def test_scan8_sequence_lens_is_refused():
    inner = helper.make_graph(
        [helper.make_node("Add", ["s", "xt"], ["s2"])],
        "b",
        [info("s", F32, [2]), info("xt", F32, [2])],
        [info("s2", F32, [2])],
    )
    node = helper.make_node("Scan", ["lens", "s0", "x"], ["s"], num_scan_inputs=1, body=inner)
    proto = model(
        [node],
        [info("lens", I64, [1]), info("s0", F32, [1, 2]), info("x", F32, [1, 3, 2])],
        [info("s", F32, [1, 2])],
        opset=8,
    )
    assert "(Scan, opset 8): error: sequence_lens is not supported" in errors(proto)


def test_branches_that_give_sequences():
    def branch(name, value):
        nodes = [
            helper.make_node("Constant", [], [f"{name}_v"], value=numpy_helper.from_array(value)),
            helper.make_node("SequenceConstruct", [f"{name}_v"], [name]),
        ]
        out = helper.make_tensor_sequence_value_info(name, F32, [2])
        return helper.make_graph(nodes, name, [], [out])

    ones, zeros = np.ones(2, np.float32), np.zeros(2, np.float32)
    node = helper.make_node(
        "If",
        ["c"],
        ["s"],
        name="seq",
        then_branch=branch("t", ones),
        else_branch=branch("e", zeros),
    )
    out = helper.make_tensor_sequence_value_info("s", F32, [2])
    text = errors(model([node], [info("c", BOOL, [])], [out], opset=13))
    assert "node 'seq' (If, opset 13): error: then output 0 is a sequence" in text


def test_a_folded_sequence_stays_a_sequence():
    # SequenceConstruct of known tensors folds to a sequence, not a stacked array.
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
        helper.make_node("Add", ["y", "x"], ["z"]),
    ]
    inits = [const("a", np.ones(2, np.float32)), const("b", np.zeros(2, np.float32))]
    proto = model(nodes, [info("x", F32, [4])], [info("z", F32, [4])], inits)
    got = mlc.compile(proto)(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(got, [1, 2, 2, 3])

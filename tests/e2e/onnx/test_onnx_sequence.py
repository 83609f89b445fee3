"""
ONNX sequence ops folded at import (`mlc/frontends/onnx/ops/sequence.py`), against
onnxruntime: unbinding and splitting into sequences, picking, building, inserting,
erasing and concatenating, with static and dynamic dims.
"""

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import mlc
from tests.gpu.targets import TARGETS, compile_for

ort = pytest.importorskip("onnxruntime")

F32 = onnx.TensorProto.FLOAT


def model(nodes, inputs, constants=None, opset=18):
    """A graph of `nodes` over float inputs {name: shape} with int64 `constants`."""
    initializers = [
        numpy_helper.from_array(np.asarray(v, np.int64), k) for k, v in (constants or {}).items()
    ]
    graph = helper.make_graph(
        nodes,
        "sequence",
        [helper.make_tensor_value_info(n, F32, shape) for n, shape in inputs.items()],
        [onnx.ValueInfoProto(name="y")],
        initializers,
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    proto.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(proto, strict_mode=True)
    (y,) = [v for v in inferred.graph.value_info if v.name == "y"]
    proto.graph.output[0].type.CopyFrom(y.type)
    return proto


def check(proto, target, *arrays):
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    (want,) = session.run(None, dict(zip(names, arrays)))
    got = compile_for(proto, target)(*arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def unbind(dims):
    """x unbound along axis 1; the first piece plus the last, as the dynamo exporter does."""
    return model(
        [
            helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0),
            helper.make_node("SequenceAt", ["s", "zero"], ["a"]),
            helper.make_node("SequenceAt", ["s", "two"], ["b"]),
            helper.make_node("Add", ["a", "b"], ["y"]),
        ],
        {"x": dims},
        {"zero": 0, "two": 2},
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dims", [[2, 3, 5], ["n", 3, 5], ["n", "t", 5]], ids=str)
def test_unbind_and_pick(target, dims):
    rng = np.random.default_rng()
    check(unbind(dims), target, rng.standard_normal((2, 3, 5)).astype(np.float32))


@pytest.mark.parametrize("target", TARGETS)
def test_split_sizes_stack_and_concat(target):
    proto = model(
        [
            helper.make_node("SplitToSequence", ["x", "sizes"], ["s"], axis=0),
            helper.make_node("SequenceAt", ["s", "minus_one"], ["last"]),
            helper.make_node("SequenceAt", ["s", "one"], ["middle"]),
            helper.make_node("SequenceConstruct", ["last", "middle"], ["pair"]),
            helper.make_node("ConcatFromSequence", ["pair"], ["y"], axis=1, new_axis=1),
        ],
        {"x": [7, 4]},
        {"sizes": [3, 2, 2], "minus_one": -1, "one": 1},
    )
    check(proto, target, np.random.default_rng().standard_normal((7, 4)).astype(np.float32))


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_split_insert_erase_and_length(target):
    proto = model(
        [
            helper.make_node("SplitToSequence", ["x", "three"], ["s"], axis=1),
            helper.make_node("SequenceErase", ["s", "zero"], ["rest"]),
            helper.make_node("SequenceInsert", ["rest", "x_head", "zero"], ["again"]),
            helper.make_node("SequenceLength", ["again"], ["length"]),
            helper.make_node("Cast", ["length"], ["length_f"], to=F32),
            helper.make_node("ConcatFromSequence", ["again"], ["joined"], axis=1),
            helper.make_node("Mul", ["joined", "length_f"], ["y"]),
        ],
        {"x": ["n", 8], "x_head": ["n", 3]},
        {"three": 3, "zero": 0},
    )
    rng = np.random.default_rng()
    x = rng.standard_normal((2, 8)).astype(np.float32)
    check(proto, target, x, rng.standard_normal((2, 3)).astype(np.float32))


def test_position_given_at_run_time_specialises():
    """A position computed from a graph input: one compiled variant per position."""
    proto = model(
        [
            helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
            helper.make_node("Cast", ["p"], ["i"], to=onnx.TensorProto.INT64),
            helper.make_node("SequenceAt", ["s", "i"], ["y"]),
        ],
        {"x": [3, 4], "p": []},
    )
    x = np.random.default_rng().standard_normal((3, 4)).astype(np.float32)
    exe = mlc.compile(proto)
    for p in (2.0, -1.0, 0.0):
        np.testing.assert_array_equal(exe(x, np.float32(p)), x[int(p)])


def test_out_of_range_position_is_refused():
    proto = model(
        [
            helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
            helper.make_node("SequenceAt", ["s", "five"], ["y"]),
        ],
        {"x": [3, 4]},
        {"five": 5},
    )
    with pytest.raises(mlc.CompileError, match="position 5 is out of range for a sequence of 3"):
        mlc.compile(proto)


def test_sequence_where_a_tensor_is_expected_is_refused():
    proto = model(
        [
            helper.make_node("SplitToSequence", ["x"], ["s"], axis=0),
            helper.make_node("Identity", ["s"], ["y"]),
        ],
        {"x": [3, 4]},
    )
    with pytest.raises(mlc.CompileError, match="'s' is a sequence, where a tensor is expected"):
        mlc.compile(proto)

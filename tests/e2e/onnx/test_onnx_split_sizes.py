"""
Split and Slice whose sizes or bounds are known only at run time, compiled once (no
variant per value set) with `?` dims, against onnxruntime on fresh random inputs of odd
shapes, on the CPU and `cuda`: Split's `split` input given at run time or computed from
a dynamic dim (RotaryEmbedding's function body does so), and strided Slices whose ends
follow from a dynamic dim (the interleaved rotary embedding).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc.compiler.shape_inputs import ShapeSpecializedModel
from mlc.frontends.onnx.model import OnnxImportError
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")

I64 = TensorProto.INT64


def make_model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    """`inputs`: (name, elem type, dims), None dims dynamic; `outputs`: (name, elem, rank)."""
    infos = [
        helper.make_tensor_value_info(
            n, t, [d if d is not None else f"{n}{i}" for i, d in enumerate(s)]
        )
        for n, t, s in inputs
    ]
    results = [
        helper.make_tensor_value_info(n, t, [f"{n}{i}" for i in range(rank)])
        for n, t, rank in outputs
    ]
    graph = helper.make_graph(nodes, "g", infos, results, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def run_both(model: onnx.ModelProto, exe, args) -> None:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in model.graph.input]
    want = session.run(None, dict(zip(names, args, strict=True)))
    got = exe(*args)
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def random(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    return (rng.standard_normal(shape) * 10).astype(dtype)


@pytest.mark.parametrize(
    ("dtype", "elem"),
    [
        (np.float32, TensorProto.FLOAT),
        (np.int32, TensorProto.INT32),
        (np.float16, TensorProto.FLOAT16),
    ],
)
def test_split_sizes_at_run_time(dtype, elem, target):
    node = helper.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=-1)
    model = make_model(
        [node],
        [("x", elem, [None, None]), ("split", I64, [3])],
        [(n, elem, 2) for n in "abc"],
    )
    exe = compile_for(model, target)
    assert not isinstance(exe, ShapeSpecializedModel)  # one function for every size
    rng = np.random.default_rng()
    for shape, sizes in [((3, 7), (1, 4, 2)), ((2, 11), (0, 11, 0)), ((5, 1), (0, 0, 1))]:
        run_both(model, exe, [random(rng, shape, dtype), np.array(sizes, np.int64)])


def test_split_sizes_that_do_not_add_up_stay_in_bounds():
    """Sizes past the dim give a shorter last part, a negative one an empty part: no
    part reads outside the input (onnxruntime rejects such sizes)."""
    node = helper.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=0)
    model = make_model(
        [node],
        [("x", TensorProto.FLOAT, [None, 3]), ("split", TensorProto.INT32, [None])],
        [(n, TensorProto.FLOAT, 2) for n in "abc"],
    )
    exe = mlc.compile(model)
    x = np.random.default_rng().standard_normal((7, 3)).astype(np.float32)
    a, b, c = exe(x, np.array([4, -2, 9], np.int32))
    np.testing.assert_array_equal(a, x[:4])
    assert b.shape == (0, 3)
    np.testing.assert_array_equal(c, x[4:])


def test_split_sizes_computed_from_a_dynamic_dim(target):
    """The halves of the last dim, as RotaryEmbedding's function body splits them."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], start=-1),
        helper.make_node("Div", ["shape", "two"], ["half"]),
        helper.make_node("Concat", ["half", "half"], ["sizes"], axis=0),
        helper.make_node("Split", ["x", "sizes"], ["lo", "hi"], axis=-1),
        helper.make_node("Sub", ["hi", "lo"], ["y"]),
    ]
    two = numpy_helper.from_array(np.array([2], np.int64), "two")
    model = make_model(
        nodes, [("x", TensorProto.FLOAT, [None, 3, None])], [("y", TensorProto.FLOAT, 3)], [two]
    )
    exe = compile_for(model, target)
    rng = np.random.default_rng()
    for shape in [(2, 3, 8), (1, 3, 2), (3, 3, 10)]:
        run_both(model, exe, [random(rng, shape, np.float32)])


@pytest.mark.parametrize("step", [2, 3])
def test_strided_slice_to_a_dynamic_end(step, target):
    """`x[..., start::step]` up to the last dim's size, read at run time (the odd and
    even lanes of an interleaved rotary embedding), the start a graph input."""
    nodes = [
        helper.make_node("Shape", ["x"], ["end"], start=-1),
        helper.make_node("Slice", ["x", "start", "end", "axes", "steps"], ["y"]),
    ]
    initializers = [
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
        numpy_helper.from_array(np.array([step], np.int64), "steps"),
    ]
    model = make_model(
        nodes,
        [("x", TensorProto.FLOAT, [2, None]), ("start", I64, [1])],
        [("y", TensorProto.FLOAT, 2)],
        initializers,
    )
    exe = compile_for(model, target)
    rng = np.random.default_rng()
    for width, start in [(7, 1), (8, 0), (5, -2), (3, 9), (1, 0)]:
        run_both(model, exe, [random(rng, (2, width), np.float32), np.array([start], np.int64)])


@pytest.mark.parametrize(
    ("split_shape", "message"),
    [([2], "2 split sizes for 3 outputs"), ([1, 3], "split sizes must be 1-D")],
)
def test_split_sizes_that_cannot_fit_the_outputs(split_shape, message):
    node = helper.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=0)
    model = make_model(
        [node],
        [("x", TensorProto.FLOAT, [6]), ("split", I64, split_shape)],
        [(n, TensorProto.FLOAT, 1) for n in "abc"],
    )
    with pytest.raises(OnnxImportError, match=message):
        mlc.import_onnx(model)

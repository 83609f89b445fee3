"""
ONNX inputs that decide shapes, given at run time: the compiled model reads them,
compiles one variant per distinct value set (reused on repeat) and runs the rest of the
inputs through it, against onnxruntime on fresh random data; past `max_variants`, a
clear error. On the CPU and on `cuda`.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mlc
from mlc.compiler.shape_inputs import ShapeSpecializedModel, VariantLimitError, host_array
from tests.gpu.targets import gpu_unavailable_reason

ort = pytest.importorskip("onnxruntime")

SEED = np.random.SeedSequence().entropy
F32, I64 = TensorProto.FLOAT, TensorProto.INT64


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def model(op: str, inputs, output_rank: int, opset: int = 18, **attrs) -> onnx.ModelProto:
    """One `op` node over graph inputs `inputs` ((name, elem type, shape)), one output."""
    infos = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    out = helper.make_tensor_value_info("y", F32, [f"y{i}" for i in range(output_rank)])
    node = helper.make_node(op, [n for n, _, _ in inputs], ["y"], **attrs)
    graph = helper.make_graph([node], op.lower(), infos, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def compile_for(proto: onnx.ModelProto, target: str):
    """`mlc.compile` for `target`; on `cuda` without a GPU, a skip (the variants compile
    when called, so there is no program to lower ahead of the values)."""
    if target != "cpu" and (reason := gpu_unavailable_reason()) is not None:
        pytest.skip(reason)
    return mlc.compile(proto, target=target)


def reference(proto: onnx.ModelProto, args) -> list[np.ndarray]:
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, args, strict=True)))


def check(compiled, proto, args):
    got = compiled(*args)
    got = list(got) if isinstance(got, tuple) else [got]
    want = reference(proto, args)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(host_array(g), w, rtol=1e-5, atol=1e-6, err_msg=f"seed {SEED}")


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


X = ("x", F32, [4, 5, 6])
# op, its inputs after x, the output rank, attributes, and value sets of the shape inputs
CASES = {
    "Slice": (
        [("starts", I64, [2]), ("ends", I64, [2]), ("axes", I64, [2]), ("steps", I64, [2])],
        3,
        {},
        [
            # negative steps: the bounds decide the shape too (positive ones are read
            # at run time, test_onnx_split_sizes)
            (ints(3, 1), ints(0, 6), ints(0, 2), ints(-1, 2)),
            (ints(-1, 5), ints(-5, 0), ints(1, 2), ints(-1, -2)),
        ],
    ),
    "ReduceSum": ([("axes", I64, [1])], 3, {"keepdims": 1}, [(ints(1),), (ints(-1),)]),
    # (a constant pad reads its pads at run time: test_onnx_run_time_shapes)
    "Pad": (
        [("pads", I64, [6])],
        3,
        {"mode": "edge"},
        [(ints(0, 1, 2, 1, 0, 0),), (ints(1, 0, 0, 0, 3, 1),)],
    ),
    "Tile": ([("repeats", I64, [3])], 3, {}, [(ints(1, 2, 1),), (ints(2, 1, 3),)]),
}


@pytest.mark.parametrize("op", list(CASES))
def test_shape_inputs_at_run_time(rng, target, op):
    inputs, rank, attrs, value_sets = CASES[op]
    proto = model(op, [X, *inputs], rank, **attrs)
    compiled = compile_for(proto, target)
    assert isinstance(compiled, ShapeSpecializedModel)
    for values in [*value_sets, value_sets[0]]:
        x = rng.standard_normal((4, 5, 6)).astype(np.float32)
        check(compiled, proto, [x, *values])
    # Slice's ends come to light once its starts are bound, and so on.
    assert sorted(compiled.shape_inputs) == sorted(name for name, _, _ in inputs)
    info = compiled.cache_info()
    assert (info.variants, info.misses, info.hits) == (2, 2, 1)


def test_variant_bound(rng, target):
    proto = model("Tile", [X, ("repeats", I64, [3])], 3)
    compiled = compile_for(proto, target)
    compiled.max_variants = 2
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    for repeats in ((1, 2, 1), (2, 1, 1), (1, 2, 1)):
        check(compiled, proto, [x, ints(*repeats)])
    with pytest.raises(VariantLimitError, match=r"shape inputs \(repeats\).*max_variants=2"):
        compiled(x, ints(3, 1, 1))
    check(compiled, proto, [x, ints(2, 1, 1)])  # the kept variants still answer


@pytest.mark.parametrize(
    ("op", "inputs", "rank", "value_sets"),
    [
        ("Expand", [X, ("shape", I64, [4])], 4, [ints(2, 1, 5, 6), ints(3, 4, 5, 6)]),
        ("ConstantOfShape", [("shape", I64, [2])], 2, [ints(3, 4), ints(1, 7)]),
    ],
)
def test_shapes_broadcast_at_run_time_need_no_variants(rng, target, op, inputs, rank, value_sets):
    """Expand and ConstantOfShape take their shape at run time: one compiled function."""
    proto = model(op, inputs, rank)
    compiled = compile_for(proto, target)
    assert not isinstance(compiled, ShapeSpecializedModel)
    for shape in value_sets:
        data = [rng.standard_normal((4, 5, 6)).astype(np.float32)] if op == "Expand" else []
        check(compiled, proto, [*data, shape])


def test_shape_input_computed_and_used_as_data(rng, target):
    # The axes come from a graph input through a Cast; the same input is also added
    # to the data (bound, it is a constant of each variant, not an argument).
    x = helper.make_tensor_value_info("x", F32, [3, 4])
    a = helper.make_tensor_value_info("a", TensorProto.INT32, [1])
    y = helper.make_tensor_value_info("y", F32, ["r", "c"])
    nodes = [
        helper.make_node("Cast", ["a"], ["axes"], to=I64),
        helper.make_node("ReduceMax", ["x", "axes"], ["m"], keepdims=1),
        helper.make_node("Cast", ["a"], ["af"], to=F32),
        helper.make_node("Add", ["m", "af"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "computed", [x, a], [y])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    compiled = compile_for(proto, target)
    assert compiled.shape_inputs == ["a"]
    for axis in (0, 1, -1):
        check(
            compiled,
            proto,
            [rng.standard_normal((3, 4)).astype(np.float32), np.array([axis], np.int32)],
        )


def test_shape_input_read_inside_a_branch(rng, target):
    # Tile's repeats come out of an If whose branches capture `r` (as AffineGrid's
    # function body splits its size input in one): `r` is found and bound.
    def branch(name: str, node: onnx.NodeProto) -> onnx.GraphProto:
        out = helper.make_tensor_value_info(node.output[0], I64, [2])
        return helper.make_graph([node], name, [], [out])

    then = branch("then", helper.make_node("Identity", ["r"], ["t"]))
    other = branch("else", helper.make_node("Add", ["r", "r"], ["e"]))
    nodes = [
        helper.make_node("If", ["c"], ["repeats"], then_branch=then, else_branch=other),
        helper.make_node("Tile", ["x", "repeats"], ["y"]),
    ]
    inputs = [("x", F32, [3, 6]), ("c", TensorProto.BOOL, []), ("r", I64, [2])]
    infos = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    out = helper.make_tensor_value_info("y", F32, ["r", "c"])
    graph = helper.make_graph(nodes, "branch", infos, [out])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    compiled = compile_for(proto, target)
    assert isinstance(compiled, ShapeSpecializedModel)
    for c, r in ((True, ints(2, 1)), (False, ints(1, 2))):
        x = rng.standard_normal((3, 6)).astype(np.float32)
        check(compiled, proto, [x, np.array(c), r])


def test_wrong_calls_are_clear_errors():
    proto = model("ReduceSum", [X, ("axes", I64, [1])], 3, keepdims=1)
    compiled = mlc.compile(proto)
    x = np.ones((4, 5, 6), np.float32)
    with pytest.raises(TypeError, match="takes 2 inputs"):
        compiled(x)
    with pytest.raises(TypeError, match="input 'axes': expected dtype int64, got int32"):
        compiled(x, np.array([1], np.int32))
    with pytest.raises(mlc.CompileError, match="axis"):
        compiled(x, ints(5))
    assert compiled.variants == 0


def test_a_shape_read_from_a_dynamic_input_is_still_an_import_error():
    # ConstantOfShape(Shape(x)) with x dynamic: not a value that binding an input fixes.
    x = helper.make_tensor_value_info("x", F32, ["n"])
    y = helper.make_tensor_value_info("y", F32, ["m"])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Tile", ["x", "s"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "from_shape", [x], [y])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    with pytest.raises(mlc.CompileError, match="must be known at import time"):
        mlc.compile(proto)

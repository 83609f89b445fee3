"""NonZero: folded at import when its input is known, sized at run time when it is not,
against onnxruntime (several dtypes and ranks, dynamic dims, none or every element
nonzero, an empty input, NaN)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def non_zero_model(x: np.ndarray, known: bool, dynamic: bool = False):
    nodes = [
        helper.make_node("NonZero", ["x"], ["n"]),
        helper.make_node("Add", ["n", "one"], ["y"]),
    ]
    dims = [f"d{i}" if dynamic else d for i, d in enumerate(x.shape)]
    element = helper.np_dtype_to_tensor_dtype(x.dtype)
    inputs = [] if known else [helper.make_tensor_value_info("x", element, dims)]
    initializers = [numpy_helper.from_array(np.array(1, np.int64), "one")]
    if known:
        initializers.append(numpy_helper.from_array(x, "x"))
    y = helper.make_tensor_value_info("y", TensorProto.INT64, ["a", "b"])
    graph = helper.make_graph(nodes, "nz", inputs, [y], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def sparse(rng, shape, dtype, density=0.5):
    x = rng.standard_normal(shape) * 3 * (rng.random(shape) < density)
    return np.asarray(x.astype(dtype))


def test_non_zero_of_a_known_input_folds():
    x = np.random.default_rng().standard_normal((3, 4)).astype(np.float32)
    x[x < 0] = 0
    got = mlc.compile(non_zero_model(x, known=True))()
    np.testing.assert_array_equal(got, np.stack(np.nonzero(x)) + 1)


def check(exe, x):
    model = non_zero_model(x, known=False)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    got = exe(x)
    assert got.dtype == np.int64
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((3, 5), np.float32), ((2, 3, 4), np.int64), ((7,), np.bool_), ((), np.float32)],
    ids=["f32-2d", "i64-3d", "bool-1d", "scalar"],
)
def test_non_zero_of_a_run_time_input_matches_onnxruntime(shape, dtype, target):
    rng = np.random.default_rng()
    exe = compile_for(non_zero_model(np.zeros(shape, dtype), known=False), target)
    for density in (0.5, 0.0, 1.0):
        check(exe, sparse(rng, shape, dtype, density))


def test_non_zero_with_dynamic_dims(target):
    rng = np.random.default_rng()
    model = non_zero_model(np.zeros((1, 1, 1), np.float32), known=False, dynamic=True)
    exe = compile_for(model, target)
    for shape in [(2, 3, 5), (1, 7, 1), (4, 0, 3), (3, 2, 9)]:
        check(exe, sparse(rng, shape, np.float32, 0.3))


def test_non_zero_counts_nan_as_nonzero():
    x = np.array([[0.0, np.nan, -0.0], [1.5, 0.0, np.inf]], np.float32)
    check(mlc.compile(non_zero_model(x, known=False)), x)

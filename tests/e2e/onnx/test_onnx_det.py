"""Det against onnxruntime: single and batched matrices, singular ones, `?` batch dims, a
matrix size known at run time."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlc
from mlc.compiler.shape_inputs import ShapeSpecializedModel
from mlc.frontends.onnx.model import OnnxImportError
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def det_model(dims: list, element: int = TensorProto.FLOAT):
    node = helper.make_node("Det", ["x"], ["y"])
    x = helper.make_tensor_value_info("x", element, dims)
    y = helper.make_tensor_value_info("y", element, [f"y{i}" for i in range(len(dims) - 2)])
    graph = helper.make_graph([node], "det", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize(
    ("dims", "shapes"),
    [
        ([3, 3], [(3, 3)]),
        (["b", 4, 4], [(5, 4, 4), (1, 4, 4)]),
        (["a", 2, 1, 1], [(3, 2, 1, 1)]),
    ],
    ids=["matrix", "dynamic-batch", "one-by-one"],
)
def test_det(dims, shapes, target):
    model = det_model(dims)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        if len(shape) == 3:  # a singular matrix, and one needing every row swapped
            x[0, :, 1] = 2 * x[0, :, 0]
            x[-1] = np.triu(x[-1], 1)[::-1] + np.eye(4, dtype=np.float32)[::-1]
        (want,) = session.run(None, {"x": x})
        got = exe(x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_det_of_a_matrix_sized_at_run_time_specialises_on_its_dims():
    """The unrolled factorisation needs the size: the import says so, and the compiled
    model compiles a variant per shape of x (the values are arguments still)."""
    model = det_model([2, "n", "n"])
    message = r"Det needs square matrices of a static size, got tensor<2x\?x\?xf32>"
    with pytest.raises(OnnxImportError, match=message):
        mlc.import_onnx(model)
    exe = mlc.compile(model)
    assert isinstance(exe, ShapeSpecializedModel)
    assert (exe.shape_inputs, exe.dim_inputs) == ([], ["x"])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for n in (3, 5, 3):
        x = rng.standard_normal((2, n, n)).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_allclose(exe(x), want, rtol=1e-4, atol=1e-5)
    assert exe.cache_info().variants == 2

"""
The atomic scatter form (`scatter-atomic`) run as written on the CPU, against
onnxruntime: what the GPU's atomics must compute, in the updates' order. Duplicate
indices throughout (reduction `none` keeps the last update of each destination).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from xdsl.context import Context

import mlc
from mlc.lowering.convert_ml_to_linalg import ConvertMLToLinalgPass

ort = pytest.importorskip("onnxruntime")

TYPES = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE}
TYPES |= {"int32": TensorProto.INT32, "int64": TensorProto.INT64}


def scatter(op, data, indices, updates, dynamic, **attrs):
    def info(name, array, keep_last=False):
        dims = [f"{name}{d}" if dynamic else n for d, n in enumerate(array.shape)]
        if keep_last:
            dims[-1] = array.shape[-1]
        return helper.make_tensor_value_info(name, TYPES[array.dtype.name], dims)

    inputs = [
        info("data", data),
        info("indices", indices, op == "ScatterND"),
        info("updates", updates),
    ]
    out = helper.make_tensor_value_info(
        "out", TYPES[data.dtype.name], [f"o{d}" for d in range(data.ndim)]
    )
    node = helper.make_node(op, ["data", "indices", "updates"], ["out"], **attrs)
    graph = helper.make_graph([node], "g", inputs, [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def check(model, *arrays):
    module = mlc.compile(model, emit="mlc")
    ConvertMLToLinalgPass(scatter_group_pairs=-1, scatter_atomic=True).apply(Context(), module)
    assert "mlc.atomic_updates" in str(module)
    got = mlc.compile(module)(*arrays)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, dict(zip(("data", "indices", "updates"), arrays, strict=True)))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize(
    ("reduction", "dtype", "dynamic"),
    [
        ("none", "float64", True),
        ("add", "float32", False),
        ("max", "float32", False),
        ("min", "int32", False),
    ],
)
def test_scatter_elements(reduction, dtype, dynamic):
    rng = np.random.default_rng()
    data = rng.standard_normal((5, 7)).astype(dtype) * 10
    indices = rng.integers(-5, 5, (9, 7))  # more updates than rows: duplicates
    updates = rng.standard_normal((9, 7)).astype(dtype) * 10
    model = scatter("ScatterElements", data, indices, updates, dynamic, reduction=reduction)
    check(model, data, indices, updates)


@pytest.mark.parametrize(
    ("reduction", "dtype", "dynamic"), [("none", "int64", False), ("add", "float64", True)]
)
def test_scatter_nd_rows(reduction, dtype, dynamic):
    rng = np.random.default_rng()
    data = rng.standard_normal((6, 3, 5)).astype(dtype) * 10
    indices = rng.integers(-6, 6, (4, 3, 1))  # 12 rows for 6: duplicates
    updates = rng.standard_normal((4, 3, 3, 5)).astype(dtype) * 10
    model = scatter("ScatterND", data, indices, updates, dynamic, reduction=reduction)
    check(model, data, indices, updates)


def test_scatter_nd_elements_of_no_updates():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.zeros((0, 2), np.int64)
    updates = np.zeros((0,), np.float32)
    model = scatter("ScatterND", data, indices, updates, True, reduction="add")
    check(model, data, indices, updates)

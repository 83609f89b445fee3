"""
onnx GatherElements and GatherND against onnxruntime (and numpy's take_along_axis):
several dtypes, odd shapes, negative indices, static and dynamic dims, on the CPU and
`cuda`; out-of-range indices raise a located `mlc.RuntimeCheckError` as onnxruntime
raises INVALID_ARGUMENT.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")

SEED = np.random.SeedSequence().entropy
ONNX_TYPES = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "int64": TensorProto.INT64,
    "int32": TensorProto.INT32,
}


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def model_of(op, attrs, data, indices, out_rank, dynamic):
    def info(name, array):
        dims = [f"{name}{i}" if dynamic else d for i, d in enumerate(array.shape)]
        if dynamic and name == "indices" and op == "GatherND":
            dims[-1] = array.shape[-1]  # the tuple length is static
        return helper.make_tensor_value_info(name, ONNX_TYPES[array.dtype.name], dims)

    out = helper.make_tensor_value_info(
        "out", ONNX_TYPES[data.dtype.name], [f"out{i}" for i in range(out_rank)]
    )
    node = helper.make_node(op, ["data", "indices"], ["out"], **attrs)
    graph = helper.make_graph([node], "g", [info("data", data), info("indices", indices)], [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def random_data(rng, shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-100, 100, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check(model, data, indices, target):
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"data": data, "indices": indices})
    np.testing.assert_array_equal(exe(data, indices), want)
    return exe


ELEMENTS_CASES = [
    ((5, 7), (3, 7), 0, "float32", "int64"),
    ((4, 3, 6), (4, 3, 2), -1, "float64", "int32"),
    ((2, 5, 3), (1, 4, 3), 1, "int64", "int64"),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize(("shape", "index_shape", "axis", "dtype", "index_dtype"), ELEMENTS_CASES)
def test_gather_elements(rng, target, dynamic, dtype, index_dtype, shape, index_shape, axis):
    data = random_data(rng, shape, dtype)
    n = shape[axis]
    indices = rng.integers(-n, n, size=index_shape).astype(index_dtype)
    model = model_of("GatherElements", {"axis": axis}, data, indices, len(shape), dynamic)
    exe = check(model, data, indices, target)
    if index_shape == shape or (axis == len(shape) - 1 and index_shape[:-1] == shape[:-1]):
        want = np.take_along_axis(data, np.where(indices < 0, indices + n, indices), axis)
        np.testing.assert_array_equal(exe(data, indices), want)
    indices.flat[-1] = n
    with pytest.raises(mlc.RuntimeCheckError, match=f"'ml.gather_elements' op index {n} is out"):
        exe(data, indices)


ND_CASES = [
    ((5, 4, 3), (2, 2), 0, "float32"),
    ((5, 4, 3), (3, 1), 0, "int32"),
    ((5, 4, 3), (2, 6, 3), 0, "float64"),
    ((3, 4, 5), (3, 1), 1, "float32"),
    ((2, 3, 4, 5), (2, 3, 2, 2), 2, "int64"),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize(("shape", "index_shape", "batch_dims", "dtype"), ND_CASES)
def test_gather_nd(rng, target, dynamic, dtype, shape, index_shape, batch_dims):
    data = random_data(rng, shape, dtype)
    k = index_shape[-1]
    columns = [
        rng.integers(-shape[batch_dims + j], shape[batch_dims + j], size=index_shape[:-1])
        for j in range(k)
    ]
    indices = np.stack(columns, -1).astype(np.int64)
    out_rank = len(index_shape) - 1 + len(shape) - batch_dims - k
    model = model_of("GatherND", {"batch_dims": batch_dims}, data, indices, out_rank, dynamic)
    exe = check(model, data, indices, target)
    bad = -shape[batch_dims + k - 1] - 1
    indices[..., -1].flat[0] = bad
    with pytest.raises(mlc.RuntimeCheckError, match=f"'ml.gather_nd' op index {bad} is out"):
        exe(data, indices)


@pytest.mark.parametrize("op", ["GatherND", "ScatterND"])
def test_index_depth_from_the_ranks_when_dynamic(op, rng, target):
    """Indices whose last dim is `?`: its size follows from the ranks of the other
    operands and the result (2 here), checked at run time."""
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    inputs = [
        helper.make_tensor_value_info("data", f32, ["a", "b", "c"]),
        helper.make_tensor_value_info("indices", i64, ["n", "k"]),
    ]
    names = ["data", "indices"]
    if op == "ScatterND":
        inputs.append(helper.make_tensor_value_info("updates", f32, ["n", "c"]))
        names.append("updates")
    rank = 3 if op == "ScatterND" else 2
    y = helper.make_tensor_value_info("y", f32, [f"y{i}" for i in range(rank)])
    graph = helper.make_graph([helper.make_node(op, names, ["y"])], "g", inputs, [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    data = rng.standard_normal((4, 3, 5)).astype(np.float32)
    indices = np.array([[3, 1], [0, 2], [2, 0]], np.int64)
    args = [data, indices] + ([rng.standard_normal((3, 5)).astype(np.float32)] if rank == 3 else [])
    (want,) = session.run(None, dict(zip(names, args, strict=True)))
    np.testing.assert_array_equal(exe(*args), want)
    if target == "cpu":  # a depth other than the ranks imply: a check, not a stray read
        args[1] = np.zeros((3, 3), np.int64)
        with pytest.raises(mlc.RuntimeCheckError):
            exe(*args)

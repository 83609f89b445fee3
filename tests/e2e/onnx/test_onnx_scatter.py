"""
onnx TopK, ScatterElements and ScatterND against onnxruntime (and numpy): several
dtypes, odd shapes, negative and duplicate indices, every reduction, static and dynamic
dims, on the CPU and `cuda`; an out-of-range index raises a located
`mlc.RuntimeCheckError`. The grouped scatters' cases run grouped on the CPU; the `cuda`
pipeline does not group (`scatter-group-pairs=-1`): there they check its atomics
(`scatter-atomic`: none, add, max, min) and its walk (mul).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")
ORT_VERSION = tuple(int(part) for part in ort.__version__.split(".")[:2])

SEED = np.random.SeedSequence().entropy
ONNX_TYPES = {
    "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
    "int64": TensorProto.INT64,
    "int32": TensorProto.INT32,
}
REDUCTIONS = ["none", "add", "mul", "max", "min"]
# Every reduction on static dims; the dynamic lowering differs only in its checks and
# sizes, so two reductions there keep the file fast.
MODES = [
    *(pytest.param(r, False, id=f"static-{r}") for r in REDUCTIONS),
    *(pytest.param(r, True, id=f"dynamic-{r}") for r in ("none", "add")),
]


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def info(name, array, dynamic, static_last=False):
    dims = [f"{name}{i}" if dynamic else d for i, d in enumerate(array.shape)]
    if static_last:
        dims[-1] = array.shape[-1]
    return helper.make_tensor_value_info(name, ONNX_TYPES[array.dtype.name], dims)


def model(node, inputs, outputs, initializers=()):
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def reference(model_, feeds):
    session = ort.InferenceSession(model_.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def random_data(rng, shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-9, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def scatter_model(op, attrs, data, indices, updates, dynamic):
    out = helper.make_tensor_value_info(
        "out", ONNX_TYPES[data.dtype.name], [f"o{i}" for i in range(data.ndim)]
    )
    nd = op == "ScatterND"
    inputs = [
        info("data", data, dynamic),
        info("indices", indices, dynamic, static_last=nd),
        info("updates", updates, dynamic),
    ]
    return model(
        helper.make_node(op, ["data", "indices", "updates"], ["out"], **attrs), inputs, [out]
    )


def check_scatter(target, op, attrs, data, indices, updates, dynamic):
    m = scatter_model(op, attrs, data, indices, updates, dynamic)
    exe = compile_for(m, target)
    (want,) = reference(m, {"data": data, "indices": indices, "updates": updates})
    got = exe(data, indices, updates)
    if target == "cuda" and attrs.get("reduction") in ("add", "mul") and want.dtype.kind == "f":
        # The GPU combines floats with atomics in no fixed order: the last bits may differ.
        scale = float(np.abs(want).max(initial=1.0))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=4 * np.finfo(want.dtype).eps * scale)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    return exe


ELEMENTS_CASES = [
    ((5, 7), (3, 7), 0, "float32", "int64"),
    ((4, 3, 6), (4, 3, 9), -1, "float64", "int32"),
    ((2, 5, 3), (1, 4, 3), 1, "int64", "int64"),
    ((7,), (11,), 0, "int32", "int64"),
]


@pytest.mark.parametrize(("reduction", "dynamic"), MODES)
@pytest.mark.parametrize(("shape", "index_shape", "axis", "dtype", "index_dtype"), ELEMENTS_CASES)
def test_scatter_elements(
    rng, target, dynamic, reduction, shape, index_shape, axis, dtype, index_dtype
):
    data = random_data(rng, shape, dtype)
    n = shape[axis]
    # More updates than the axis holds (index shapes above): duplicates, negatives.
    indices = rng.integers(-n, n, size=index_shape).astype(index_dtype)
    updates = random_data(rng, index_shape, dtype)
    attrs = {"axis": axis, "reduction": reduction}
    exe = check_scatter(target, "ScatterElements", attrs, data, indices, updates, dynamic)
    if reduction == "none" and len(shape) == 1:  # numpy's fancy assignment: last one wins
        want = data.copy()
        want[np.where(indices < 0, indices + n, indices)] = updates
        np.testing.assert_array_equal(exe(data, indices, updates), want)
    if reduction == "add" and len(shape) == 1:
        want = data.copy()
        np.add.at(want, np.where(indices < 0, indices + n, indices), updates)
        np.testing.assert_allclose(exe(data, indices, updates), want, rtol=1e-6)
    indices.flat[-1] = -n - 1
    with pytest.raises(mlc.RuntimeCheckError, match=f"'ml.scatter_elements' op index {-n - 1} "):
        exe(data, indices, updates)


ND_CASES = [
    ((4, 5, 3), (6, 2), "float32", "int64"),
    ((6, 4), (2, 3, 1), "float64", "int64"),
    ((3, 4, 5), (5, 3), "int64", "int64"),
    ((9,), (4, 1), "int32", "int64"),
]


@pytest.mark.parametrize(("reduction", "dynamic"), MODES)
@pytest.mark.parametrize(("shape", "index_shape", "dtype", "index_dtype"), ND_CASES)
def test_scatter_nd(rng, target, dynamic, reduction, shape, index_shape, dtype, index_dtype):
    data = random_data(rng, shape, dtype)
    q = index_shape[-1]
    indices = np.stack(
        [rng.integers(-shape[j], shape[j], size=index_shape[:-1]) for j in range(q)], axis=-1
    ).astype(index_dtype)
    updates = random_data(rng, (*index_shape[:-1], *shape[q:]), dtype)
    exe = check_scatter(
        target, "ScatterND", {"reduction": reduction}, data, indices, updates, dynamic
    )
    indices.flat[0] = shape[0]
    with pytest.raises(mlc.RuntimeCheckError, match=f"'ml.scatter_nd' op index {shape[0]} "):
        exe(data, indices, updates)


def top_k_model(x, k, axis, largest, sorted_, dynamic):
    out_shape = [d if i != axis % x.ndim else k for i, d in enumerate(x.shape)]
    outs = [
        helper.make_tensor_value_info("values", ONNX_TYPES[x.dtype.name], out_shape),
        helper.make_tensor_value_info("indices", TensorProto.INT64, out_shape),
    ]
    node = helper.make_node(
        "TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=largest, sorted=sorted_
    )
    k_init = helper.make_tensor("k", TensorProto.INT64, [1], [k])
    return model(node, [info("x", x, dynamic)], outs, [k_init])


TOP_K_CASES = [
    ((6, 8), 2, -1, "float32"),
    ((3, 7, 5), 7, 1, "float64"),
    ((5, 3), 1, 0, "int32"),
    ((4, 9), 9, 1, "int64"),
    ((2, 3, 16), 4, -1, "float32"),
]


@pytest.mark.parametrize("largest", [1, 0], ids=["largest", "smallest"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize(("shape", "k", "axis", "dtype"), TOP_K_CASES)
def test_top_k(rng, target, dynamic, largest, shape, k, axis, dtype):
    x = random_data(rng, shape, dtype)
    if np.issubdtype(x.dtype, np.floating):
        x = np.round(x, 1)  # ties
        # onnxruntime orders NaN as the largest value from 1.32 on; before, by where it is.
        if ORT_VERSION >= (1, 32):
            x.flat[:: max(1, x.size // 4)] = np.nan
    m = top_k_model(x, k, axis, largest, 1, dynamic)
    exe = compile_for(m, target)
    want_values, want_indices = reference(m, {"x": x})
    values, indices = exe(x)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(values, want_values)


def test_top_k_unsorted_is_the_sorted_set(rng, target):
    x = rng.standard_normal((5, 10)).astype(np.float32)
    m = top_k_model(x, 3, 1, 1, 0, dynamic=False)
    want_values, _ = reference(m, {"x": x})
    values, indices = compile_for(m, target)(x)
    np.testing.assert_array_equal(np.sort(values, 1), np.sort(want_values, 1))
    np.testing.assert_array_equal(np.take_along_axis(x, indices, 1), values)


def test_top_k_above_a_dynamic_axis_fails_a_check(rng, target):
    x = rng.standard_normal((2, 6)).astype(np.float32)
    exe = compile_for(top_k_model(x, 4, 1, 1, 1, dynamic=True), target)
    with pytest.raises(mlc.RuntimeCheckError, match=r"'ml.top_k' op k \(4\) exceeds"):
        exe(x[:, :3])


# Scatters large enough for the lowering grouped by destination: many duplicates per
# destination, negative indices, every reduction, static and dynamic. Tuples of rows
# take the loop over the tuples (`scatter_rows.py`), tuples of elements the counting
# loops (`scatter_grouped.py`, the last case).
GROUPED_ND_CASES = [
    ((301, 7), (203, 1), "float32"),
    ((37, 29, 3), (3, 51, 2), "int32"),
    ((41, 13), (203, 2), "float32"),
]


@pytest.mark.parametrize(("reduction", "dynamic"), MODES)
@pytest.mark.parametrize(("shape", "index_shape", "dtype"), GROUPED_ND_CASES)
def test_scatter_nd_grouped(rng, target, dynamic, reduction, shape, index_shape, dtype):
    data = random_data(rng, shape, dtype)
    q = index_shape[-1]
    # Indices from a few rows only: several updates land on each of them.
    indices = np.stack(
        [rng.integers(-shape[j], min(shape[j], 9), size=index_shape[:-1]) for j in range(q)],
        axis=-1,
    ).astype(np.int64)
    updates = random_data(rng, (*index_shape[:-1], *shape[q:]), dtype)
    if reduction == "mul" and np.issubdtype(dtype, np.floating):
        updates = (1 + updates / 8).astype(dtype)  # products that stay in range
    exe = check_scatter(
        target, "ScatterND", {"reduction": reduction}, data, indices, updates, dynamic
    )
    if reduction == "add" and q == 1 and len(index_shape) == 2:
        want = data.copy()
        np.add.at(
            want, np.where(indices[:, 0] < 0, indices[:, 0] + shape[0], indices[:, 0]), updates
        )
        # atomic adds sum in any order: a sum that cancels to near zero keeps only an
        # absolute accuracy, of the order of its terms' rounding
        np.testing.assert_allclose(exe(data, indices, updates), want, rtol=1e-5, atol=1e-5)
    indices.flat[-1] = -shape[-q - 1] - 1 if q == 1 else shape[1]
    with pytest.raises(mlc.RuntimeCheckError, match=r"'ml.scatter_nd' op index "):
        exe(data, indices, updates)


GROUPED_ELEMENTS_CASES = [
    ((5, 401), (5, 302), 1, "float32"),
    ((1, 173, 4), (1, 257, 3), -2, "int64"),
]


@pytest.mark.parametrize(("reduction", "dynamic"), MODES)
@pytest.mark.parametrize(("shape", "index_shape", "axis", "dtype"), GROUPED_ELEMENTS_CASES)
def test_scatter_elements_grouped(rng, target, dynamic, reduction, shape, index_shape, axis, dtype):
    data = random_data(rng, shape, dtype)
    n = shape[axis]
    indices = rng.integers(-n, min(n, 40), size=index_shape).astype(np.int64)
    updates = random_data(rng, index_shape, dtype)
    if reduction == "mul" and np.issubdtype(dtype, np.floating):
        updates = (1 + updates / 8).astype(dtype)
    attrs = {"axis": axis, "reduction": reduction}
    exe = check_scatter(target, "ScatterElements", attrs, data, indices, updates, dynamic)
    indices.flat[-1] = n
    with pytest.raises(mlc.RuntimeCheckError, match=f"'ml.scatter_elements' op index {n} "):
        exe(data, indices, updates)


@pytest.mark.parametrize("op", ["ScatterND", "ScatterElements"])
def test_grouped_scatter_of_no_updates(rng, target, op):
    data = random_data(rng, (13, 6), "float32")
    indices = np.zeros((0, 1) if op == "ScatterND" else (0, 6), np.int64)
    updates = np.zeros((0, 6), np.float32)
    attrs = {"reduction": "add"} | ({"axis": 0} if op == "ScatterElements" else {})
    exe = check_scatter(target, op, attrs, data, indices, updates, True)
    np.testing.assert_array_equal(exe(data, indices, updates), data)

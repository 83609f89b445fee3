"""
MaxPool's `Indices` output, integer MaxPool, LpPool and GlobalLpPool against onnxruntime:
one-node models with static and dynamic dims, run on fresh random inputs of several
sizes, on the CPU and `cuda`.
"""

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def pool_model(
    op: str, attrs: dict[str, Any], rank: int, dtype: type, dynamic: bool, indices: bool, opset: int
) -> onnx.ModelProto:
    """A one-node model; with `dynamic`, every input dim is symbolic."""
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    outputs = ["y", "i"] if indices else ["y"]
    node = helper.make_node(op, ["x"], outputs, **attrs)
    dims: list[Any] = [f"d{i}" for i in range(rank)] if dynamic else [None] * rank
    x = helper.make_tensor_value_info("x", element, dims)
    results = [helper.make_tensor_value_info("y", element, [f"y{i}" for i in range(rank)])]
    if indices:
        results.append(
            helper.make_tensor_value_info("i", TensorProto.INT64, [f"i{i}" for i in range(rank)])
        )
    graph = helper.make_graph([node], "pool", [x], results)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def with_shape(model: onnx.ModelProto, shape: tuple[int, ...]) -> onnx.ModelProto:
    """`model` with its input's dims fixed to `shape`."""
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    for dim, size in zip(fixed.graph.input[0].type.tensor_type.shape.dim, shape, strict=True):
        dim.Clear()
        dim.dim_value = size
    return fixed


def random(shape: tuple[int, ...], dtype: type, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    return (rng.standard_normal(shape) * 4).astype(dtype)


def check(
    op: str,
    attrs: dict[str, Any],
    shapes: list[tuple[int, ...]],
    target: str,
    *,
    dtype: type = np.float32,
    dynamic: bool = False,
    indices: bool = False,
    opset: int = 18,
) -> None:
    """mlc against onnxruntime on each shape: compiled once if `dynamic`, else per shape."""
    model = pool_model(op, attrs, len(shapes[0]), dtype, dynamic, indices, opset)
    rng = np.random.default_rng()
    exe = compile_for(model, target) if dynamic else None
    for shape in shapes:
        fixed = model if dynamic else with_shape(model, shape)
        run = exe if exe is not None else compile_for(fixed, target)
        session = ort.InferenceSession(
            fixed.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        x = random(shape, dtype, rng)
        want = session.run(None, {"x": x})
        got = run(x)
        got = list(got) if isinstance(got, tuple) else [got]
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_max_pool_indices_2d(target):
    attrs = dict(kernel_shape=[3, 2], pads=[1, 0, 1, 1], strides=[2, 1], dilations=[1, 2])
    check("MaxPool", attrs, [(2, 3, 7, 6)], target, indices=True)


def test_max_pool_indices_ceil_column_major(target):
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, storage_order=1)
    check("MaxPool", attrs, [(1, 2, 7, 6), (3, 1, 6, 9)], target, dynamic=True, indices=True)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float64, np.float16])
def test_max_pool_indices_dtypes(dtype, target):
    attrs = dict(kernel_shape=[3], strides=[2], pads=[1, 1])
    check("MaxPool", attrs, [(2, 3, 9), (1, 2, 4)], target, dtype=dtype, indices=True)


def test_max_pool_indices_3d(target):
    attrs = dict(kernel_shape=[2, 2, 2], strides=[1, 2, 2], storage_order=1)
    check("MaxPool", attrs, [(1, 2, 4, 5, 4)], target, indices=True, opset=12)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_integer_max_pool(dtype, target):
    attrs = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 2])
    check("MaxPool", attrs, [(2, 3, 7, 6), (1, 1, 5, 5)], target, dtype=dtype, dynamic=True)


@pytest.mark.parametrize(
    ("attrs", "opset"),
    [
        (dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2], p=3), 11),
        (dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), 18),
        (dict(kernel_shape=[2, 3], dilations=[2, 1], p=1), 18),
    ],
    ids=["p3-pads", "ceil", "p1-dilations"],
)
def test_lp_pool(attrs, opset, target):
    check("LpPool", attrs, [(2, 3, 8, 5)], target, opset=opset)


def test_lp_pool_dynamic(target):
    attrs = dict(kernel_shape=[3, 2], auto_pad="SAME_UPPER", strides=[2, 2])
    check("LpPool", attrs, [(1, 2, 7, 6), (2, 3, 8, 5)], target, dynamic=True)


def test_lp_pool_1d(target):
    check("LpPool", dict(kernel_shape=[3], strides=[2], p=4), [(2, 3, 9)], target)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool(p, target):
    check("GlobalLpPool", dict(p=p), [(2, 3, 4, 5), (1, 2, 3, 1)], target, dynamic=True)


def test_lp_pool_of_integers_is_an_error():
    model = pool_model("LpPool", dict(kernel_shape=[2]), 3, np.int32, False, False, 18)
    with pytest.raises(mlc.CompileError, match="LpPool takes floats only"):
        mlc.compile(with_shape(model, (1, 1, 4)))

"""
CenterCropPad (crops and pads, odd and even, static and `?` dims) and Col2Im (strides,
dilations, pads, a `?` batch) against onnxruntime, on the CPU and `cuda`.
"""

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def crop_model(rank: int, target: list[int], axes: list[int] | None, dynamic: bool, dtype):
    attrs: dict[str, Any] = {} if axes is None else {"axes": axes}
    node = helper.make_node("CenterCropPad", ["x", "s"], ["y"], **attrs)
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    dims: list[Any] = [f"d{i}" for i in range(rank)] if dynamic else [None] * rank
    x = helper.make_tensor_value_info("x", element, dims)
    y = helper.make_tensor_value_info("y", element, [f"y{i}" for i in range(rank)])
    shape = numpy_helper.from_array(np.array(target, np.int64), "s")
    graph = helper.make_graph([node], "crop", [x], [y], [shape])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def fixed(model, shape: tuple[int, ...]):
    copy = type(model)()
    copy.CopyFrom(model)
    for dim, size in zip(copy.graph.input[0].type.tensor_type.shape.dim, shape, strict=True):
        dim.Clear()
        dim.dim_value = size
    return copy


def run_both(model, x: np.ndarray, exe) -> None:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    got = exe(x)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("shape", "sizes", "axes", "dtype"),
    [
        ((5, 8, 3), [4, 5, 3], None, np.float32),
        ((6, 3), [3, 8], None, np.int64),
        ((2, 7, 4), [9, 1], [-1, 1], np.float32),
    ],
    ids=["crop-odd", "crop-and-pad", "axes"],
)
def test_center_crop_pad(shape, sizes, axes, dtype, target):
    model = fixed(crop_model(len(shape), sizes, axes, False, dtype), shape)
    x = (np.random.default_rng().standard_normal(shape) * 10).astype(dtype)
    run_both(model, x, compile_for(model, target))


def test_center_crop_pad_dynamic(target):
    model = crop_model(3, [5, 4], [1, 2], True, np.float32)
    exe = compile_for(model, target)
    rng = np.random.default_rng()
    for shape in [(2, 8, 3), (1, 3, 7), (3, 5, 4), (1, 4, 6)]:
        x = rng.standard_normal(shape).astype(np.float32)
        run_both(fixed(model, shape), x, exe)


def col2im_model(image: list[int], block: list[int], attrs: dict[str, Any]):
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", None, None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", None, *image])
    shapes = [
        numpy_helper.from_array(np.array(image, np.int64), "image"),
        numpy_helper.from_array(np.array(block, np.int64), "block"),
    ]
    graph = helper.make_graph([node], "col2im", [x], [y], shapes)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


@pytest.mark.parametrize(
    ("image", "block", "attrs", "channels_blocks"),
    [
        ([5, 5], [2, 2], {}, (3 * 4, 16)),
        ([6, 7], [3, 2], dict(strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1]), (2 * 6, 24)),
        ([3, 4, 3], [2, 1, 2], dict(pads=[0, 1, 0, 1, 0, 1]), (2 * 4, 45)),
    ],
    ids=["plain", "strides-dilations-pads", "3d"],
)
def test_col2im(image, block, attrs, channels_blocks, target):
    model = col2im_model(image, block, attrs)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng()
    for n in (2, 1):
        x = rng.standard_normal((n, *channels_blocks)).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        got = exe(x)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

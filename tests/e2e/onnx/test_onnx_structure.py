"""
The structural ONNX ops (mlc/frontends/onnx/ops/structure.py) against onnxruntime, on
the CPU and `cuda`: fresh random inputs, odd shapes, two opsets, symbolic dims.
"""

import numpy as np
import pytest

import mlc
from mlc.frontends.onnx.model import OnnxImportError
from tests.e2e.onnx.single_node import check, ort, single_node_model
from tests.gpu.targets import compile_for

rng = np.random.default_rng()


def normal(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(
    ("op", "opset", "dtype", "attrs", "dynamic"),
    [
        ("ArgMax", 13, np.float32, {"axis": 1, "keepdims": 0}, ("x",)),
        ("ArgMax", 12, np.float32, {"axis": 1, "select_last_index": 1}, ()),
        ("ArgMin", 11, np.float64, {"axis": -1}, ()),
        ("ArgMin", 13, np.float32, {"axis": 0, "keepdims": 0, "select_last_index": 1}, ("x",)),
        ("ArgMax", 13, np.int32, {"axis": 2, "select_last_index": 1}, ()),
        ("ArgMin", 13, np.int64, {"axis": 1}, ("x",)),
    ],
)
def test_arg_reductions_with_ties(target, op, opset, dtype, attrs, dynamic):
    x = rng.integers(-3, 3, (3, 5, 7)).astype(dtype)  # many ties
    if dtype in (np.float32, np.float64):
        x = x + (rng.random(x.shape) < 0.5) * normal(*x.shape, dtype=dtype)
    check(op, [("x", x)], attrs, opset=opset, target=target, dynamic=dynamic)


@pytest.mark.parametrize(
    ("opset", "dtype", "axis", "exclusive", "reverse", "dynamic"),
    [
        (14, np.float32, 1, 0, 0, ("x",)),
        (14, np.float32, -1, 1, 0, ()),
        (11, np.float64, 0, 0, 1, ("x",)),
        (14, np.float16, 2, 1, 1, ()),
        (11, np.int32, 1, 1, 1, ("x",)),
        (14, np.int64, -3, 0, 1, ()),
    ],
)
def test_cumsum(target, opset, dtype, axis, exclusive, reverse, dynamic):
    x = rng.integers(-9, 9, (3, 6, 5)).astype(dtype)
    if dtype != np.int32 and dtype != np.int64:
        x = normal(3, 6, 5, dtype=dtype)
    rtol = 1e-2 if dtype == np.float16 else 1e-5
    check(
        "CumSum",
        [("x", x), ("axis", np.array(axis, np.int64 if opset > 11 else np.int32))],
        {"exclusive": exclusive, "reverse": reverse},
        opset=opset,
        target=target,
        known=["axis"],
        dynamic=dynamic,
        rtol=rtol,
        atol=rtol,
    )


@pytest.mark.parametrize(("opset", "axis", "dynamic"), [(13, -1, ("x",)), (13, 0, ()), (11, 1, ())])
def test_hardmax(target, opset, axis, dynamic):
    x = normal(3, 4, 5)
    x[1, :, 2] = x[1, :, 3]  # ties: the first index wins
    check("Hardmax", [("x", x)], {"axis": axis}, opset=opset, target=target, dynamic=dynamic)


@pytest.mark.parametrize(
    ("upper", "k", "dtype", "dynamic"),
    [
        (1, 0, np.float32, ("x",)),
        (0, -2, np.float32, ()),
        (1, 3, np.int64, ()),
        (0, 1, np.float16, ("x",)),
    ],
)
def test_trilu(target, upper, k, dtype, dynamic):
    x = normal(2, 5, 7).astype(dtype)
    inputs = [("x", x), ("k", np.array(k, np.int64))]
    check("Trilu", inputs, {"upper": upper}, opset=14, target=target, known=["k"], dynamic=dynamic)


@pytest.mark.parametrize(("k", "dtype", "dynamic"), [(0, None, ()), (2, 6, ("x",)), (-1, 11, ())])
def test_eye_like(target, k, dtype, dynamic):
    attrs = {"k": k} | ({"dtype": dtype} if dtype is not None else {})
    check("EyeLike", [("x", normal(4, 6))], attrs, opset=9, target=target, dynamic=dynamic)


@pytest.mark.parametrize(
    ("opset", "axis", "index_dtype", "values", "dynamic"),
    [
        (11, -1, np.int64, np.array([0.5, 3.0], np.float32), ("i",)),
        (11, 0, np.int64, np.array([-1, 1], np.int64), ()),
        (9, 1, np.float32, np.array([0, 7], np.int64), ()),
    ],
)
def test_one_hot_with_negative_and_out_of_range_indices(
    target, opset, axis, index_dtype, values, dynamic
):
    indices = rng.integers(-6, 7, (3, 4)).astype(index_dtype)  # some past +-depth: all off
    inputs = [("i", indices), ("depth", np.array([5], np.int64)), ("v", values)]
    check(
        "OneHot",
        inputs,
        {"axis": axis},
        opset=opset,
        target=target,
        known=["depth"],
        dynamic=dynamic,
    )


@pytest.mark.parametrize(
    ("start", "limit", "delta", "known"),
    [
        (np.int64(1), np.int64(11), np.int64(3), ["a", "b", "c"]),
        (np.float32(0.5), np.float32(3.0), np.float32(0.7), ["a", "b", "c"]),
        (np.int32(2), np.int32(-13), np.int32(-4), ["a", "c"]),
        (np.int64(-3), np.int64(10), np.int64(2), ["a", "c"]),
        (np.int64(5), np.int64(2), np.int64(1), ["a", "c"]),  # empty
    ],
)
def test_range(target, start, limit, delta, known):
    inputs = [("a", np.array(start)), ("b", np.array(limit)), ("c", np.array(delta))]
    check("Range", inputs, opset=11, target=target, known=known)


@pytest.mark.parametrize("delta", [1, 2, -3])
def test_range_to_a_one_element_limit_read_at_run_time(target, delta):
    """The limit a `[1]` slice of a dynamic shape (AffineGrid's function body does so),
    where ONNX says a scalar: onnxruntime takes it as one, and so does mlc."""
    from onnx import TensorProto, helper, numpy_helper

    ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], start=1, end=2),
        helper.make_node("Range", ["start", "shape", "delta"], ["y"]),
    ]
    start = 0 if delta > 0 else 7
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "w"])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, ["n"])],
        [ints("start", start), ints("delta", delta)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for width in (1, 5, 8):
        x = np.zeros((2, width), np.float32)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_array_equal(exe(x), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_range_bounds_given_at_run_time_specialise(dtype):
    """Every bound a graph input (a float limit too): a variant per value set."""
    from mlc.compiler.shape_inputs import ShapeSpecializedModel

    inputs = [("a", np.array(1, dtype)), ("b", np.array(9, dtype)), ("c", np.array(2, dtype))]
    model = single_node_model("Range", inputs, {}, 11, {}, ())
    exe = mlc.compile(model)
    assert isinstance(exe, ShapeSpecializedModel)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for start, limit, delta in [(1, 9, 2), (10, -3, -3), (0.5, 4, 0.75), (1, 9, 2)]:
        feeds = [np.array(v).astype(dtype) for v in (start, limit, delta)]
        if dtype == np.int32 and delta != int(delta):
            continue
        (want,) = session.run(None, dict(zip("abc", feeds, strict=True)))
        np.testing.assert_array_equal(exe(*feeds), want)
    bound = ["a", "c"] if dtype == np.int32 else ["a", "b", "c"]  # an int limit: read
    assert sorted(exe.shape_inputs) == bound


def test_range_with_unknown_start_is_a_located_error():
    inputs = [
        ("a", np.array(1, np.int64)),
        ("b", np.array(9, np.int64)),
        ("c", np.array(2, np.int64)),
    ]
    model = single_node_model("Range", inputs, {}, 11, {"c": inputs[2][1]}, ())
    with pytest.raises(
        OnnxImportError, match=r"Range_0.*input 0 .*the start. must be known at import time"
    ):
        mlc.import_onnx(model)


@pytest.mark.parametrize(
    ("op", "mode", "shape", "dynamic"),
    [
        ("DepthToSpace", "DCR", (2, 8, 3, 5), ("x",)),
        ("DepthToSpace", "CRD", (1, 18, 2, 3), ()),
        ("SpaceToDepth", None, (2, 3, 4, 6), ("x",)),
        ("SpaceToDepth", None, (1, 2, 9, 3), ()),
    ],
)
def test_depth_and_space(target, op, mode, shape, dynamic):
    block = 3 if 18 in shape or 9 in shape else 2
    attrs = {"blocksize": block} | ({"mode": mode} if mode else {})
    check(op, [("x", normal(*shape))], attrs, opset=13, target=target, dynamic=dynamic)


@pytest.mark.parametrize(
    ("mode", "shape", "block"), [("CRD", (2, 3, 4, 6), 2), ("DCR", (1, 2, 9, 3), 3)]
)
def test_space_to_depth_modes(mode, shape, block):
    """SpaceToDepth's mode (opset 28), against onnx's reference: the onnxruntime here
    does not know the attribute."""
    from onnx.reference import ReferenceEvaluator

    model = single_node_model(
        "SpaceToDepth", [("x", normal(*shape))], {"blocksize": block, "mode": mode}, 28, {}, ("x",)
    )
    x = normal(*shape)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(mlc.compile(model)(x), want)

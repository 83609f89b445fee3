"""
Resize and Upsample (mlc/frontends/onnx/ops/resize.py) against onnxruntime, on the CPU
and `cuda`: every mode and coordinate transformation, up and down, odd sizes, 3-d to
5-d inputs, scales or sizes given at run time, a dynamic batch, and the errors.
"""

import numpy as np
import pytest

import mlc
from mlc.frontends.onnx.model import OnnxImportError
from tests.e2e.onnx.single_node import check, ort, single_node_model
from tests.gpu.targets import compile_for

rng = np.random.default_rng()
EMPTY = np.zeros(0, np.float32)


def normal(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def resize(
    target, x, attrs, *, scales=None, sizes=None, roi=EMPTY, opset=19, known=None, dynamic=False
):
    inputs = [("x", x), ("roi", roi)]
    if scales is not None:
        inputs.append(("scales", np.array(scales, np.float32)))
    else:
        inputs += [("scales", EMPTY), ("sizes", np.array(sizes, np.int64))]
    names = [name for name, _ in inputs[1:]] if known is None else known
    # dynamic: every dim of x is `?`, so the taps are computed at run time.
    check(
        "Resize",
        inputs,
        attrs,
        opset=opset,
        target=target,
        known=names,
        dynamic=("x",) if dynamic else (),
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize(
    ("mode", "coordinates", "scales", "dynamic"),
    [
        ("nearest", "half_pixel", [1, 1, 2.0, 1.5], False),
        ("nearest", "asymmetric", [1, 1, 0.6, 0.43], True),
        ("nearest", "align_corners", [1, 1, 1.7, 3.0], False),
        ("linear", "half_pixel", [1, 1, 0.6, 0.43], False),
        ("linear", "pytorch_half_pixel", [1, 1, 2.0, 0.2], True),
        ("linear", "align_corners", [1, 1, 2.0, 1.5], False),
        ("linear", "half_pixel_symmetric", [1, 1, 1.3, 0.7], True),
        ("cubic", "half_pixel", [1, 1, 2.0, 1.5], False),
        ("cubic", "asymmetric", [1, 1, 0.6, 0.43], False),
        ("cubic", "align_corners", [1, 1, 0.6, 2.5], False),
        ("cubic", "pytorch_half_pixel", [1, 1, 3.0, 0.5], False),
    ],
)
def test_modes_with_scales(target, mode, coordinates, scales, dynamic):
    attrs = {"mode": mode, "coordinate_transformation_mode": coordinates}
    resize(target, normal(2, 3, 5, 7), attrs, scales=scales, dynamic=dynamic)


@pytest.mark.parametrize("nearest", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
def test_nearest_modes_with_sizes(target, nearest):
    dynamic = nearest == "floor"
    attrs = {
        "mode": "nearest",
        "nearest_mode": nearest,
        "coordinate_transformation_mode": "half_pixel",
        "axes": [2, 3],
    }
    resize(target, normal(1, 2, 5, 6), attrs, sizes=[8, 4], dynamic=dynamic)


def test_cubic_exclude_outside_and_coefficient(target):
    attrs = {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}
    resize(target, normal(1, 1, 6, 5), attrs, scales=[1, 1, 1.5, 0.8])


@pytest.mark.parametrize("dynamic", [False, True])
def test_tf_crop_and_resize_with_extrapolation(target, dynamic):
    attrs = {
        "mode": "linear",
        "coordinate_transformation_mode": "tf_crop_and_resize",
        "extrapolation_value": 7.5,
        "axes": [2, 3],
    }
    roi = np.array([-0.2, 0.3, 0.8, 1.4], np.float32)
    resize(target, normal(1, 2, 7, 5), attrs, sizes=[4, 6], roi=roi, dynamic=dynamic)


@pytest.mark.parametrize(
    ("mode", "shape", "scales"),
    [
        ("linear", (2, 5, 9), [1, 1, 1.6]),
        ("nearest", (1, 2, 3, 4, 5), [1, 1, 2.0, 0.5, 1.4]),
        ("linear", (1, 2, 3, 4, 5), [1, 1, 1.5, 2.0, 0.6]),
    ],
)
def test_3d_and_5d(target, mode, shape, scales):
    resize(target, normal(*shape), {"mode": mode}, scales=scales)


def test_axes_and_aspect_ratio_policy(target):
    attrs = {"mode": "nearest", "axes": [3, 2], "keep_aspect_ratio_policy": "not_larger"}
    resize(target, normal(1, 2, 6, 9), attrs, sizes=[5, 7])


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialias_downscale(target, mode):
    attrs = {"mode": mode, "antialias": 1}
    resize(target, normal(1, 2, 11, 13), attrs, scales=[1, 1, 0.4, 0.3])


@pytest.mark.parametrize(("opset", "dtype"), [(13, np.float16), (11, np.uint8), (18, np.int32)])
def test_opsets_and_element_types(target, opset, dtype):
    x = rng.integers(0, 100, (2, 3, 4, 5)).astype(dtype)
    resize(target, x, {"mode": "nearest"}, scales=[1, 1, 2.0, 1.5], opset=opset)


def test_scales_given_at_run_time():
    resize("cpu", normal(1, 3, 4, 6), {"mode": "linear"}, scales=[1, 1, 1.5, 0.5], known=["roi"])


def test_dynamic_batch(target):
    x = normal(3, 2, 5, 4)
    scales = np.array([1, 1, 1.8, 2.5], np.float32)
    model = single_node_model(
        "Resize",
        [("x", x), ("roi", EMPTY), ("scales", scales)],
        {"mode": "cubic"},
        19,
        {"roi": EMPTY, "scales": scales},
        (),
    )
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "n"
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "n"
    compiled = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 3):
        feed = x[:batch]
        np.testing.assert_allclose(
            compiled(feed), session.run(None, {"x": feed})[0], rtol=1e-4, atol=1e-5
        )


@pytest.mark.parametrize(
    ("opset", "mode", "scales"),
    [
        (9, "nearest", [1, 1, 2, 3]),
        (9, "linear", [1, 1, 2.0, 1.5]),
        (10, "nearest", [1, 1, 0.5, 2]),
    ],
)
def test_upsample_and_resize_10(target, opset, mode, scales):
    op = "Upsample" if opset < 10 else "Resize"
    inputs = [("x", normal(2, 3, 4, 5)), ("scales", np.array(scales, np.float32))]
    check(op, inputs, {"mode": mode}, opset=opset, target=target, known=["scales"], rtol=1e-5)


def test_upsample_7_attribute():
    check("Upsample", [("x", normal(1, 2, 3, 4))], {"scales": [1.0, 1.0, 2.0, 2.0]}, opset=7)


def bad_model(attrs, dims=(1, 1, 4, 4)):
    scales = np.array([1, 1, 2, 2], np.float32)
    model = single_node_model(
        "Resize",
        [("x", normal(*dims)), ("roi", EMPTY), ("scales", scales)],
        attrs,
        19,
        {"roi": EMPTY, "scales": scales},
        (),
    )
    return model


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"mode": "nearest", "antialias": 1}, "antialias applies to the linear and cubic"),
        (
            {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"},
            "expects a roi",
        ),
    ],
)
def test_errors(attrs, message):
    with pytest.raises(OnnxImportError, match=message):
        mlc.compile(bad_model(attrs))


@pytest.mark.parametrize(
    "attrs",
    [
        {"mode": "linear", "antialias": 1},
        {"mode": "nearest", "keep_aspect_ratio_policy": "not_larger"},
    ],
    ids=["antialias", "keep-aspect-ratio"],
)
def test_sizes_over_a_dynamic_axis_specialise_on_its_dims(attrs):
    """The taps of antialiasing and the kept aspect ratio follow the input's size over
    the given one: the import needs it static, and the model specialises on x's dims."""
    sizes = np.array([1, 1, 2, 3], np.int64)
    model = single_node_model(
        "Resize",
        [("x", normal(1, 1, 4, 4)), ("roi", EMPTY), ("scales", EMPTY), ("sizes", sizes)],
        attrs,
        19,
        {"roi": EMPTY, "scales": EMPTY, "sizes": sizes},
        ("x",),
    )
    with pytest.raises(OnnxImportError, match=r"needs (a )?static input dim"):
        mlc.import_onnx(model)
    exe = mlc.compile(model)
    assert exe.dim_inputs == ["x"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape in [(1, 1, 4, 4), (1, 1, 5, 7)]:
        x = normal(*shape)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-5)


def test_sizes_of_unknown_length_given_at_run_time():
    """A `sizes` input whose length is `?`: onnx's strict shape inference (onnxruntime's
    too) takes it for empty and fails; the import infers leniently and specialises on
    the sizes. onnxruntime runs the model with the length given."""
    from onnx import TensorProto, helper

    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest", axes=[2, 3])
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "c", "h", "w"]),
            helper.make_tensor_value_info("sizes", TensorProto.INT64, ["k"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c", "d"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)
    exe = mlc.compile(model)
    model.graph.input[1].type.tensor_type.shape.dim[0].dim_value = 2
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape, sizes in [((1, 2, 3, 5), [6, 2]), ((2, 1, 4, 4), [3, 7])]:
        args = [normal(*shape), np.array(sizes, np.int64)]
        (want,) = session.run(None, dict(zip(["x", "sizes"], args, strict=True)))
        np.testing.assert_array_equal(exe(*args), want)

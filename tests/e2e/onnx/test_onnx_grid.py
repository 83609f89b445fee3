"""
AffineGrid and GridSample (mlc/frontends/onnx/ops/grid.py) against onnxruntime, on the
CPU and `cuda`: every mode, padding mode and align_corners, 4-d and 5-d inputs, odd
shapes, grids reaching outside the input, f64, dynamic dims, and the errors.
"""

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

import mlc
from mlc.frontends.onnx.model import OnnxImportError
from tests.e2e.onnx.single_node import check, single_node_model

rng = np.random.default_rng()


def normal(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def grid(*shape: int, reach: float = 1.3, dtype: type = np.float32) -> np.ndarray:
    """Normalised coordinates in [-reach, reach]: some fall outside the input."""
    return rng.uniform(-reach, reach, shape).astype(dtype)


@pytest.mark.parametrize(
    ("mode", "padding", "align"),
    [
        ("bilinear", "zeros", 0),
        ("bilinear", "reflection", 1),
        ("nearest", "border", 1),
        ("nearest", "reflection", 0),
        ("bicubic", "zeros", 1),
        ("bicubic", "border", 0),
    ],  # bicubic with reflection: test_grid_sample_dynamic_dims
)
def test_grid_sample_4d_opset_16(target, mode, padding, align):
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    inputs = [("x", normal(2, 3, 5, 7)), ("grid", grid(2, 4, 6, 2, reach=2.5))]
    check("GridSample", inputs, attrs, opset=16, target=target, rtol=1e-4, atol=1e-5)


# A third axis of taps; reflection is the same per-axis step at every rank (the 4-d and
# dynamic cases reflect, with align_corners 0 and 1).
@pytest.mark.parametrize(("mode", "padding"), [("linear", "zeros"), ("nearest", "border")])
def test_grid_sample_5d(target, mode, padding):
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": int(mode == "nearest")}
    inputs = [("x", normal(1, 2, 3, 4, 5)), ("grid", grid(1, 2, 3, 4, 3))]
    check("GridSample", inputs, attrs, opset=22, target=target, rtol=1e-4, atol=1e-5)


# Every dim of the input known at run time (the taps reflected and clamped against sizes
# read at run time), and for `linear` the grid's too (an output of run-time size). The
# cubic taps over a run-time output size are the linear ones, four to an axis instead of
# two, at twice the compile.
@pytest.mark.parametrize(
    ("mode", "dynamic"), [("linear", ("x", "grid")), ("cubic", ("x",))], ids=["linear", "cubic"]
)
def test_grid_sample_dynamic_dims(target, mode, dynamic):
    inputs = [("x", normal(3, 2, 6, 5)), ("grid", grid(3, 7, 3, 2))]
    attrs = {"mode": mode, "padding_mode": "reflection"}
    check("GridSample", inputs, attrs, opset=20, target=target, dynamic=dynamic, atol=1e-5)


def test_grid_sample_f64_and_one_pixel_axis():
    inputs = [
        ("x", normal(1, 2, 1, 4, dtype=np.float64)),
        ("grid", grid(1, 3, 3, 2, dtype=np.float64)),
    ]
    for padding in ("zeros", "border", "reflection"):
        attrs = {"mode": "linear", "padding_mode": padding, "align_corners": 1}
        check("GridSample", inputs, attrs, opset=20, rtol=1e-6, atol=1e-9)


def test_grid_sample_nearest_on_integers():
    # onnxruntime has no integer GridSample: onnx's reference decides.
    x = rng.integers(-50, 50, (2, 3, 4, 4)).astype(np.int32)
    g = grid(2, 5, 3, 2)
    model = single_node_model("GridSample", [("x", x), ("g", g)], {"mode": "nearest"}, 20, {}, ())
    (want,) = ReferenceEvaluator(model).run(None, {"x": x, "g": g})
    np.testing.assert_array_equal(mlc.compile(model)(x, g), want)


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("size", [[2, 3, 5, 7], [1, 2, 3, 4, 5], [3, 1, 1, 6]])
def test_affine_grid(target, size, align):
    k = len(size) - 2
    theta = normal(size[0], k, k + 1)
    inputs = [("theta", theta), ("size", np.array(size, np.int64))]
    attrs = {"align_corners": align}
    check("AffineGrid", inputs, attrs, opset=20, target=target, known=["size"], atol=1e-5)


def test_affine_grid_dynamic_batch_and_size_at_run_time():
    # The size given at run time: the compiled model specialises on it (CPU only).
    inputs = [("theta", normal(2, 2, 3)), ("size", np.array([2, 4, 6, 5], np.int64))]
    check("AffineGrid", inputs, opset=20, dynamic=("theta",), atol=1e-5)


@pytest.mark.parametrize(
    ("op", "inputs", "attrs", "known", "message"),
    [
        (
            "GridSample",
            [("x", normal(1, 1, 3, 3)), ("grid", grid(1, 2, 2, 2))],
            {"mode": "area"},
            (),
            "unsupported mode 'area'",
        ),
        (
            "GridSample",
            [("x", normal(1, 1, 3, 3)), ("grid", grid(1, 2, 2, 2))],
            {"padding_mode": "wrap"},
            (),
            "unsupported padding_mode 'wrap'",
        ),
        (
            "AffineGrid",
            [("theta", normal(2, 2, 3)), ("size", np.array([3, 1, 4, 4], np.int64))],
            {},
            ("size",),
            "theta holds 2 matrices, size asks for N = 3",
        ),
    ],
)
def test_errors(op, inputs, attrs, known, message):
    arrays = dict(inputs)
    model = single_node_model(op, inputs, attrs, 20, {k: arrays[k] for k in known}, ())
    with pytest.raises(OnnxImportError, match=message):
        mlc.compile(model)

"""
CumSum and NonZero whose scans a warp shares on `cuda` (a lane a chunk of the row, the
lanes combined by `shfl.sync.up`: mlc/lowering/gpu/loop_mapping/warp_scan.py), against
onnxruntime on both targets: every scanned dtype, exclusive and reverse, each axis, rows
shorter than a warp, odd lengths and rows many passes long, dynamic dims. Row
reductions of integers and f64, which warps share too (64-bit values shuffled as two
halves: loop_mapping/shuffles.py).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.e2e.onnx.single_node import check, ort
from tests.gpu.targets import compile_for

rng = np.random.default_rng()

DTYPES = [np.int32, np.int64, np.float32, np.float64]


def values(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check_cumsum(target, x, axis, exclusive, reverse, dynamic=()):
    floats = np.issubdtype(x.dtype, np.floating)
    # f32 sums of a long row differ from onnxruntime's serial order by rounding
    tolerance = 1e-4 * max(1.0, np.sqrt(x.shape[axis])) if floats else 0
    check(
        "CumSum",
        [("x", x), ("axis", np.array(axis, np.int64))],
        {"exclusive": exclusive, "reverse": reverse},
        opset=14,
        target=target,
        known=["axis"],
        dynamic=dynamic,
        rtol=tolerance,
        atol=tolerance,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_rows_of_every_dtype(target, dtype, exclusive, reverse):
    check_cumsum(target, values((5, 77), dtype), -1, exclusive, reverse)


@pytest.mark.parametrize(
    ("shape", "axis"),
    [
        ((3, 1), 1),  # a row of one element
        ((4, 7), 1),  # shorter than a warp
        ((2, 32), 1),  # exactly a warp
        ((3, 33), 1),  # one past a warp
        ((2, 257), 1),  # one past a pass of 8 elements a lane
        ((1, 5000), 1),  # many passes, odd
        ((6, 9, 5), 0),  # the scan axis outermost: a strided row, few rows (a warp each)
        ((40, 5000), 0),  # strided, many rows: a thread each
        ((4, 45, 3), 1),  # the middle axis
        ((4000,), 0),  # one row: a 1-D scan
    ],
)
def test_cumsum_lengths_and_axes(target, shape, axis):
    check_cumsum(target, values(shape, np.float32), axis, 0, 0)
    check_cumsum(target, values(shape, np.int64), axis, 1, 1)


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_cumsum_dynamic_dims(target, dtype):
    check_cumsum(target, values((3, 300), dtype), 1, 1, 0, dynamic=("x",))
    check_cumsum(target, values((2, 11, 70), dtype), -2, 0, 1, dynamic=("x",))


def non_zero_model(shape: tuple[int, ...], dtype: type):
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    x = helper.make_tensor_value_info("x", element, [f"d{i}" for i in range(len(shape))])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, ["r", "n"])
    graph = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"])], "nz", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize(
    ("shape", "dtype", "density"),
    [
        ((7,), np.float32, 0.5),
        ((40, 33), np.float32, 0.3),
        ((3, 5, 70), np.int64, 0.5),
        ((2048,), np.int32, 0.1),
        ((9, 8), np.float32, 0.0),  # none nonzero
        ((5, 31), np.int32, 1.0),  # all nonzero
    ],
)
def test_non_zero_positions(target, shape, dtype, density):
    model = non_zero_model(shape, dtype)
    exe = compile_for(model, target)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for _ in range(2):  # the output's size changes from call to call
        mask = rng.random(shape) < density
        x = (values(shape, dtype) * mask).astype(dtype)
        x[mask & (x == 0)] = 1
        (want,) = session.run(None, {"x": x})
        got = exe(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize(("shape", "dynamic"), [((6, 300), ()), ((5, 7), ()), ((3, 1000), ("x",))])
def test_row_reductions_of_integers_and_f64(target, dtype, op, shape, dynamic):
    x = values(shape, dtype)
    if dtype == np.int64 and op == "ReduceSum":
        x = x + np.int64(1 << 40)  # sums past 32 bits: both halves shuffled
    check(
        op,
        [("x", x), ("axes", np.array([-1], np.int64))],
        {"keepdims": 0},
        opset=18,
        target=target,
        known=["axes"],
        dynamic=dynamic,
        rtol=1e-12 if dtype == np.float64 else 0,
        atol=1e-12 if dtype == np.float64 else 0,
    )

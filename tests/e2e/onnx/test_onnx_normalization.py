"""
LpNormalization, GroupNormalization, RMSNormalization and LRN
(mlc/frontends/onnx/ops/normalization.py) against onnxruntime, on the CPU and `cuda`.
"""

import numpy as np
import pytest

from tests.e2e.onnx.single_node import check

rng = np.random.default_rng()


def normal(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize(
    ("opset", "p", "axis", "dtype", "dynamic"),
    [(13, 2, 1, np.float32, ("x",)), (22, 1, -1, np.float32, ()), (22, 2, 0, np.float64, ())],
)
def test_lp_normalization_with_a_zero_row(target, opset, p, axis, dtype, dynamic):
    x = normal(3, 5, 4, dtype=dtype)
    index = [0, 0, 0]
    index[axis] = slice(None)
    x[tuple(index)] = 0  # a zero norm gives zeros
    attrs = {"p": p, "axis": axis}
    check("LpNormalization", [("x", x)], attrs, opset=opset, target=target, dynamic=dynamic)


@pytest.mark.parametrize(
    ("shape", "groups", "dtype", "dynamic"),
    [
        ((2, 6, 5, 3), 3, np.float32, ("x",)),
        ((3, 4, 7), 2, np.float32, ()),
        ((1, 6, 5), 6, np.float16, ()),
    ],
)
def test_group_normalization(target, shape, groups, dtype, dynamic):
    channels = shape[1]
    inputs = [
        ("x", normal(*shape, dtype=dtype) * 3 + 1),
        ("scale", normal(channels, dtype=dtype)),
        ("bias", normal(channels, dtype=dtype)),
    ]
    tol = 1e-2 if dtype == np.float16 else 1e-4
    attrs = {"num_groups": groups, "epsilon": 1e-3}
    check(
        "GroupNormalization",
        inputs,
        attrs,
        opset=21,
        target=target,
        known=["scale", "bias"],
        dynamic=dynamic,
        rtol=tol,
        atol=tol,
    )


@pytest.mark.parametrize(
    ("axis", "scale_shape", "dtype", "dynamic"),
    [(-1, (6,), np.float32, ("x",)), (1, (5, 6), np.float32, ()), (-1, (6,), np.float16, ())],
)
def test_rms_normalization(target, axis, scale_shape, dtype, dynamic):
    inputs = [("x", normal(3, 5, 6, dtype=dtype)), ("scale", normal(*scale_shape, dtype=dtype))]
    tol = 1e-2 if dtype == np.float16 else 1e-4
    check(
        "RMSNormalization",
        inputs,
        {"axis": axis, "epsilon": 1e-4},
        opset=23,
        target=target,
        dynamic=dynamic,
        rtol=tol,
        atol=tol,
    )


@pytest.mark.parametrize(("size", "dynamic"), [(1, ()), (3, ("x",)), (5, ())])
def test_lrn(target, size, dynamic):
    attrs = {"size": size, "alpha": 0.01, "beta": 0.7, "bias": 1.5}
    check(
        "LRN",
        [("x", normal(2, 6, 4, 3))],
        attrs,
        opset=13,
        target=target,
        dynamic=dynamic,
        rtol=1e-4,
        atol=1e-5,
    )

"""VJP rules of convolutions and pooling against central differences, in float64."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlc.dialects import ml
from tests.unit.autodiff.vjp_cases import (
    check_vjp,
    f64_type,
    functions,
    hypothesis_settings,
    run,
    vjp_module,
)

CONVS = {1: ml.Conv1dOp, 2: ml.Conv2dOp, 3: ml.Conv3dOp}
MAX_POOLS = {1: ml.MaxPool1dOp, 2: ml.MaxPool2dOp, 3: ml.MaxPool3dOp}
AVG_POOLS = {1: ml.AvgPool1dOp, 2: ml.AvgPool2dOp, 3: ml.AvgPool3dOp}


def result(builder, op):
    return builder.insert(op).results[0]


@st.composite
def conv_case(draw, spatial):
    groups = draw(st.sampled_from([1, 2]))
    per_group_in = draw(st.integers(1, 2))
    out_channels = groups * draw(st.integers(1, 2))
    kernel = [draw(st.integers(1, 3)) for _ in range(spatial)]
    strides = [draw(st.integers(1, 3)) for _ in range(spatial)]
    dilations = [draw(st.integers(1, 2)) for _ in range(spatial)]
    pads = [draw(st.integers(0, 2)) for _ in range(2 * spatial)]
    size = []
    for i in range(spatial):
        reach = dilations[i] * (kernel[i] - 1) + 1
        size.append(draw(st.integers(max(1, reach - pads[i] - pads[spatial + i]), reach + 4)))
    batch = draw(st.integers(1, 2))
    x = (batch, groups * per_group_in, *size)
    w = (out_channels, per_group_in, *kernel)
    attrs = {"strides": strides, "dilations": dilations, "pads": pads, "groups": groups}
    return x, w, draw(st.booleans()), attrs


def check_conv(spatial, case, seed):
    x_shape, w_shape, with_bias, attrs = case
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    if with_bias:
        inputs.append(rng.standard_normal(w_shape[0]))

    def make(bld, args):
        bias = args[2] if with_bias else None
        return result(bld, CONVS[spatial](args[0], args[1], bias, **attrs))

    check_vjp(make, inputs, rtol=1e-5, atol=1e-6)


@hypothesis_settings
@given(case=conv_case(2), seed=st.integers(0, 2**16))
def test_conv2d(case, seed):
    check_conv(2, case, seed)


@hypothesis_settings
@given(case=conv_case(1), seed=st.integers(0, 2**16))
def test_conv1d(case, seed):
    check_conv(1, case, seed)


@pytest.mark.parametrize(
    "attrs",
    [
        {"strides": [2, 1, 2], "dilations": [1, 2, 1], "pads": [1, 0, 1, 0, 1, 1], "groups": 1},
        {"strides": [1, 1, 1], "dilations": [1, 1, 1], "pads": [0] * 6, "groups": 2},
    ],
)
def test_conv3d(attrs):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 4, 5, 3))
    w = rng.standard_normal((2, 2 // attrs["groups"], 2, 2, 2))
    check_vjp(lambda bld, a: result(bld, ml.Conv3dOp(a[0], a[1], **attrs)), [x, w], rtol=1e-5)


def test_depthwise_conv_with_a_pad_past_the_kernel():
    # groups == channels, and a begin pad larger than the dilated kernel's reach.
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 3, 5, 4)), rng.standard_normal((3, 1, 2, 2))
    attrs = {"strides": [2, 1], "pads": [3, 0, 0, 2], "groups": 3}
    check_vjp(lambda bld, a: result(bld, ml.Conv2dOp(a[0], a[1], **attrs)), [x, w], rtol=1e-5)


@st.composite
def pool_case(draw, spatial):
    kernel = [draw(st.integers(1, 3)) for _ in range(spatial)]
    strides = [draw(st.integers(1, 3)) for _ in range(spatial)]
    dilations = [draw(st.integers(1, 2)) for _ in range(spatial)]
    pads = [draw(st.integers(0, kernel[i % spatial] - 1)) for i in range(2 * spatial)]
    size = [
        draw(st.integers(max(1, dilations[i] * (kernel[i] - 1) + 1 - pads[i]), 6))
        for i in range(spatial)
    ]
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *size)
    return shape, {"kernel": kernel, "strides": strides, "dilations": dilations, "pads": pads}


@pytest.mark.parametrize("spatial", [1, 2])
@pytest.mark.parametrize("kind", ["max", "avg"])
@hypothesis_settings
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_pooling(spatial, kind, data, seed):
    shape, attrs = data.draw(pool_case(spatial))
    op = (MAX_POOLS if kind == "max" else AVG_POOLS)[spatial]
    # Distinct values: max pooling is differentiable there (no ties).
    x = np.random.default_rng(seed).permutation(np.prod(shape)).reshape(shape) * 0.1
    kernel = attrs.pop("kernel")
    check_vjp(lambda bld, a: result(bld, op(a[0], kernel, **attrs)), [x.astype(np.float64)])


@pytest.mark.parametrize("op", [ml.MaxPool3dOp, ml.AvgPool3dOp])
def test_pooling_3d(op):
    x = np.random.default_rng(5).permutation(3 * 4 * 5 * 2).reshape(1, 2, 3, 4, 5) * 0.1
    attrs = {"strides": [1, 2, 2], "pads": [1, 0, 1, 0, 1, 0]}
    check_vjp(lambda bld, a: result(bld, op(a[0], [2, 2, 2], **attrs)), [x])


@pytest.mark.parametrize(
    ("shape", "kernel"),
    [
        ((2, 3, 7), [2]),
        ((1, 2, 5, 7), [2, 3]),
        ((2, 1, 4, 6), [1, 2]),
        ((1, 2, 5, 4, 6), [2, 2, 3]),
    ],
)
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling_whose_windows_tile_the_input(shape, kernel, kind):
    # stride = kernel: the parts are interleaved, not placed one by one; odd sizes leave
    # rows and columns past the last window, which get zeros.
    spatial = len(kernel)
    op = (MAX_POOLS if kind == "max" else AVG_POOLS)[spatial]
    x = np.random.default_rng().permutation(np.prod(shape)).reshape(shape) * 0.1
    check_vjp(lambda bld, a: result(bld, op(a[0], kernel, strides=kernel)), [x], dynamic=[0])


def test_tiled_max_pool_routes_a_tie_to_the_first_maximum():
    module = vjp_module(
        lambda bld, a: result(bld, ml.MaxPool2dOp(a[0], [2, 2], strides=[2, 2])),
        [f64_type([1, 1, 2, 5])],
    )
    x = np.array([[[[1.0, 5.0, 3.0, 3.0, 9.0], [5.0, 0.0, 3.0, 3.0, 9.0]]]])
    ct = np.array([[[[1.0, 10.0]]]])
    (grad,) = run(functions(module)["f_vjp"], [x, ct])
    np.testing.assert_array_equal(grad, [[[[0.0, 1.0, 10.0, 0.0, 0.0], [0.0] * 5]]])


def test_max_pool_routes_a_tie_to_the_first_maximum():
    # As torch does: within a window, the first maximal element (row-major) gets it all;
    # overlapping windows each route their own cotangent.
    module = vjp_module(
        lambda bld, a: result(bld, ml.MaxPool2dOp(a[0], [2, 2], strides=[1, 1])),
        [f64_type([1, 1, 2, 3])],
    )
    x = np.array([[[[1.0, 5.0, 5.0], [5.0, 0.0, 2.0]]]])
    ct = np.array([[[[1.0, 10.0]]]])
    (grad,) = run(functions(module)["f_vjp"], [x, ct])
    np.testing.assert_array_equal(grad, [[[[0.0, 11.0, 0.0], [0.0, 0.0, 0.0]]]])


@pytest.mark.parametrize("batch", [1, 3])
def test_window_rules_with_a_dynamic_batch(batch):
    # The batch dim typed `?`: zero blocks read it at run time, reshapes infer it.
    rng = np.random.default_rng(6 + batch)
    x, w, b = (
        rng.standard_normal((batch, 2, 5, 4)),
        rng.standard_normal((4, 1, 3, 2)),
        rng.standard_normal(4),
    )
    attrs = {"strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 2, 1], "groups": 2}
    check_vjp(
        lambda bld, a: result(bld, ml.Conv2dOp(a[0], a[1], a[2], **attrs)),
        [x, w, b],
        rtol=1e-5,
        dynamic=[0],
    )
    x = rng.permutation(batch * 2 * 5 * 4).reshape(batch, 2, 5, 4) * 0.1
    pool = {"strides": [2, 1], "dilations": [1, 1], "pads": [1, 0, 1, 1]}
    for op in (ml.MaxPool2dOp, ml.AvgPool2dOp):
        check_vjp(lambda bld, a: result(bld, op(a[0], [2, 3], **pool)), [x], dynamic=[0])

"""
Tests of `mlc.shapes.nn`: matmul against numpy; convolution and pooling against a direct
count of window positions.
"""

import numpy as np
import pytest

from mlc import shapes
from tests.unit.shapes.shape_cases import D, np_shape, raises_shape_error


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((4, 8), (8, 16)),
        ((1, 1), (1, 1)),
        ((2, 3, 4), (4, 5)),
        ((4, 5), (2, 5, 6)),
        ((2, 1, 3, 4), (5, 4, 6)),
        ((7, 1, 2, 3), (1, 6, 3, 2)),
        ((0, 3), (3, 2)),
        ((2, 0), (0, 3)),
    ],
)
def test_matmul_matches_numpy(a: tuple[int, ...], b: tuple[int, ...]):
    expected = np_shape(np.matmul(np.zeros(a), np.zeros(b)))
    assert shapes.matmul(a, b) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((D, 8), (8, 16), (D, 16)),
        ((4, D), (8, 16), (4, 16)),  # a dynamic inner dim must be 8
        ((4, 8), (D, D), (4, D)),
        ((D, 3, 4, 8), (8, 2), (D, 3, 4, 2)),
        ((D, 4, 8), (3, 8, 2), (3, 4, 2)),  # ? batch against 3 is 3
        ((D, 4, 8), (1, 8, 2), (D, 4, 2)),
    ],
)
def test_matmul_dynamic(a: tuple[int, ...], b: tuple[int, ...], expected: tuple[int, ...]):
    assert shapes.matmul(a, b) == expected


def test_matmul_contracting_mismatch():
    with pytest.raises(ValueError):
        np.matmul(np.empty((2, 3, 4)), np.empty((5, 6)))
    with raises_shape_error(
        "contracting dimensions differ: lhs dimension 2 is 4, rhs dimension 0 is 5"
    ):
        shapes.matmul((2, 3, 4), (5, 6))


def test_matmul_batch_mismatch():
    with pytest.raises(ValueError):
        np.matmul(np.empty((2, 3, 4)), np.empty((3, 4, 5)))
    with raises_shape_error("batch dimensions (2) and (3) are not broadcast-compatible"):
        shapes.matmul((2, 3, 4), (3, 4, 5))


@pytest.mark.parametrize(("a", "b"), [((4,), (4, 2)), ((2, 4), (4,)), ((), ())])
def test_matmul_rank_below_two(a: tuple[int, ...], b: tuple[int, ...]):
    with raises_shape_error(f"expects operands of rank >= 2, got ranks {len(a)} and {len(b)}"):
        shapes.matmul(a, b)


def count_windows(size: int, kernel: int, stride: int, dilation: int, lo: int, hi: int) -> int:
    """Count the window starts, stepping by `stride`, whose last tap is in the padded input."""
    span = dilation * (kernel - 1) + 1
    return sum(1 for p in range(-lo, size + hi, stride) if p + span <= size + hi)


WINDOW_CASES = [
    (size, kernel, stride, dilation, lo, hi)
    for size in (1, 4, 7, 8)
    for kernel in (1, 2, 3)
    for stride in (1, 2, 3)
    for dilation in (1, 2)
    for lo in (0, 1)
    for hi in (0, 2)
    if count_windows(size, kernel, stride, dilation, lo, hi) > 0
]


@pytest.mark.parametrize(("size", "kernel", "stride", "dilation", "lo", "hi"), WINDOW_CASES)
def test_window_output_counts_positions(
    size: int, kernel: int, stride: int, dilation: int, lo: int, hi: int
):
    expected = count_windows(size, kernel, stride, dilation, lo, hi)
    assert shapes.window_output(size, kernel, stride, dilation, lo, hi) == expected


def test_window_output_dynamic():
    assert shapes.window_output(D, 3, 1, 1, 0, 0) == D
    assert shapes.window_output(8, D, 1, 1, 0, 0) == D


def test_window_output_does_not_fit():
    with raises_shape_error(
        "window of size 3 (dilation 2) does not fit an input dimension of 4 padded by (0, 0)"
    ):
        shapes.window_output(4, 3, 1, 2, 0, 0)


def test_check_window_attrs_accepts():
    shapes.check_window_attrs(2, (1, 2), (0, 1, 2, 3), (2, 1))
    shapes.check_window_attrs(2, (1, 1), (0, 0, 0, 0), (1, 1))
    shapes.check_window_attrs(1, (3,), (0, 1), (2,))
    shapes.check_window_attrs(3, (1, 2, 1), (0, 1, 2, 3, 0, 0), (2, 1, 1))


@pytest.mark.parametrize(
    ("strides", "pads", "dilations", "fragment"),
    [
        ((1,), (0, 0, 0, 0), (1, 1), "expects 2 strides, got 1"),
        ((1, 1), (0, 0, 0, 0), (1, 1, 1), "expects 2 dilations, got 3"),
        ((1, 1), (0, 0), (1, 1), "expects 4 pads (the begins, then the ends of HxW), got 2"),
        ((1, 0), (0, 0, 0, 0), (1, 1), "strides [1, 0] must be positive"),
        ((1, 1), (0, 0, 0, 0), (0, 1), "dilations [0, 1] must be positive"),
        ((1, 1), (0, -1, 0, 0), (1, 1), "pads [0, -1, 0, 0] must be non-negative"),
    ],
)
def test_check_window_attrs_errors(
    strides: tuple[int, ...], pads: tuple[int, ...], dilations: tuple[int, ...], fragment: str
):
    with raises_shape_error(fragment):
        shapes.check_window_attrs(2, strides, pads, dilations)


def conv(
    x: tuple[int, ...],
    w: tuple[int, ...],
    bias: tuple[int, ...] | None = None,
    strides: tuple[int, int] = (1, 1),
    dilations: tuple[int, int] = (1, 1),
    pads: tuple[int, int, int, int] = (0, 0, 0, 0),
    groups: int = 1,
) -> shapes.Shape:
    return shapes.conv(len(strides), x, w, bias, strides, dilations, pads, groups)


@pytest.mark.parametrize(
    ("x", "w", "strides", "pads", "expected"),
    [
        # onnx Conv's documented examples (test_basic_conv_with_padding and friends)
        ((1, 1, 5, 5), (1, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1, 5, 5)),
        ((1, 1, 5, 5), (1, 1, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1, 3, 3)),
        ((1, 1, 7, 5), (1, 1, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1, 4, 3)),
        ((1, 1, 7, 5), (1, 1, 3, 3), (2, 2), (0, 0, 0, 0), (1, 1, 3, 2)),
        ((1, 1, 7, 5), (1, 1, 3, 3), (2, 2), (1, 0, 1, 0), (1, 1, 4, 2)),
        # ResNet's stem: 7x7 stride 2 pad 3
        ((1, 3, 224, 224), (64, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 64, 112, 112)),
    ],
)
def test_conv2d_onnx_cases(
    x: tuple[int, ...],
    w: tuple[int, ...],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    expected: tuple[int, ...],
):
    assert conv(x, w, strides=strides, pads=pads) == expected


@pytest.mark.parametrize("stride", [(1, 1), (2, 3)])
@pytest.mark.parametrize("dilation", [(1, 1), (2, 1)])
@pytest.mark.parametrize("pads", [(0, 0, 0, 0), (1, 0, 2, 1)])
def test_conv2d_counts_positions(
    stride: tuple[int, int], dilation: tuple[int, int], pads: tuple[int, int, int, int]
):
    top, left, bottom, right = pads
    oh = count_windows(9, 3, stride[0], dilation[0], top, bottom)
    ow = count_windows(7, 2, stride[1], dilation[1], left, right)
    result = conv((2, 4, 9, 7), (6, 4, 3, 2), (6,), stride, dilation, pads)
    assert result == (2, 6, oh, ow)


def test_conv2d_groups():
    assert conv((1, 8, 5, 5), (4, 2, 3, 3), groups=4) == (1, 4, 3, 3)
    assert conv((1, 8, 5, 5), (8, 1, 3, 3), groups=8) == (1, 8, 3, 3)  # depthwise


def test_conv2d_dynamic():
    assert conv((D, 3, D, 8), (16, 3, 3, 3)) == (D, 16, D, 6)
    assert conv((1, D, 8, 8), (D, 3, 3, D), (16,)) == (1, D, 6, D)


@pytest.mark.parametrize(
    ("x", "w", "bias", "groups", "fragment"),
    [
        (
            (1, 3, 8),
            (16, 3, 3, 3),
            None,
            1,
            "expects a rank-4 input (NCHW) and rank-4 weights (OIHW), got ranks 3 and 4",
        ),
        ((1, 3, 8, 8), (16, 3, 3, 3), None, 0, "groups (0) must be positive"),
        (
            (1, 4, 8, 8),
            (6, 1, 3, 3),
            None,
            4,
            "output channels (6) are not divisible by groups (4)",
        ),
        (
            (1, 3, 8, 8),
            (16, 4, 3, 3),
            None,
            1,
            "input channels (3) do not match weight input channels (4) times groups (1)",
        ),
        ((1, 3, 8, 8), (16, 3, 3, 3), (16, 1), 1, "expects a rank-1 bias, got rank 2"),
        (
            (1, 3, 8, 8),
            (16, 3, 3, 3),
            (8,),
            1,
            "bias size (8) does not match the output channels (16)",
        ),
        (
            (1, 3, 2, 8),
            (16, 3, 3, 3),
            None,
            1,
            "window of size 3 (dilation 1) does not fit an input dimension of 2",
        ),
    ],
)
def test_conv2d_errors(
    x: tuple[int, ...],
    w: tuple[int, ...],
    bias: tuple[int, ...] | None,
    groups: int,
    fragment: str,
):
    with raises_shape_error(fragment):
        conv(x, w, bias, groups=groups)


def test_conv2d_checks_window_attrs():
    with raises_shape_error("strides [0, 1] must be positive"):
        conv((1, 3, 8, 8), (16, 3, 3, 3), strides=(0, 1))


def pool(
    x: tuple[int, ...],
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    pads: tuple[int, ...],
    dilations: tuple[int, ...] | None = None,
) -> shapes.Shape:
    return shapes.pool(len(kernel), x, kernel, strides, dilations or (1,) * len(kernel), pads)


@pytest.mark.parametrize(
    ("x", "kernel", "strides", "pads", "expected"),
    [
        # onnx MaxPool / AveragePool documented examples
        ((1, 3, 32, 32), (2, 2), (1, 1), (0, 0, 0, 0), (1, 3, 31, 31)),  # 2d_default
        ((1, 3, 28, 28), (3, 3), (1, 1), (2, 2, 2, 2), (1, 3, 30, 30)),  # 2d_pads
        ((1, 3, 32, 32), (5, 5), (3, 3), (0, 0, 0, 0), (1, 3, 10, 10)),  # 2d_strides
        ((1, 1, 5, 5), (5, 5), (1, 1), (2, 2, 2, 2), (1, 1, 5, 5)),  # precomputed_pads
        ((1, 1, 5, 5), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1, 3, 3)),  # precomputed_strides
        # ResNet's stem max pool: 3x3 stride 2 pad 1
        ((1, 64, 112, 112), (3, 3), (2, 2), (1, 1, 1, 1), (1, 64, 56, 56)),
    ],
)
def test_pool2d_onnx_cases(
    x: tuple[int, ...],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    pads: tuple[int, int, int, int],
    expected: tuple[int, ...],
):
    assert pool(x, kernel, strides, pads) == expected


POOL_CASES = [
    (kernel, strides, pads)
    for kernel in ((1, 1), (2, 3), (3, 2))
    for strides in ((1, 1), (2, 2), (3, 1))
    for pads in ((0, 0, 0, 0), (1, 0, 0, 1), (1, 2, 1, 2))
    # pool2d requires each pad to be smaller than the kernel
    if max(pads[0], pads[2]) < kernel[0] and max(pads[1], pads[3]) < kernel[1]
]


@pytest.mark.parametrize(("kernel", "strides", "pads"), POOL_CASES)
def test_pool2d_counts_positions(
    kernel: tuple[int, int], strides: tuple[int, int], pads: tuple[int, int, int, int]
):
    top, left, bottom, right = pads
    oh = count_windows(8, kernel[0], strides[0], 1, top, bottom)
    ow = count_windows(5, kernel[1], strides[1], 1, left, right)
    assert pool((2, 3, 8, 5), kernel, strides, pads) == (2, 3, oh, ow)


def test_pool2d_dynamic():
    assert pool((D, D, D, 8), (2, 2), (2, 2), (0, 0, 0, 0)) == (D, D, D, 4)


def test_pool_1d_and_3d():
    assert pool((1, 3, 9), (3,), (2,), (1, 1)) == (1, 3, 5)
    assert pool((1, 3, 8, 8, 8), (2, 2, 2), (2, 2, 2), (0,) * 6) == (1, 3, 4, 4, 4)
    assert pool((1, 3, D, 8, 5), (3, 2, 1), (1, 2, 1), (1, 0, 0, 1, 1, 0)) == (1, 3, D, 4, 5)


def test_pool_dilations():
    # onnx test_maxpool_2d_dilations: 4x4, kernel 2, dilation 2 -> 2x2
    assert pool((1, 1, 4, 4), (2, 2), (1, 1), (0, 0, 0, 0), (2, 2)) == (1, 1, 2, 2)
    oh = count_windows(9, 3, 2, 3, 2, 1)
    assert pool((1, 1, 9, 9), (3, 3), (2, 2), (2, 0, 1, 0), (3, 1))[2] == oh
    # a pad may reach up to the dilated kernel's extent
    with raises_shape_error("must be smaller than the kernel [2, 2] dilated by [2, 1]"):
        pool((1, 1, 8, 8), (2, 2), (1, 1), (0, 0, 3, 0), (2, 1))


def test_conv_1d_and_3d():
    assert shapes.conv(1, (1, 3, 9), (4, 3, 3), None, (2,), (1,), (1, 1), 1) == (1, 4, 5)
    result = shapes.conv(
        3, (2, 4, 5, 6, 7), (8, 2, 3, 3, 3), (8,), (1, 2, 1), (1, 1, 2), (1,) * 6, 2
    )
    assert result == (2, 8, 5, 3, 5)
    with raises_shape_error("expects a rank-5 input (NCDHW) and rank-5 weights (OIDHW)"):
        shapes.conv(3, (1, 3, 8, 8), (4, 3, 3, 3), None, (1,) * 3, (1,) * 3, (0,) * 6, 1)


@pytest.mark.parametrize(
    ("x", "kernel", "strides", "pads", "fragment"),
    [
        ((1, 3, 8, 8), (2,), (1, 1), (0, 0, 0, 0), "expects 2 kernel sizes, got 1"),
        ((1, 3, 8, 8), (2, 0), (1, 1), (0, 0, 0, 0), "kernel [2, 0] must be positive"),
        ((1, 8, 8), (2, 2), (1, 1), (0, 0, 0, 0), "expects a rank-4 input (NCHW), got rank 3"),
        (
            (1, 3, 8, 8),
            (2, 2),
            (1, 1),
            (0, 0, 2, 0),
            "pads [0, 0, 2, 0] must be smaller than the kernel [2, 2]",
        ),
        ((1, 3, 8, 8), (2, 2), (1,), (0, 0, 0, 0), "expects 2 strides, got 1"),
        (
            (1, 3, 1, 8),
            (2, 2),
            (1, 1),
            (0, 0, 0, 0),
            "window of size 2 (dilation 1) does not fit an input dimension of 1",
        ),
    ],
)
def test_pool2d_errors(
    x: tuple[int, ...],
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    pads: tuple[int, ...],
    fragment: str,
):
    with raises_shape_error(fragment):
        shapes.pool(2, x, kernel, strides, (1, 1), pads)

"""
Depthwise convolutions whose padding and bias the CPU kernel absorbs
(`mlc.lowering.cpu.depthwise_loops`, `mlc.lowering.linalg.absorbed_padding`), against
onnxruntime on fresh random inputs, the image computed by an op before the convolution
(so that its buffer is freed after the padded copy, as in every real CNN), the bias a
constant or computed too: kernels of 3, 5 and 7 at strides 1 and 2, pads 0 to k // 2
on each side independently, images of 1 to 17 rows and columns, channel counts that are
not a multiple of the vector width, with a relu, hard-swish, sigmoid or clip after or none,
batches 1 and 3.

Each model holds several convolutions side by side, one compile for all of them. The
quick model covers each feature once; `MLC_TEST_DEPTHWISE=all` adds a model of eight
convolutions per kernel size (about 4 s each).
"""

import os

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import mlc

ort = pytest.importorskip("onnxruntime")

ACTS = (None, "Relu", "HardSwish", "Sigmoid", "Clip")
PRES = ("HardSwish", "Relu", "Sigmoid")
BIASES = ("constant", None, "computed")

# kernel, channels, height, width, stride, pads (top, left, bottom, right)
QUICK = [
    (3, 13, 1, 17, 2, (1, 0, 1, 1)),  # one row; an odd row at stride 2, one pad wide
    (5, 9, 17, 9, 2, (2, 2, 2, 2)),  # MobileNetV3's 5x5 at stride 2
    (7, 5, 6, 16, 1, (3, 1, 2, 3)),  # wider than the image is high
    (3, 16, 8, 8, 1, (0, 1, 1, 0)),
]

# Output rows as wide as the image at stride 1, or of 2, 4 or 8 pixels at stride 2, 64
# pixels or fewer: swept as flat images (`depthwise_vectors.vector_images`), the pixels
# of a block spanning several rows.
IMAGES = [
    (3, 13, 4, 4, 1, (1, 1, 1, 1)),  # one vector (16 lanes) per channel
    (3, 7, 2, 2, 1, (1, 1, 1, 1)),  # 4 pixels: a 4-lane vector
    (5, 9, 8, 8, 1, (2, 2, 2, 2)),  # four vectors, two rows of taps off each edge
    (3, 5, 3, 5, 1, (0, 1, 2, 1)),  # padding below only, rows of 5 across vectors
    (3, 11, 1, 1, 1, (1, 1, 1, 1)),  # one pixel: the centre tap only
    (7, 3, 7, 9, 1, (3, 3, 3, 3)),  # 63 pixels, taps past whole rows
    (3, 13, 16, 16, 2, (1, 1, 1, 1)),  # stride 2: blocks of two 8-wide rows, 16 lanes
    (5, 9, 8, 8, 2, (2, 2, 2, 2)),  # EfficientNet's 5x5 at stride 2: 4x4 out, 8 lanes
    (3, 7, 7, 7, 2, (1, 1, 1, 1)),  # an odd image: 4x4 out
    (3, 5, 4, 4, 2, (0, 0, 1, 1)),  # padding after only: 2x2 out, 4 lanes
    (3, 3, 5, 8, 2, (1, 1, 1, 1)),  # 3 output rows: the last block's second row is empty
]


def spread(kernel: int) -> list[tuple]:
    """Eight convolutions of `kernel`: a fixed spread of the sizes and pads of the
    module docstring (the same each run)."""
    pick = np.random.default_rng(kernel)
    sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17]
    out = []
    for i in range(8):
        height, width = sizes[(3 * i) % len(sizes)], sizes[(5 * i + 7) % len(sizes)]
        top, left, bottom, right = (int(p) for p in pick.integers(0, kernel // 2 + 1, 4))
        if height + top + bottom < kernel:
            top = bottom = kernel // 2
        if width + left + right < kernel:
            left = right = kernel // 2
        channels = (3, 5, 9, 13, 16, 7, 1, 11)[i]
        out.append((kernel, channels, height, width, 1 + i % 2, (top, left, bottom, right)))
    return out


def side_by_side(convs: list[tuple], dtype=np.float32):
    """One model of `convs` side by side, the i-th `PRES[i](x_i) -> Conv -> ACTS[i]`,
    its bias `BIASES[i]` (a computed one is a graph input through Abs), dynamic batch."""
    rng = np.random.default_rng()
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes, inits, inputs, outputs = [], [], [], []
    for i, (kernel, channels, height, width, stride, pads) in enumerate(convs):
        weight = rng.standard_normal((channels, 1, kernel, kernel)).astype(dtype)
        inits.append(numpy_helper.from_array(weight, f"w{i}"))
        image = helper.make_tensor_value_info(f"x{i}", element, ["n", channels, height, width])
        inputs.append(image)
        nodes.append(helper.make_node(PRES[i % len(PRES)], [f"x{i}"], [f"p{i}"]))
        conv_in = [f"p{i}", f"w{i}"]
        bias = BIASES[i % len(BIASES)]
        if bias == "computed":
            inputs.append(helper.make_tensor_value_info(f"b{i}", element, [channels]))
            nodes.append(helper.make_node("Abs", [f"b{i}"], [f"a{i}"]))
            conv_in.append(f"a{i}")
        elif bias == "constant":
            values = rng.standard_normal(channels).astype(dtype)
            inits.append(numpy_helper.from_array(values, f"b{i}"))
            conv_in.append(f"b{i}")
        attrs = dict(kernel_shape=[kernel, kernel], strides=[stride, stride], pads=list(pads))
        nodes.append(helper.make_node("Conv", conv_in, [f"c{i}"], group=channels, **attrs))
        out, act = f"c{i}", ACTS[i % len(ACTS)]
        if act == "Clip":  # its bounds are inputs of the fused epilogue
            bounds = [
                numpy_helper.from_array(np.array(v, dtype), f"{k}{i}")
                for k, v in (("lo", 0), ("hi", 1))
            ]
            inits += bounds
            nodes.append(helper.make_node(act, [f"c{i}", f"lo{i}", f"hi{i}"], [f"y{i}"]))
            out = f"y{i}"
        elif act is not None:
            nodes.append(helper.make_node(act, [f"c{i}"], [f"y{i}"]))
            out = f"y{i}"
        rows = (height + pads[0] + pads[2] - kernel) // stride + 1
        columns = (width + pads[1] + pads[3] - kernel) // stride + 1
        outputs.append(helper.make_tensor_value_info(out, element, ["n", channels, rows, columns]))
    graph = helper.make_graph(nodes, "depthwise", inputs, outputs, inits)
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8
    )  # onnxruntime reads IR 8


def check(model, dtype=np.float32, batches=(1, 3)):
    exe = mlc.compile(model)
    session = ort.InferenceSession(model.SerializeToString())
    rng = np.random.default_rng()
    for batch in batches:
        feeds = {}
        for value in model.graph.input:
            dims = [d.dim_value or batch for d in value.type.tensor_type.shape.dim]
            feeds[value.name] = (2 * rng.standard_normal(dims)).astype(dtype)
        want = session.run(None, feeds)
        got = exe(*feeds.values())
        got = got if isinstance(got, tuple) else (got,)
        for g, w, out in zip(got, want, model.graph.output, strict=True):
            assert g.shape == w.shape, out.name
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=out.name)


def test_depthwise_borders_match_onnxruntime():
    check(side_by_side(QUICK))


def as_float32(model):
    """`model` (float64) with its weights and values float32, for onnxruntime."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for init in copy.graph.initializer:
        init.CopyFrom(
            numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float32), init.name)
        )
    for value in [*copy.graph.input, *copy.graph.output]:
        value.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    return copy


def test_depthwise_images_match_onnxruntime():
    check(side_by_side(IMAGES), batches=(1, 8))


def test_depthwise_images_float64():
    """8 lanes a vector, so other blocks: against onnxruntime on the float32 model."""
    model = side_by_side(IMAGES, np.float64)
    exe = mlc.compile(model)
    session = ort.InferenceSession(as_float32(model).SerializeToString())
    rng = np.random.default_rng()
    feeds = {}
    for value in model.graph.input:
        dims = [d.dim_value or 8 for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.standard_normal(dims)
    want = session.run(None, {k: v.astype(np.float32) for k, v in feeds.items()})
    for got, expected in zip(exe(*feeds.values()), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3)


@pytest.mark.skipif(
    os.environ.get("MLC_TEST_DEPTHWISE") != "all", reason="MLC_TEST_DEPTHWISE=all runs these"
)
@pytest.mark.parametrize("kernel", [3, 5, 7])
def test_depthwise_border_spread_matches_onnxruntime(kernel):
    check(side_by_side(spread(kernel)))

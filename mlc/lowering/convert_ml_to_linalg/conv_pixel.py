"""
A convolution with few output pixels per image, each reading most of it, is a matmul
over the batch.

The last convolutions of a CIFAR-sized CNN see 2x2 and 1x1 images (ResNet's layer3 and
layer4, MobileNet's last blocks, every squeeze-and-excitation conv). As an implicit
GEMM per image (`mlc.lowering.cpu.conv_gemm`), each of these is output channels x 1
to 4 pixels: one vector column of which a few lanes are used, repeated per image, the
weights read once per image. Where each output pixel's window sees most of the
(padded) image,

    y[n, f, p] = sum over (c, i...) of x[n, c, i...] * W'[(c, i...), (f, p)]

with `W'[(c, i...), (f, p)] = W[f, c, (i + pad - p * stride) / dilation...]` where that
tap exists and 0 where no tap of output pixel `p` reads pixel `i` (a tap over padding
reads zeros and drops out). That is `X[N, C*H*W] @ W'[C*H*W, O*P]`, whose result is y
laid out as (N, O, P...): M = the batch, N = the output channels and pixels, the
weights a constant B whose panels `linalg-tile` packs at compile time
(`mlc.lowering.cpu.constant_panels`). With one output pixel the bias is the matmul's
start; with more, an add after it.

Taken when the weights are a constant numpy holds, groups are 1, the image and the
weights are static and the output pixels' windows read at least half of W' (the
other rows of each column cost FMAs of zeros): a 2x2 output of a 3x3 window padded
by 1 reads all of a 2x2 image, a 4x4 output 39% of a 4x4 one.
"""

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseResourceAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc import resources, shapes
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    dim_value,
    empty_like_result,
    fill,
    iterator_types,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.contraction import multiply_add
from mlc.lowering.convert_ml_to_linalg.conv_bias import bias_added
from mlc.lowering.convert_ml_to_linalg.movement import reassociation, size_of
from mlc.lowering.graph.patterns.fold import constant_array
from mlc.lowering.support.locations import keep_location

MAX_GROWTH = 4  # W' may hold at most this many times the weights' elements


def pixel_weight(
    weight: np.ndarray,
    image: tuple[int, ...],
    pads: tuple[int, ...],
    dilations: tuple[int, ...],
    output: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
) -> np.ndarray | None:
    """
    `W'` (module docstring) as a contiguous (C * prod(image), O * P) array, or None
    when the windows read fewer than half of its rows or it would hold more than
    `MAX_GROWTH` times the weights. `output` is the output's (sizes, strides); None:
    one pixel.
    """
    sizes, strides = output or ((1,) * len(image), (1,) * len(image))
    pixels, taps, area = (int(np.prod(shape)) for shape in (sizes, weight.shape[2:], image))
    # A window reads at most `taps` pixels, and W' is `area * pixels / taps` times the
    # weights: a stem (7x7 taps of a 224x224 image, 112x112 outputs) is neither.
    if 2 * taps < area or area * pixels > MAX_GROWTH * taps:
        return None
    columns, read = [], 0
    for pixel in np.ndindex(*sizes):
        out, pixels = np.asarray(weight), 1
        for d, (size, pad, dilation) in enumerate(zip(image, pads, dilations, strict=True)):
            position = np.arange(size) + pad - pixel[d] * strides[d]
            tap = position // dilation
            valid = (position >= 0) & (position % dilation == 0) & (tap < out.shape[2 + d])
            pixels *= int(valid.sum())
            taken = np.take(out, np.where(valid, tap, 0), axis=2 + d)
            mask = valid.reshape((1,) * (2 + d) + (size,) + (1,) * (len(image) - d - 1))
            out = np.where(mask, taken, np.zeros((), out.dtype))
        read += pixels
        columns.append(out.reshape(out.shape[0], -1).T)
    if 2 * read < int(np.prod(image)) * len(columns):
        return None
    return np.ascontiguousarray(np.stack(columns, axis=-1).reshape(columns[0].shape[0], -1))


def pixel_matmul_weight(op: ml.ConvOp) -> np.ndarray | None:
    """`op`'s `W'` if `op` is a convolution this module lowers, else None."""
    x_shape = tensor_type(op.x).get_shape()
    y_shape = tensor_type(op.result).get_shape()
    spatial = op.SPATIAL
    if op.groups.value.data != 1 or not all(shapes.is_static(d) for d in y_shape[1:]):
        return None
    if not all(shapes.is_static(d) for d in x_shape[1:]):
        return None
    weight = constant_array(op.w)
    if weight is None or not np.issubdtype(weight.dtype, np.floating):
        return None
    pads = tuple(op.pads.get_values()[:spatial])
    output = (tuple(y_shape[2:]), tuple(op.strides.get_values()))
    dilations = tuple(op.dilations.get_values())
    return pixel_weight(weight, tuple(x_shape[2:]), pads, dilations, output)


def weight_stem(value: SSAValue) -> str:
    """The name `W'` is stored under: the weight resource's, less its digest."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseResourceAttr):
        return op.value.resource_handle.data.rsplit("_", 1)[0]
    return "conv"


def pixel_init(rewriter: PatternRewriter, op: ml.ConvOp, columns: int) -> SSAValue:
    """The (N, O * P) matmul's start: with one pixel, the bias broadcast along the
    batch; else zeros."""
    result_type = tensor_type(op.result)
    flat_type = TensorType(result_type.element_type, [result_type.get_shape()[0], columns])
    dims = [
        dim_value(rewriter, op.x, 0) if not shapes.is_static(flat_type.get_shape()[0]) else None
    ]
    if op.bias is None or columns != result_type.get_shape()[1]:
        return fill(rewriter, flat_type, [*dims, None], 0.0)
    empty = empty_like_result(rewriter, flat_type, [*dims, None])
    maps = [AffineMap(2, 0, (AffineExpr.dimension(1),)), AffineMap.identity(2)]
    (filled,) = build_generic(rewriter, [op.bias], [empty], maps, iterator_types(2), lambda a: a[0])
    return filled


def lower_pixel_conv(rewriter: PatternRewriter, op: ml.ConvOp, weight: np.ndarray) -> SSAValue:
    """The matmul `X @ W'` into the bias or zeros, expanded to `op`'s (N, O, P...), and
    the bias added there if the matmul did not start from it."""
    spatial = op.SPATIAL
    x_type = tensor_type(op.x)
    init = pixel_init(rewriter, op, weight.shape[1])
    flat_type = TensorType(x_type.element_type, [x_type.get_shape()[0], weight.shape[0]])
    collapse = tensor.CollapseShapeOp.build(
        operands=[op.x],
        result_types=[flat_type],
        properties={"reassociation": reassociation([[0], list(range(1, spatial + 2))])},
    )
    x = rewriter.insert(collapse).result
    attr = resources.elements_attr(weight, f"{weight_stem(op.w)}.pixel")
    w = rewriter.insert(arith.ConstantOp(attr, attr.type)).result  # pyright: ignore[reportArgumentType]
    n, k, f = (AffineExpr.dimension(i) for i in range(3))
    maps = [AffineMap(3, 0, (n, k)), AffineMap(3, 0, (k, f)), AffineMap(3, 0, (n, f))]
    (flat,) = build_generic(
        rewriter, [x, w], [init], maps, iterator_types(3, [1]), lambda a: multiply_add(*a)
    )
    result_type = tensor_type(op.result)
    batch = size_of(rewriter, op.x, 0)
    expand = tensor.ExpandShapeOp(
        flat,
        [batch] if isinstance(batch, SSAValue) else [],
        reassociation([[0], list(range(1, spatial + 2))]),
        result_type.get_shape(),
        result_type,
    )
    result = rewriter.insert(expand).result
    if op.bias is not None and weight.shape[1] != result_type.get_shape()[1]:
        sizes = [batch, *result_type.get_shape()[1:]]
        result = bias_added(rewriter, op, result, sizes)
    return result


class LowerPixelConv(RewritePattern):
    """`ml.conv*d` of few output pixels per image to a matmul (module docstring); the
    others are left to `conv.LowerConv`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ConvOp, rewriter: PatternRewriter, /) -> None:
        if (weight := pixel_matmul_weight(op)) is None:
            return
        with keep_location(rewriter, op):
            result = lower_pixel_conv(rewriter, op, weight)
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerPixelConv()]

"""
A convolution with one output pixel per image is a matmul over the batch.

The last convolutions of a CIFAR-sized CNN see 2x2 and 1x1 images (ResNet's layer4,
MobileNet's last blocks, every squeeze-and-excitation conv). As an implicit GEMM per
image (`mlc.lowering.cpu.conv_gemm`), each of these is output channels x 1 pixel:
one vector column of which a lane is used, repeated per image, the weights read once
per image. With one output pixel the window sees the whole (padded) image once, so

    y[n, f, 0...] = sum over (c, i...) of x[n, c, i...] * W'[(c, i...), f]

with `W'[(c, i...), f] = W[f, c, (i + pad) / dilation...]` where that tap exists and
0 where no tap reads pixel `i` (a tap over padding reads zeros and drops out). That is
`X[N, C*H*W] @ W'[C*H*W, O]`: M = the batch, N = the output channels, the weights a
constant B whose panels `linalg-tile` packs at compile time
(`mlc.lowering.cpu.constant_panels`).

Taken when the weights are a constant numpy holds, groups are 1, the image and the
weights are static and the output pixel's window reads at least half of the image's
pixels (the others cost zero rows of W').
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
from mlc.lowering.convert_ml_to_linalg.movement import reassociation, size_of
from mlc.lowering.graph.patterns.fold import constant_array
from mlc.lowering.support.locations import keep_location


def pixel_weight(
    weight: np.ndarray, image: tuple[int, ...], pads: tuple[int, ...], dilations: tuple[int, ...]
) -> np.ndarray | None:
    """
    `W'` (module docstring) as a contiguous (C * prod(image), O) array, or None when
    the window reads fewer than half of the image's pixels.
    """
    out = np.asarray(weight)
    read = 1
    for d, (size, pad, dilation) in enumerate(zip(image, pads, dilations, strict=True)):
        position = np.arange(size) + pad
        tap = position // dilation
        valid = (position % dilation == 0) & (tap < out.shape[2 + d])
        read *= int(valid.sum())
        taken = np.take(out, np.where(valid, tap, 0), axis=2 + d)
        mask = valid.reshape((1,) * (2 + d) + (size,) + (1,) * (len(image) - d - 1))
        out = np.where(mask, taken, np.zeros((), out.dtype))
    if 2 * read < int(np.prod(image)):
        return None
    return np.ascontiguousarray(out.reshape(out.shape[0], -1).T)


def pixel_matmul_weight(op: ml.ConvOp) -> np.ndarray | None:
    """`op`'s `W'` if `op` is a convolution this module lowers, else None."""
    x_shape = tensor_type(op.x).get_shape()
    y_shape = tensor_type(op.result).get_shape()
    spatial = op.SPATIAL
    if op.groups.value.data != 1 or any(d != 1 for d in y_shape[2:]):
        return None
    if not all(shapes.is_static(d) for d in x_shape[1:]):
        return None
    weight = constant_array(op.w)
    if weight is None or not np.issubdtype(weight.dtype, np.floating):
        return None
    pads = tuple(op.pads.get_values()[:spatial])
    return pixel_weight(weight, tuple(x_shape[2:]), pads, tuple(op.dilations.get_values()))


def weight_stem(value: SSAValue) -> str:
    """The name `W'` is stored under: the weight resource's, less its digest."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseResourceAttr):
        return op.value.resource_handle.data.rsplit("_", 1)[0]
    return "conv"


def pixel_init(rewriter: PatternRewriter, op: ml.ConvOp) -> SSAValue:
    """The (N, O) matmul's start: the bias broadcast along the batch, or zeros."""
    result_type = tensor_type(op.result)
    flat_type = TensorType(result_type.element_type, result_type.get_shape()[:2])
    dims = [
        dim_value(rewriter, op.x, 0) if not shapes.is_static(flat_type.get_shape()[0]) else None
    ]
    if op.bias is None:
        return fill(rewriter, flat_type, [*dims, None], 0.0)
    empty = empty_like_result(rewriter, flat_type, [*dims, None])
    maps = [AffineMap(2, 0, (AffineExpr.dimension(1),)), AffineMap.identity(2)]
    (filled,) = build_generic(rewriter, [op.bias], [empty], maps, iterator_types(2), lambda a: a[0])
    return filled


def lower_pixel_conv(rewriter: PatternRewriter, op: ml.ConvOp, weight: np.ndarray) -> SSAValue:
    """The matmul `X @ W'` into the bias or zeros, expanded to `op`'s (N, O, 1...)."""
    spatial = op.SPATIAL
    x_type = tensor_type(op.x)
    init = pixel_init(rewriter, op)
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
    return rewriter.insert(expand).result


class LowerPixelConv(RewritePattern):
    """`ml.conv*d` of one output pixel per image to a matmul (module docstring); the
    others are left to `conv.LowerConv`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ConvOp, rewriter: PatternRewriter, /) -> None:
        if (weight := pixel_matmul_weight(op)) is None:
            return
        with keep_location(rewriter, op):
            result = lower_pixel_conv(rewriter, op, weight)
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerPixelConv()]

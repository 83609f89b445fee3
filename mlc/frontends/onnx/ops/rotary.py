"""
The converter of onnx's RotaryEmbedding (opset 23), composed of `ml` ops.

The input is `(B, heads, S, D)`, or `(B, S, heads * D)` with `num_heads`. The first
`rotary_embedding_dim` (R, default D) features of each head rotate by the angles whose
cosines and sines the caches hold, `(B, S, R / 2)` or, with `position_ids` `(B, S)`,
gathered from caches `(positions, R / 2)`: as pairs `(x[i], x[i + R/2])`, or with
`interleaved` `(x[2i], x[2i + 1])`, each becoming
`(cos * x1 - sin * x2, sin * x1 + cos * x2)`. The other features pass unchanged.
"""

from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.build import Size, is_float, reshape_to, shape_of, sizes
from mlc.frontends.onnx.ops.padding import slice_along
from mlc.frontends.onnx.ops.table import converts


def heads_layout(node: Node, x: SSAValue) -> tuple[SSAValue, list[Size], int]:
    """`x` as `(B, heads, S, D)` or `(B, S, heads, D)`, its dims, and the axis of S."""
    shape = shape_of(x)
    if len(shape) == 4:
        return x, sizes(node, x), 2
    if len(shape) != 3:
        raise node.error(f"expects a 3-d or 4-d input, got rank {len(shape)}")
    heads = int(node.attr("num_heads", 0))
    if heads <= 0:
        raise node.error("a 3-d input needs num_heads")
    hidden = shape[2]
    if hidden < 0:
        raise node.error("a 3-d input needs a static hidden size")
    if hidden % heads:
        raise node.error(f"hidden size {hidden} is not a multiple of num_heads {heads}")
    dims = sizes(node, x)
    split = [dims[0], dims[1], heads, hidden // heads]
    return reshape_to(node, x, split), split, 1


def angles(node: Node, half: int) -> tuple[SSAValue, SSAValue]:
    """The cosines and sines, `(B, S, R / 2)`."""
    cos, sin = node.input(1), node.input(2)
    if node.has(3):
        ids = node.input(3)
        cos = node.emit(ml.GatherOp(cos, ids, 0))
        sin = node.emit(ml.GatherOp(sin, ids, 0))
    for cache in (cos, sin):
        shape = shape_of(cache)
        if len(shape) != 3:
            raise node.error(f"expects caches giving (B, S, R/2), got rank {len(shape)}")
        if shape[-1] not in (half, -1):
            raise node.error(f"expects caches of last dim {half} (R / 2), got {shape[-1]}")
    return cos, sin


@converts("RotaryEmbedding", since=23)
def rotary_embedding(node: Node) -> Sequence[Value]:
    x = node.input(0)
    if not is_float(x):
        raise node.error("expects a floating-point input")
    heads, dims, seq_axis = heads_layout(node, x)
    head = shape_of(heads)[3]
    if head < 0:
        raise node.error("needs a static head size")
    rotary = int(node.attr("rotary_embedding_dim", 0)) or head
    if rotary % 2 or rotary > head:
        raise node.error(f"rotary_embedding_dim {rotary} must be even and at most {head}")
    half = rotary // 2
    cos, sin = angles(node, half)
    # (B, S, R/2) broadcast against the heads: a 1 on the heads' axis.
    head_axis = 1 if seq_axis == 2 else 2
    along = [dims[0], 1, dims[seq_axis], half] if head_axis == 1 else [dims[0], dims[1], 1, half]
    cos, sin = reshape_to(node, cos, along), reshape_to(node, sin, along)
    if node.attr("interleaved", 0):
        x1 = slice_along(node, heads, 3, 0, rotary, 2)
        x2 = slice_along(node, heads, 3, 1, rotary, 2)
    else:
        x1, x2 = slice_along(node, heads, 3, 0, half), slice_along(node, heads, 3, half, rotary)
    real = node.emit(ml.SubOp(node.emit(ml.MulOp(cos, x1)), node.emit(ml.MulOp(sin, x2))))
    imag = node.emit(ml.AddOp(node.emit(ml.MulOp(sin, x1)), node.emit(ml.MulOp(cos, x2))))
    if node.attr("interleaved", 0):
        lead = [*dims[:3], half, 1]
        pairs = [reshape_to(node, v, lead) for v in (real, imag)]
        both = node.emit(ml.ConcatOp(pairs, 4))
        rotated = reshape_to(node, both, [*lead[:3], rotary])
    else:
        rotated = node.emit(ml.ConcatOp([real, imag], 3))
    if rotary < head:
        rotated = node.emit(ml.ConcatOp([rotated, slice_along(node, heads, 3, rotary, head)], 3))
    return [reshape_to(node, rotated, sizes(node, x)) if seq_axis == 1 else rotated]

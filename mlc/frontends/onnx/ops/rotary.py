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
from mlc.frontends.onnx.ops.build import Size, SizeCalc, is_float, reshape_to, shape_of, sizes
from mlc.frontends.onnx.ops.padding import INT64_MAX, slice_along, slice_at_run_time
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
    if 0 <= shape[2] and shape[2] % heads:
        raise node.error(f"hidden size {shape[2]} is not a multiple of num_heads {heads}")
    dims = sizes(node, x)
    split = [dims[0], dims[1], heads, SizeCalc(node).floordiv(dims[2], heads)]
    return reshape_to(node, x, split), split, 1


def angles(node: Node, half: Size) -> tuple[SSAValue, SSAValue]:
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
        if isinstance(half, int) and 0 <= shape[-1] != half:
            raise node.error(f"expects caches of last dim {half} (R / 2), got {shape[-1]}")
    return cos, sin


def halves(node: Node, heads: SSAValue, rotary: Size, half: Size) -> tuple[SSAValue, SSAValue]:
    """The two features of each rotated pair: the halves, or (interleaved) even and odd."""
    if node.attr("interleaved", 0):
        end = rotary if isinstance(rotary, int) else INT64_MAX  # dynamic: the whole head
        return slice_along(node, heads, 3, 0, end, 2), slice_along(node, heads, 3, 1, end, 2)
    if isinstance(half, int) and isinstance(rotary, int):
        return slice_along(node, heads, 3, 0, half), slice_along(node, heads, 3, half, rotary)
    return (
        slice_at_run_time(node, heads, 3, 0, half),
        slice_at_run_time(node, heads, 3, half, rotary),
    )


@converts("RotaryEmbedding", since=23)
def rotary_embedding(node: Node) -> Sequence[Value]:
    x = node.input(0)
    if not is_float(x):
        raise node.error("expects a floating-point input")
    heads, dims, seq_axis = heads_layout(node, x)
    head = dims[3]
    given = int(node.attr("rotary_embedding_dim", 0))
    rotary: Size = given or head
    if given % 2 or (given and isinstance(head, int) and given > head):
        raise node.error(f"rotary_embedding_dim {given} must be even and at most {head}")
    partial = given and not (isinstance(head, int) and given == head)
    half = SizeCalc(node).floordiv(rotary, 2)
    cos, sin = angles(node, half)
    # (B, S, R/2) broadcast against the heads: a 1 on the heads' axis.
    along = [dims[0], 1, dims[2], half] if seq_axis == 2 else [dims[0], dims[1], 1, half]
    cos, sin = reshape_to(node, cos, along), reshape_to(node, sin, along)
    x1, x2 = halves(node, heads, rotary, half)
    real = node.emit(ml.SubOp(node.emit(ml.MulOp(cos, x1)), node.emit(ml.MulOp(sin, x2))))
    imag = node.emit(ml.AddOp(node.emit(ml.MulOp(sin, x1)), node.emit(ml.MulOp(cos, x2))))
    if node.attr("interleaved", 0):
        lead = [*dims[:3], half, 1]
        pairs = [reshape_to(node, v, lead) for v in (real, imag)]
        rotated = reshape_to(node, node.emit(ml.ConcatOp(pairs, 4)), [*dims[:3], rotary])
    else:
        rotated = node.emit(ml.ConcatOp([real, imag], 3))
    if partial:
        rest = slice_along(node, heads, 3, rotary, INT64_MAX)
        rotated = node.emit(ml.ConcatOp([rotated, rest], 3))
    return [reshape_to(node, rotated, sizes(node, x)) if seq_axis == 1 else rotated]

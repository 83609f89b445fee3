"""
ONNX Attention (opset 23) onto `ml.attention`.

4-D inputs are `(B, heads, seq, head_size)`; 3-D ones `(B, seq, heads * head_size)` are
split into heads by `q_num_heads` / `kv_num_heads` and the output merged back. A past
K/V cache is concatenated before the new keys (`present_key`, `present_value`); then
`is_causal` is ONNX's band `j <= i + past` (top-left without a cache), which is
`ml.attention`'s bottom-right band where the new keys are as many as the queries. A
fully masked row is 0 (ONNX's convention; `ml.attention` gives NaN, which is replaced).
What `ml.attention` does not take (`softcap`, the `qk_matmul_output` output,
`nonpad_kv_seqlen`, `is_causal` where the query and new key lengths may differ, sliding
windows, `softmax_precision`) is written out in `ml` ops (`attention_explicit`). A mask
shorter than the keys is padded with masked positions first (at run time where a
length is dynamic).
"""

from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.attention_explicit import (
    Options,
    explicit_attention,
    needs_explicit,
    padded_mask,
)
from mlc.frontends.onnx.ops.build import Size, reshape_to, shape_of, size_along, sizes
from mlc.frontends.onnx.ops.table import converts
from mlc.shapes import DYNAMIC as DYN


def split_heads(node: Node, x: SSAValue, heads: int | None, what: str) -> SSAValue:
    """`(B, seq, heads * size)` to `(B, heads, seq, size)`."""
    if heads is None:
        raise node.error(f"Attention with 3-D inputs needs the {what} attribute")
    batch, seq, hidden = sizes(node, x)
    if isinstance(hidden, int) and hidden % heads:
        raise node.error(f"Attention: {what} ({heads}) must divide the hidden size ({hidden})")
    # A dynamic hidden size gives a `?` head size, from the element count.
    size = hidden // heads if isinstance(hidden, int) else DYN
    split = reshape_to(node, x, [batch, seq, heads, size])
    return node.emit(ml.TransposeOp(split, [0, 2, 1, 3]))


def merge_heads(node: Node, y: SSAValue) -> SSAValue:
    """`(B, heads, seq, size)` to `(B, seq, heads * size)`."""
    batch, heads, seq, size = sizes(node, y)
    merged = node.emit(ml.TransposeOp(y, [0, 2, 1, 3]))
    assert isinstance(heads, int)  # static: split by attributes
    hidden = heads * size if isinstance(size, int) else DYN
    return reshape_to(node, merged, [batch, seq, hidden])


@converts("Attention", since=23)
def attention(node: Node) -> Sequence[Value | None]:
    """`softmax(Q Kᵀ * scale + mask) V` with ONNX's causal band and past K/V cache."""
    if node.has(4) != node.has(5):
        raise node.error("Attention: past_key and past_value must be given together")
    if node.has(6) and node.has(4):
        raise node.error("Attention: nonpad_kv_seqlen cannot be given with a past cache")
    q, k, v = node.input(0), node.input(1), node.input(2)
    three_d = len(shape_of(q)) == 3
    if three_d:
        q = split_heads(node, q, node.attr("q_num_heads"), "q_num_heads")
        k = split_heads(node, k, node.attr("kv_num_heads"), "kv_num_heads")
        v = split_heads(node, v, node.attr("kv_num_heads"), "kv_num_heads")
    new_keys = shape_of(k)[2]
    past: Size = 0
    if node.has(4):
        past = size_along(node, node.input(4), 2)
        k = node.emit(ml.ConcatOp([node.input(4), k], axis=2))
        v = node.emit(ml.ConcatOp([node.input(5), v], axis=2))
    options = Options.of(node, shape_of(q)[3])
    mask = padded_mask(node, node.input(3), size_along(node, k, 2)) if node.has(3) else None
    if needs_explicit(node, options, shape_of(q)[2], new_keys):
        nonpad = node.input(6) if node.has(6) else None
        y, scores = explicit_attention(node, (q, k, v), mask, past, nonpad, options)
    else:
        y, scores = fused(node, q, k, v, mask, options), None
    if three_d:
        y = merge_heads(node, y)
    return [y, k, v, scores][: len(node.proto.output)]


def fused(
    node: Node, q: SSAValue, k: SSAValue, v: SSAValue, mask: SSAValue | None, options: Options
) -> SSAValue:
    """One `ml.attention`, fully masked rows 0 (where it gives NaN)."""
    assert options.scale is not None  # else written out (`needs_explicit`)
    y = node.emit(ml.AttentionOp(q, k, v, mask, scale=options.scale, causal=options.causal))
    if mask is not None or options.causal:  # rows may be fully masked: 0, not NaN
        nan = node.emit(ml.CmpOp("ne", y, y))
        y = node.emit(ml.SelectOp(nan, node.scalar(0, y), y))
    return y

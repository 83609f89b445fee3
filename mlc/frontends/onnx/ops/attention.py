"""
ONNX Attention (opset 23) onto `ml.attention`.

4-D inputs are `(B, heads, seq, head_size)`; 3-D ones `(B, seq, heads * head_size)` are
split into heads by `q_num_heads` / `kv_num_heads` and the output merged back. A past
K/V cache is concatenated before the new keys (`present_key`, `present_value`); then
`is_causal` is ONNX's band `j <= i + past` (top-left without a cache), which is
`ml.attention`'s bottom-right band where the new keys are as many as the queries. A
fully masked row is 0 (ONNX's convention; `ml.attention` gives NaN, which is replaced).
Not supported, with an error that says so: `softcap`, the `qk_matmul_output` output,
`nonpad_kv_seqlen`, and `is_causal` where the query and new key lengths may differ.
"""

import math
from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.build import reshape_to, shape_of, sizes
from mlc.frontends.onnx.ops.table import converts


def split_heads(node: Node, x: SSAValue, heads: int | None, what: str) -> SSAValue:
    """`(B, seq, heads * size)` to `(B, heads, seq, size)`."""
    if heads is None:
        raise node.error(f"Attention with 3-D inputs needs the {what} attribute")
    batch, seq, hidden = sizes(node, x)
    if not isinstance(hidden, int) or hidden % heads:
        raise node.error(f"Attention: {what} ({heads}) must divide the hidden size ({hidden})")
    split = reshape_to(node, x, [batch, seq, heads, hidden // heads])
    return node.emit(ml.TransposeOp(split, [0, 2, 1, 3]))


def merge_heads(node: Node, y: SSAValue) -> SSAValue:
    """`(B, heads, seq, size)` to `(B, seq, heads * size)`."""
    batch, heads, seq, size = sizes(node, y)
    merged = node.emit(ml.TransposeOp(y, [0, 2, 1, 3]))
    assert isinstance(heads, int) and isinstance(size, int)  # static: split by attributes
    return reshape_to(node, merged, [batch, seq, heads * size])


def check_supported(node: Node) -> None:
    if node.attr("softcap", 0.0):
        raise node.error("Attention: softcap is not supported yet")
    if len(node.proto.output) > 3 and node.proto.output[3]:
        raise node.error("Attention: the qk_matmul_output output is not supported yet")
    if node.has(6):
        raise node.error("Attention: nonpad_kv_seqlen is not supported yet")
    if node.has(4) != node.has(5):
        raise node.error("Attention: past_key and past_value must be given together")


def same_length(a: int, b: int) -> bool:
    return a == b and a >= 0


@converts("Attention", since=23)
def attention(node: Node) -> Sequence[Value]:
    """`softmax(Q Kᵀ * scale + mask) V` with ONNX's causal band and past K/V cache."""
    check_supported(node)
    q, k, v = node.input(0), node.input(1), node.input(2)
    three_d = len(shape_of(q)) == 3
    if three_d:
        q = split_heads(node, q, node.attr("q_num_heads"), "q_num_heads")
        k = split_heads(node, k, node.attr("kv_num_heads"), "kv_num_heads")
        v = split_heads(node, v, node.attr("kv_num_heads"), "kv_num_heads")
    new_keys = shape_of(k)[2]
    if node.has(4):
        k = node.emit(ml.ConcatOp([node.input(4), k], axis=2))
        v = node.emit(ml.ConcatOp([node.input(5), v], axis=2))
    causal = bool(node.attr("is_causal", 0))
    if causal and not same_length(shape_of(q)[2], new_keys):
        raise node.error(
            "Attention: is_causal needs as many new keys as queries (static), "
            f"got {shape_of(q)[2]} queries and {new_keys} keys"
        )
    scale = node.attr("scale", None)
    if scale is None:
        if (head_size := shape_of(q)[3]) < 0:
            raise node.error("Attention without a scale needs a static head size")
        scale = 1 / math.sqrt(head_size)
    mask = node.input(3) if node.has(3) else None
    y = node.emit(ml.AttentionOp(q, k, v, mask, scale=float(scale), causal=causal))
    if mask is not None or causal:  # rows may be fully masked: 0, not NaN
        nan = node.emit(ml.CmpOp("ne", y, y))
        y = node.emit(ml.SelectOp(nan, node.scalar(0, y), y))
    if three_d:
        y = merge_heads(node, y)
    return [y, k, v][: len(node.proto.output)]

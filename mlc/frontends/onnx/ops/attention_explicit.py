"""
ONNX Attention written out in `ml` ops, for what `ml.attention` does not take: `softcap`,
the `qk_matmul_output` output, `nonpad_kv_seqlen`, a causal band offset by a past cache
or by the valid key lengths, and sliding windows (opset 25); with `padded_mask`, which
both forms take. As onnx's reference computes it, on 4-D `(B, heads, seq, size)` inputs,
the past cache concatenated:

    scores = (Q * sqrt(scale)) @ (K * sqrt(scale))^T     Q's heads grouped over K's (GQA)
    scores = softcap * tanh(scores / softcap)            where softcap > 0
    bias   = mask (a bool one as 0 / -inf, padded with -inf up to the keys)
           + causal band   j <= i + offset                each constraint 0 / -inf
           + window        -left <= i + offset - j <= right
           + padding       j < nonpad_kv_seqlen[b]
    P      = softmax(scores + bias), in softmax_precision; 0 on rows whose bias is all -inf
    Y      = P @ V

`offset` is the past cache's length, `nonpad_kv_seqlen[b] - q_len` with an external
cache, else 0. `qk_matmul_output` is `scores` (modes 0, 1), `scores + bias` (2) or `P` (3).
"""

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import bf16, f16, f32, i1, i64
from xdsl.ir import Attribute, SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx import types
from mlc.frontends.onnx.node import Node
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    cast,
    element_of,
    reshape_to,
    shape_of,
    shape_tensor,
    size_along,
    sizes,
)
from mlc.frontends.onnx.ops.padding import pad_constant
from mlc.frontends.onnx.ops.structure import arange


@dataclass
class Options:
    """The attributes of an ONNX Attention node that the explicit form reads."""

    scale: float | None  # None: 1 / sqrt(head size), the head size known at run time
    causal: bool
    softcap: float
    mode: int | None  # qk_matmul_output_mode; None when that output is not asked for
    precision: Attribute | None  # the softmax's element type, if not the inputs'
    left: int  # window sizes, -1: unbounded
    right: int

    @staticmethod
    def of(node: Node, head_size: int) -> "Options":
        scale = node.attr("scale", None)
        if scale is None and head_size >= 0:
            scale = 1 / math.sqrt(head_size)
        wanted = len(node.proto.output) > 3 and bool(node.proto.output[3])
        precision = node.attr("softmax_precision", None)
        return Options(
            scale=None if scale is None else float(scale),
            causal=bool(node.attr("is_causal", 0)),
            softcap=float(node.attr("softcap", 0.0)),
            mode=int(node.attr("qk_matmul_output_mode", 0)) if wanted else None,
            precision=None if precision is None else types.element_type(precision),
            left=int(node.attr("left_window_size", -1)),
            right=int(node.attr("right_window_size", -1)),
        )


def explicit_attention(
    node: Node,
    qkv: tuple[SSAValue, SSAValue, SSAValue],
    mask: SSAValue | None,
    past: Size,
    nonpad: SSAValue | None,
    options: Options,
) -> tuple[SSAValue, SSAValue | None]:
    """Y and the qk_matmul_output (None if not asked for) of 4-D `qkv` (module docstring);
    `past`: the past cache's length, already concatenated to K and V. Half-precision
    inputs are computed in f32 and the results rounded once, as `ml.attention` does."""
    given = element_of(qkv[0])
    q, k, v = (cast(node, x, f32) if given in (f16, bf16) else x for x in qkv)
    if options.scale is not None:
        root = node.scalar(math.sqrt(options.scale), q)
    else:  # sqrt(1 / sqrt(head size)) = head size ** -0.25, in q's type as onnx's reference
        head = cast(
            node, reshape_to(node, shape_tensor(node, [size_along(node, q, 3)]), []), element_of(q)
        )
        root = node.emit(ml.PowOp(head, node.scalar(-0.25, q)))
    keys_t = node.emit(ml.TransposeOp(node.emit(ml.MulOp(k, root)), [0, 1, 3, 2]))
    scores = grouped_matmul(node, node.emit(ml.MulOp(q, root)), keys_t)
    if options.softcap > 0:
        cap = node.scalar(options.softcap, scores)
        tanh = node.emit(ml.TanhOp(node.emit(ml.DivOp(scores, cap))))
        scores = node.emit(ml.MulOp(tanh, cap))
    bias = attention_bias(node, scores, mask, past, nonpad, options)
    biased = scores if bias is None else node.emit(ml.AddOp(scores, bias))
    # Half-precision logits take the softmax in f32 (as autocast does), rounded once.
    precision = options.precision or (f32 if element_of(biased) in (f16, bf16) else None)
    logits = biased if precision is None else cast(node, biased, precision)
    probs = node.emit(ml.SoftmaxOp(logits, -1))
    if bias is not None:  # rows with no key to attend to are 0 (the softmax gives NaN)
        rank = len(shape_of(bias))
        peak = node.emit(ml.ReduceMaxOp(bias, [rank - 1], keepdims=True))
        empty = node.emit(ml.CmpOp("eq", peak, node.scalar(-np.inf, peak)))
        probs = node.emit(ml.SelectOp(empty, node.scalar(0, probs), probs))
    probs = cast(node, probs, element_of(q))
    y = cast(node, grouped_matmul(node, probs, v), given)
    if options.mode is None:
        return y, None
    return y, cast(node, [scores, scores, biased, probs][min(max(options.mode, 0), 3)], given)


def grouped_matmul(node: Node, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a @ b` over `(B, heads, m, k)` and `(B, kv_heads, k, n)`: each of b's heads
    serves `heads / kv_heads` consecutive heads of a (GQA), with no copy of b. Head
    counts known only at run time are grouped then (two `?` counts may differ)."""
    static = shape_of(a)[1] >= 0 and shape_of(b)[1] >= 0
    if static and shape_of(a)[1] == shape_of(b)[1]:
        return node.emit(ml.MatmulOp(a, b))
    if static and shape_of(a)[1] % shape_of(b)[1]:
        raise node.error(
            f"Attention: the query heads ({shape_of(a)[1]}) must be a multiple of the key "
            f"and value heads ({shape_of(b)[1]})"
        )
    batch, heads, rows, inner = sizes(node, a)
    b_batch, kv_heads, b_inner, cols = sizes(node, b)
    # ONNX requires kv_heads to divide heads; where it does not at run time, the floor
    # of the quotient reshapes fewer elements than `a` holds: nothing is read outside it.
    group = SizeCalc(node).floordiv(heads, kv_heads)
    grouped = reshape_to(node, a, [batch, kv_heads, group, rows, inner])
    shared = reshape_to(node, b, [b_batch, kv_heads, 1, b_inner, cols])
    product = node.emit(ml.MatmulOp(grouped, shared))
    return reshape_to(node, product, [batch, heads, rows, cols])


def attention_bias(
    node: Node,
    scores: SSAValue,
    mask: SSAValue | None,
    past: Size,
    nonpad: SSAValue | None,
    options: Options,
) -> SSAValue | None:
    """The additive bias (0 or -inf, or the float mask's values) the scores take, shaped
    to broadcast against them; None where nothing is masked."""
    parts: list[SSAValue] = []
    keys = size_along(node, scores, 3)
    if mask is not None:
        parts.append(mask_bias(node, mask, scores))
    queries = size_along(node, scores, 2)
    rows = reshape_to(node, arange(node, queries), [1, 1, queries, 1])
    cols = reshape_to(node, arange(node, keys), [1, 1, 1, keys])
    if nonpad is not None:
        batch = size_along(node, nonpad, 0)
        valid = reshape_to(node, cast(node, nonpad, i64), [batch, 1, 1, 1])
        offset = node.emit(ml.SubOp(valid, shape_tensor(node, [queries])))
        parts.append(allowed(node, ml.CmpOp("lt", cols, valid), scores))
    else:
        offset = shape_tensor(node, [past])
    position = node.emit(ml.AddOp(rows, offset))  # of each query among the keys
    if options.causal:
        parts.append(allowed(node, ml.CmpOp("le", cols, position), scores))
    behind = node.emit(ml.SubOp(position, cols))
    if options.left >= 0:
        left = node.scalar(options.left, behind)
        parts.append(allowed(node, ml.CmpOp("le", behind, left), scores))
    if options.right >= 0:
        right = node.scalar(-options.right, behind)
        parts.append(allowed(node, ml.CmpOp("ge", behind, right), scores))
    if not parts:
        return None
    bias = parts[0]
    for part in parts[1:]:
        bias = node.emit(ml.AddOp(bias, part))
    return bias


def allowed(node: Node, condition: ml.CmpOp, like: SSAValue) -> SSAValue:
    """0 where `condition` holds, -inf elsewhere, in `like`'s element type."""
    keep = node.emit(condition)
    return node.emit(ml.SelectOp(keep, node.scalar(0, like), node.scalar(-np.inf, like)))


def mask_bias(node: Node, mask: SSAValue, like: SSAValue) -> SSAValue:
    """`attn_mask` (`padded_mask` already) as an additive bias: a bool one 0 / -inf."""
    if element_of(mask) == i1:
        return allowed_mask(node, mask, like)
    return cast(node, mask, element_of(like))


def padded_mask(node: Node, mask: SSAValue, keys: Size) -> SSAValue:
    """`attn_mask` padded with masked positions (False, -inf) up to the keys where it is
    shorter, as onnx's reference does (a last dim of 1 too: it is padded, not broadcast).
    Where either length is known only at run time, so is the padding (maybe none)."""
    last = len(shape_of(mask)) - 1
    length = shape_of(mask)[last]
    if isinstance(keys, int) and length >= 0:
        if length >= keys:
            return mask
        short: Size = keys - length
    else:
        calc = SizeCalc(node)
        short = calc.max(calc.sub(keys, size_along(node, mask, last)), 0)
    fill = node.scalar(False if element_of(mask) == i1 else -np.inf, mask)
    return pad_constant(node, mask, [last], [0, short], fill)


def allowed_mask(node: Node, mask: SSAValue, like: SSAValue) -> SSAValue:
    zero, minus_inf = node.scalar(0, like), node.scalar(-np.inf, like)
    return node.emit(ml.SelectOp(mask, zero, minus_inf))


def needs_explicit(node: Node, options: Options, queries: int, new_keys: int) -> bool:
    """Whether `ml.attention` cannot compute the node: see the module docstring."""
    # ml.attention's band is bottom-right: ONNX's `j <= i + past` where the new keys are
    # as many as the queries.
    band = options.causal and not (queries == new_keys and queries >= 0)
    return any(
        (
            options.softcap > 0,
            options.mode is not None,
            node.has(6),
            band,
            options.left >= 0 or options.right >= 0,
            options.precision is not None,
            options.scale is None,
        )
    )

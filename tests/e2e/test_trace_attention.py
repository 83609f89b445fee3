"""
Attention from traced code: `mlc.ops.scaled_dot_product_attention` (torch's semantics)
and the unfused form written with numpy operators, which `fuse-attention` turns into
`ml.attention`; both against numpy in float64.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.frontends.trace.tracer import TraceError


def reference(q, k, v, mask=None, causal=False, scale=None):
    """torch's scaled_dot_product_attention (top-left causal band), K/V heads repeated."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * (scale or 1 / np.sqrt(q.shape[-1]))
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == np.bool_ else s + mask
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def test_scaled_dot_product_attention_causal_gqa():
    rng = np.random.default_rng()
    q = rng.standard_normal((2, 4, 9, 8), np.float32)
    k = rng.standard_normal((2, 2, 13, 8), np.float32)
    v = rng.standard_normal((2, 2, 13, 5), np.float32)
    mask = rng.standard_normal((9, 13)).astype(np.float32)

    def f(q, k, v, mask):
        return ops.scaled_dot_product_attention(q, k, v, mask, is_causal=True)

    module = mlc.trace(f, q, k, v, mask)
    assert "ml.attention" in str(module)
    got = mlc.compile(module)(q, k, v, mask)
    np.testing.assert_allclose(got, reference(q, k, v, mask, causal=True), rtol=1e-4, atol=1e-5)


def test_unfused_traced_attention_is_fused():
    rng = np.random.default_rng()
    q = rng.standard_normal((3, 2, 7, 16), np.float32)
    k = rng.standard_normal((3, 2, 11, 16), np.float32)
    v = rng.standard_normal((3, 2, 11, 4), np.float32)
    keep = rng.random((3, 1, 1, 11)) < 0.8
    keep[..., 0] = True

    def f(q, k, v, keep):
        scores = q @ ops.transpose(k, (0, 1, 3, 2)) / 4.0
        scores = ops.where(keep, scores, -np.inf)
        return ops.softmax(scores, axis=-1) @ v

    module = mlc.trace(f, q, k, v, keep)
    graph = mlc.compile(module, emit="mlc")
    assert "ml.attention" in str(graph) and "ml.softmax" not in str(graph)
    got = mlc.compile(module)(q, k, v, keep)
    np.testing.assert_allclose(got, reference(q, k, v, keep, scale=0.25), rtol=1e-4, atol=1e-5)


def test_scaled_dot_product_attention_rank_error_names_the_user_line():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(TraceError) as info:
        mlc.trace(lambda a: ops.scaled_dot_product_attention(a, a, a), x)
    assert "need one rank >= 3, got ranks 2, 2 and 2" in str(info.value)
    assert "test_trace_attention.py" in str(info.value)

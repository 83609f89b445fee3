"""
RotaryEmbedding (mlc/frontends/onnx/ops/rotary.py) against onnxruntime, on the CPU and
`cuda`: halves or interleaved pairs, partial rotation, position_ids or per-token caches,
4-d input or 3-d with num_heads, f16, dynamic dims, and the errors.
"""

import numpy as np
import pytest

import mlc
from mlc.frontends.onnx.model import OnnxImportError
from tests.e2e.onnx.single_node import check, single_node_model

rng = np.random.default_rng()


def normal(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def inputs(shape, half, positions=None, dtype=np.float32):
    """x of `shape` (B, H, S, D) or (B, S, hidden), caches of `half` angles each, and
    position_ids into `positions` cached positions (None: caches per token)."""
    batch, seq = shape[0], shape[-2] if len(shape) == 4 else shape[1]
    if positions is None:
        angles = rng.uniform(0, 6.3, (batch, seq, half))
        ids = []
    else:
        angles = rng.uniform(0, 6.3, (positions, half))
        ids = [("ids", rng.integers(0, positions, (batch, seq)).astype(np.int64))]
    caches = [("cos", np.cos(angles).astype(dtype)), ("sin", np.sin(angles).astype(dtype))]
    return [("x", normal(*shape, dtype=dtype)), *caches, *ids]


@pytest.mark.parametrize(
    ("shape", "attrs", "half", "positions"),
    [
        ((2, 3, 5, 8), {}, 4, 11),
        ((2, 3, 5, 8), {"interleaved": 1}, 4, None),
        ((1, 2, 7, 10), {"rotary_embedding_dim": 6}, 3, 9),
        ((1, 2, 7, 10), {"rotary_embedding_dim": 4, "interleaved": 1}, 2, None),
        ((2, 5, 12), {"num_heads": 3}, 2, 6),
        ((2, 5, 12), {"num_heads": 2, "interleaved": 1, "rotary_embedding_dim": 4}, 2, None),
    ],
)
def test_rotary_embedding(target, shape, attrs, half, positions):
    check("RotaryEmbedding", inputs(shape, half, positions), attrs, opset=23, target=target)


@pytest.mark.parametrize("interleaved", [0, 1])
def test_dynamic_dims(target, interleaved):
    given = inputs((2, 6, 12), 3, 8)
    attrs = {"num_heads": 2, "interleaved": interleaved}
    check(
        "RotaryEmbedding", given, attrs, opset=23, target=target, dynamic=("x", "cos", "sin", "ids")
    )


def test_f16():
    given = inputs((1, 2, 3, 4), 2, 5, dtype=np.float16)
    check("RotaryEmbedding", given, {}, opset=23, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    ("shape", "attrs", "message"),
    [
        ((2, 5, 12), {"num_heads": 5}, "hidden size 12 is not a multiple of num_heads 5"),
        ((1, 2, 3, 8), {"rotary_embedding_dim": 3}, "rotary_embedding_dim 3 must be even"),
    ],
)
def test_errors(shape, attrs, message):
    model = single_node_model("RotaryEmbedding", inputs(shape, 1), attrs, 23, {}, ())
    with pytest.raises(OnnxImportError, match=message):
        mlc.compile(model)

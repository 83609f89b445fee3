"""
Fused attention: `softmax(q @ k^T * scale + mask) @ v` over heads, with grouped K/V heads.

q is `(batch..., H, Sq, D)`, k `(batch..., Hkv, Sk, D)`, v `(batch..., Hkv, Sk, Dv)`,
with `H % Hkv == 0` (query head `h` reads K/V head `h // (H / Hkv)`); the result is
`(batch..., H, Sq, Dv)`. A mask broadcasts (numpy rules) to `(batch..., H, Sq, Sk)`.
"""

from collections.abc import Sequence

from mlc.shapes.broadcasting import broadcast_to
from mlc.shapes.dims import Shape, ShapeError, format_dim, format_shape, is_static, join_dims


def _join(a: int, b: int, what: str, first: str, second: str) -> int:
    return join_dims(
        a, b, f"{what} differ: {first} is {format_dim(a)}, {second} is {format_dim(b)}"
    )


def attention_heads(q_heads: int, kv_heads: int) -> None:
    """Query heads must be a multiple of the K/V heads (grouped-query attention)."""
    if is_static(q_heads) and is_static(kv_heads) and q_heads % kv_heads:
        raise ShapeError(
            f"query heads ({q_heads}) must be a multiple of the key/value heads ({kv_heads})"
        )


def attention(
    q: Sequence[int], k: Sequence[int], v: Sequence[int], mask: Sequence[int] | None = None
) -> Shape:
    """The result shape of `ml.attention`: `(batch..., H, Sq, Dv)`."""
    rank = len(q)
    if rank < 3 or len(k) != rank or len(v) != rank:
        raise ShapeError(
            f"expects q, k and v of one rank >= 3, got ranks {len(q)}, {len(k)} and {len(v)}"
        )
    batch = tuple(
        _join(_join(a, b, f"batch dimension {d}", "q", "k"), c, f"batch dimension {d}", "q", "v")
        for d, (a, b, c) in enumerate(zip(q[:-3], k[:-3], v[:-3], strict=True))
    )
    kv_heads = _join(k[-3], v[-3], "key/value heads", "k", "v")
    attention_heads(q[-3], kv_heads)
    keys = _join(k[-2], v[-2], "key lengths", "k dimension -2", "v dimension -2")
    _join(q[-1], k[-1], "head sizes", "q dimension -1", "k dimension -1")
    scores = (*batch, q[-3], q[-2], keys)
    if mask is not None:
        if len(mask) > rank:
            raise ShapeError(f"expects a mask of rank <= {rank}, got rank {len(mask)}")
        try:
            broadcast_to(mask, scores)
        except ShapeError:
            raise ShapeError(
                f"mask ({format_shape(mask)}) does not broadcast to the scores "
                f"({format_shape(scores)})"
            ) from None
    return (*batch, q[-3], q[-2], v[-1])

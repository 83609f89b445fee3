"""
`ml.attention` compiled (decompose-attention's blocked loop) against numpy in float64:
query and key lengths that are not multiples of the blocks, causal or not, bool and
additive masks, grouped K/V heads (of static and of run-time counts), dynamic dims, f32
and f16; on the CPU and, with `-m gpu`, the GPU.
"""

from dataclasses import dataclass

import numpy as np
import pytest

from mlc.dialects import ml
from tests.e2e.programs import program, random_array, tensor
from tests.gpu.targets import compile_for


def reference(q, k, v, mask, scale, causal):
    """softmax(q @ kᵀ * scale + mask) @ v in float64, K/V heads repeated for the groups."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, group, axis=-3), np.repeat(v, group, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == np.bool_ else s + mask
    if causal:  # bottom-right aligned, as ONNX Attention's is_causal
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq, s, -np.inf)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        return (p / p.sum(axis=-1, keepdims=True)) @ v


@dataclass(frozen=True)
class Case:
    q: tuple[int, ...]
    kv_heads: int
    keys: int
    dv: int
    mask: tuple[tuple[int, ...], str] | None = None
    causal: bool = False
    dtype: str = "float32"
    dynamic: bool = False

    def shapes(self) -> list[tuple[int, ...]]:
        *batch, _, _, d = self.q
        k = (*batch, self.kv_heads, self.keys, d)
        v = (*batch, self.kv_heads, self.keys, self.dv)
        return [self.q, k, v, *([self.mask[0]] if self.mask else [])]


CASES = {
    # GQA, a bool mask, causal, lengths past one block (64) and not multiples of it.
    "gqa-causal-bool": Case((2, 4, 70, 16), 2, 133, 8, ((70, 133), "bool"), causal=True),
    # An additive padding mask broadcast over heads and queries; Sq < one block.
    "additive-padding": Case((3, 2, 5, 8), 2, 77, 12, ((3, 1, 1, 77), "float32")),
    # Every dim dynamic: the blocks' sizes are computed at run time.
    "dynamic-causal": Case((2, 3, 67, 8), 3, 130, 8, causal=True, dynamic=True),
    # Two `?` head counts that differ at run time (GQA): grouped by run-time indices.
    "dynamic-gqa": Case((2, 6, 9, 8), 2, 11, 4, dynamic=True),
    # f16, multi-query (one K/V head), no batch dims; more queries than keys, causal: the
    # first rows see no key and are NaN, as numpy's are.
    "f16-mqa": Case((4, 9, 16), 1, 6, 16, causal=True, dtype="float16"),
}


def build(case: Case):
    types = [tensor(s, case.dtype, case.dynamic) for s in case.shapes()[:3]]
    if case.mask is not None:
        types.append(tensor(case.mask[0], case.mask[1], case.dynamic))
    scale = 1 / np.sqrt(case.q[-1])

    def body(q, k, v, *mask):
        return ml.AttentionOp(q, k, v, *mask, scale=float(scale), causal=case.causal)

    return program(types, body), scale


@pytest.mark.parametrize("name", CASES)
def test_attention_against_numpy(name: str, target: str):
    case = CASES[name]
    module, scale = build(case)
    exe = compile_for(module, target)
    rng = np.random.default_rng()
    shapes = case.shapes()
    args = [random_array(rng, s, case.dtype) for s in shapes[:3]]
    if case.mask is not None:
        args.append(random_array(rng, case.mask[0], case.mask[1]))
    got = exe(*args)
    want = reference(*args[:3], args[3] if case.mask else None, scale, case.causal)
    tolerance = 2e-3 if case.dtype == "float16" else 2e-5
    assert got.dtype == np.dtype(case.dtype)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=tolerance)

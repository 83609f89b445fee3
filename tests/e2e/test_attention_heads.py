"""
Attention between a transformer's head split and merge, against numpy in float64:
projections' layout `(B, S, H * D)` in, reshaped to `(B, S, H, D)`, transposed to
`(B, H, S, D)` for `ml.attention`, its output transposed back and reshaped to
`(B, Sq, H * Dv)`. On cuda the transposes fold into the fused kernel's operand layout
(`mlc.lowering.gpu.attention.head_layout`): no copy kernels, the kernel reads and
writes the projections' layout through strides. f32 (the FMA kernel), f16 and bf16
(the tensor-core kernel at head dims 64 and 128), causal or not, grouped K/V heads,
BERT's additive padding mask.
On the CPU (decompose-attention, the transposes as copies) the same programs check the
programs and the reference; without a GPU the cuda programs' PTX is assembled, then
the test skips.
"""

from dataclasses import dataclass

import numpy as np
import pytest

import mlc
from mlc.dialects import ml
from tests.e2e.programs import program, random_array, tensor
from tests.e2e.test_attention_cpu import reference
from tests.gpu.targets import compile_for

HEAD_SPLIT = [0, 2, 1, 3]
TOLERANCE = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


@dataclass(frozen=True)
class Case:
    batch: int
    queries: int
    keys: int
    heads: int
    kv_heads: int
    dim: int
    dtype: str
    causal: bool = False
    padding: bool = False  # an additive (B, 1, 1, Sk) mask, as BERT's

    def shapes(self) -> list[tuple[int, ...]]:
        b, d = self.batch, self.dim
        kv = (b, self.keys, self.kv_heads * d)
        mask = [(b, 1, 1, self.keys)] if self.padding else []
        return [(b, self.queries, self.heads * d), kv, kv, *mask]


CASES = {
    "f32-d32-gqa-causal": Case(2, 70, 70, 4, 2, 32, "float32", causal=True),
    "f32-d64-mqa": Case(1, 33, 90, 3, 1, 64, "float32"),
    "f16-d64": Case(2, 130, 130, 4, 4, 64, "float16"),
    "f16-d128-causal-fewer-keys": Case(1, 90, 40, 2, 2, 128, "float16", causal=True),
    "bf16-d64-gqa-causal": Case(2, 128, 128, 4, 2, 64, "bfloat16", causal=True),
    "bf16-d128-gqa": Case(1, 65, 200, 4, 2, 128, "bfloat16"),
    "bf16-d64-padding": Case(3, 128, 128, 4, 4, 64, "bfloat16", padding=True),
    "f32-d16-padding-causal": Case(2, 20, 33, 2, 1, 16, "float32", causal=True, padding=True),
}


def build(case: Case):
    """The program of `case` (module docstring) and its scale."""
    scale = float(1 / np.sqrt(case.dim))
    types = [tensor(s, case.dtype) for s in case.shapes()]

    def body(xq, xk, xv, *mask):
        ops = []

        def heads(x, count: int, length: int):
            split = ml.ReshapeOp(x, [case.batch, length, count, case.dim])
            transpose = ml.TransposeOp(split.result, HEAD_SPLIT)
            ops.extend([split, transpose])
            return transpose.result

        q = heads(xq, case.heads, case.queries)
        k, v = heads(xk, case.kv_heads, case.keys), heads(xv, case.kv_heads, case.keys)
        attention = ml.AttentionOp(q, k, v, *mask, scale=scale, causal=case.causal)
        merge = ml.TransposeOp(attention.result, HEAD_SPLIT)
        flat = ml.ReshapeOp(merge.result, list(case.shapes()[0]))
        return [*ops, attention, merge, flat]

    return program(types, body), scale


def expected(case: Case, xq, xk, xv, mask, scale: float) -> np.ndarray:
    def heads(x, count: int):
        b, s, _ = x.shape
        return x.reshape(b, s, count, case.dim).transpose(HEAD_SPLIT)

    out = reference(
        heads(xq, case.heads), heads(xk, case.kv_heads), heads(xv, case.kv_heads),
        mask, scale, case.causal,
    )  # fmt: skip
    return out.transpose(HEAD_SPLIT).reshape(case.shapes()[0])


@pytest.mark.parametrize("name", CASES)
def test_attention_between_head_transposes(name: str, target: str):
    case = CASES[name]
    module, scale = build(case)
    tensor_cores = ["mma.sync.aligned.m16n8k16"] if case.dtype != "float32" else []
    exe = compile_for(module, target, sm=["sm_80", "sm_90a"], holds=tensor_cores)
    rng = np.random.default_rng()
    args = [random_array(rng, s, case.dtype, -2, 2) for s in case.shapes()[:3]]
    mask = None
    if case.padding:  # about a fifth of the keys padded out, the first never
        padded = rng.random(case.shapes()[3]) < 0.2
        padded[..., 0] = False
        mask = np.where(padded, -1e4, 0.0).astype(case.dtype)
        args.append(mask)
    got = np.asarray(exe(*args))
    assert got.dtype == np.dtype(case.dtype)
    tolerance = TOLERANCE[case.dtype]
    want = expected(case, *args[:3], mask, scale)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", CASES)
def test_no_transpose_copies(name: str):
    """On cuda the transposes are gone by the `linalg` stage: the attention's stand-in
    is the program's one generic (the reshapes are views once bufferized)."""
    module, _ = build(CASES[name])
    lowered = str(mlc.compile(module, target="cuda", emit="linalg", sm="sm_90a"))
    assert lowered.count("linalg.generic") == 1
    assert 'library_call = "mlc.attention"' in lowered

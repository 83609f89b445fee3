"""
The tensor-core attention kernel (`convert-attention-to-gpu`'s f16/bf16 path,
`mlc.lowering.gpu.attention.flash`) against numpy in float64 on the GPU: f16 and bf16,
head dims 64 and 128, causal or not, bool and additive masks, grouped K/V heads, and
sequence lengths at run time (1, 17, 200, ...: tail blocks of queries and keys, fewer
keys than queries, more keys than one block). Each program is compiled once and run on
fresh random inputs for every pair of lengths. Without a GPU each program's PTX is
checked for the tensor-core instructions and assembled with ptxas for sm_80 and
sm_90a, then the test skips.

Tolerance: the scores and sums are f32; P is rounded to the element type before P·V
(as FlashAttention does) and the output once more, so a few units in the last place
of the element type.
"""

from dataclasses import dataclass

import numpy as np
import pytest

from tests.e2e.programs import random_array
from tests.e2e.test_attention_cpu import reference
from tests.gpu.targets import assemble, gpu_unavailable_reason

pytestmark = pytest.mark.gpu

TOLERANCE = {"float16": 4e-3, "bfloat16": 3e-2}
ELEMENT = {"float16": "f16", "bfloat16": "bf16"}


@dataclass(frozen=True)
class Program:
    dtype: str
    dim: int
    heads: int = 4
    kv_heads: int = 4
    causal: bool = False
    mask: str | None = None  # "bool": (Sq, Sk) i1; "additive": (B, 1, 1, Sk) padding

    def text(self) -> str:
        t = ELEMENT[self.dtype]
        q = f"tensor<?x{self.heads}x?x{self.dim}x{t}>"
        kv = f"tensor<?x{self.kv_heads}x?x{self.dim}x{t}>"
        args, types = "%q, %k, %v", [q, kv, kv]
        if self.mask == "bool":
            types.append("tensor<?x?xi1>")
        elif self.mask == "additive":
            types.append(f"tensor<?x1x1x?x{t}>")
        if self.mask:
            args += ", %m"
        params = ", ".join(f"{a}: {ty}" for a, ty in zip(args.split(", "), types, strict=True))
        scale = float(1 / np.sqrt(self.dim))
        causal = ", causal = true" if self.causal else ""
        return f"""
func.func @main({params}) -> {q} {{
  %o = ml.attention {args} {{scale = {scale!r} : f64{causal}}} : ({", ".join(types)}) -> {q}
  func.return %o : {q}
}}
"""


PROGRAMS = {
    "f16-d64": Program("float16", 64),
    "f16-d64-causal": Program("float16", 64, causal=True),
    "bf16-d128-causal": Program("bfloat16", 128, causal=True),
    "f16-d128-bool-gqa": Program("float16", 128, heads=4, kv_heads=2, mask="bool"),
    "bf16-d64-additive-mqa-causal": Program(
        "bfloat16", 64, heads=3, kv_heads=1, causal=True, mask="additive"
    ),
    "bf16-d128": Program("bfloat16", 128, heads=2, kv_heads=2),
}
# (batch, Sq, Sk): one row and key; tails of one block; several blocks and their tails;
# fewer keys than queries (causal: the first rows see no key and are NaN, as numpy's).
LENGTHS = [(1, 1, 1), (2, 17, 17), (1, 200, 200), (2, 17, 200), (1, 200, 17), (1, 64, 130)]

_COMPILED: dict[str, object] = {}


def compiled(name: str):
    """`PROGRAMS[name]` for cuda, once; without a GPU: PTX checked and assembled, a skip."""
    import mlc
    from mlc.backend.ptx import to_ptx

    if name not in _COMPILED:
        source = PROGRAMS[name].text()
        reason = gpu_unavailable_reason()
        try:
            if reason is None:
                _COMPILED[name] = mlc.compile(source, target="cuda")
            else:
                module = mlc.compile(source, target="cuda", emit="nvvm", sm="sm_80")
                ptx = to_ptx(module, "sm_80")
                for instruction in ("mma.sync.aligned.m16n8k16", "ldmatrix", "cp.async"):
                    assert instruction in ptx, f"no {instruction} in the attention kernel"
                assert ".extern .shared" in ptx
                for sm in ("sm_80", "sm_90a"):
                    assemble(ptx, sm)
                pytest.skip(f"{reason} (tensor-core attention PTX assembled with ptxas)")
        except pytest.skip.Exception as skipped:
            _COMPILED[name] = skipped
    found = _COMPILED[name]
    if isinstance(found, BaseException):
        raise found
    return found


@pytest.mark.parametrize("lengths", LENGTHS, ids=lambda n: "b{}-q{}-k{}".format(*n))
@pytest.mark.parametrize("name", PROGRAMS)
def test_flash_attention_against_numpy(name: str, lengths: tuple[int, int, int]):
    exe = compiled(name)
    p = PROGRAMS[name]
    batch, sq, sk = lengths
    rng = np.random.default_rng()
    q = random_array(rng, (batch, p.heads, sq, p.dim), p.dtype, -2, 2)
    k = random_array(rng, (batch, p.kv_heads, sk, p.dim), p.dtype, -2, 2)
    v = random_array(rng, (batch, p.kv_heads, sk, p.dim), p.dtype, -2, 2)
    args = [q, k, v]
    mask = None
    if p.mask == "bool":
        mask = random_array(rng, (sq, sk), "bool")
        mask[:, 0] = True  # no row fully masked by the mask alone
    elif p.mask == "additive":
        mask = np.where(rng.random((batch, 1, 1, sk)) < 0.2, -1e4, 0.0).astype(p.dtype)
    if mask is not None:
        args.append(mask)
    got = np.asarray(exe(*args)).astype(np.float64)
    want = reference(q, k, v, mask, 1 / np.sqrt(p.dim), p.causal)
    tolerance = TOLERANCE[p.dtype]
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)

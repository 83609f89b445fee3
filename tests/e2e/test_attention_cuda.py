"""
The fused attention kernel (`convert-attention-to-gpu`) against numpy in float64 on the
GPU: head dims 64 and 128, odd lengths past the kernel's blocks (64 queries, 32 keys),
causal with more or fewer queries than keys, bool and additive masks, grouped K/V heads,
f32, f16 and bf16. Without a GPU each program's PTX is assembled, then
the test skips.
"""

import numpy as np
import pytest

from tests.e2e.programs import random_array
from tests.e2e.test_attention_cpu import Case, build, reference
from tests.gpu.targets import compile_for

CASES = {
    "f32-d64-causal-gqa": Case((1, 4, 131, 64), 2, 131, 64, causal=True),
    "f16-d128-bool-mask": Case((2, 2, 67, 128), 2, 95, 128, ((2, 1, 67, 95), "bool")),
    "bf16-d64-additive": Case((2, 4, 33, 64), 1, 70, 64, ((1, 70), "bfloat16"), dtype="bfloat16"),
    "f16-causal-fewer-keys": Case((1, 2, 90, 64), 2, 40, 64, causal=True, dtype="float16"),
    "f32-d128-mqa-causal": Case((2, 2, 65, 128), 1, 33, 128, causal=True),
}
TOLERANCE = {"float32": 2e-5, "float16": 2e-3, "bfloat16": 2e-2}


@pytest.mark.gpu
@pytest.mark.parametrize("name", CASES)
def test_fused_kernel_against_numpy(name: str):
    case = CASES[name]
    module, scale = build(case)
    compiled = compile_for(module, "cuda")
    rng = np.random.default_rng()
    args = [random_array(rng, s, case.dtype) for s in case.shapes()[:3]]
    if case.mask is not None:
        args.append(random_array(rng, case.mask[0], case.mask[1]))
    got = compiled(*args)
    want = reference(*args[:3], args[3] if case.mask else None, scale, case.causal)
    tolerance = TOLERANCE[case.dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance, atol=tolerance)

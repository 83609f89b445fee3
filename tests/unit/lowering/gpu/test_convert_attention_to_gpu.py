"""convert-attention-to-gpu: one fused kernel per attention, its PTX assembled by ptxas."""

import pytest

import mlc
from mlc.backend.ptx import kernel_names, to_ptx
from tests.gpu.targets import assemble

Q, KV, M = "tensor<2x4x37x8xbf16>", "tensor<2x2x45x8xbf16>", "tensor<37x45xbf16>"
PROGRAM = f"""
func.func @attn(%q: {Q}, %k: {KV}, %v: {KV}, %m: {M}) -> {Q} {{
  %o = ml.attention %q, %k, %v, %m {{scale = 0.35 : f64, causal = true}}
    : ({Q}, {KV}, {KV}, {M}) -> {Q}
  func.return %o : {Q}
}}
"""


@pytest.mark.parametrize("sm", ["sm_80", "sm_90a"])
def test_one_kernel_assembles(sm: str):
    lowered = mlc.compile(PROGRAM, target="gpu", emit="nvvm")
    assert kernel_names(lowered) == ["attn_kernel_0"]  # the whole attention, one launch
    assemble(to_ptx(lowered, sm), sm)

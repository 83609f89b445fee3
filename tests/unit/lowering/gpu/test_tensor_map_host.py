"""
The host side of the TMA-fed wgmma kernel without a GPU: a bf16 matmul compiled with
`MLC_WGMMA=tma` gets a tensor map per operand before its launch, from fields checked
at compile time, each from a stub of its own that encodes it again only for another
tensor, into a buffer the runtime allocates; the host code translates, verifies and
compiles for the CPU.
"""

import re

import pytest

import mlc
from mlc.backend.cuda import host_module
from mlc.backend.jit import compile_object
from mlc.backend.llvm import to_llvm_ir

MATMUL = """
func.func @main(%a: tensor<200x72xbf16>, %b: tensor<72x264xbf16>) -> tensor<200x264xbf16> {
  %c = ml.matmul %a, %b : (tensor<200x72xbf16>, tensor<72x264xbf16>) -> tensor<200x264xbf16>
  func.return %c : tensor<200x264xbf16>
}
"""


@pytest.fixture(scope="module")
def host(request):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLC_WGMMA", "tma")
        lowered = mlc.compile(MATMUL, target="cuda", emit="nvvm", sm="sm_90a")
    return host_module(lowered)


def test_maps_made_before_the_launch_once_per_tensor(host):
    ir = to_llvm_ir(host)
    main = ir[ir.index('@"main"(') :]
    main = main[: main.index("\n}\n")]
    calls = re.findall(r'call \w+ \w+ @"?(\w+)"?\(', main)
    maps = [i for i, name in enumerate(calls) if name.startswith("__mlc_tensor_map_")]
    launch = next(i for i, name in enumerate(calls) if name.startswith("__mlc_launch_"))
    assert [calls[i] for i in maps] == ["__mlc_tensor_map_0", "__mlc_tensor_map_1"]
    assert max(maps) < launch
    # A: bf16 (9), K = 72 innermost, 200 rows, 144-byte rows, 64 x 128 boxes;
    # B: N = 264 innermost, 72 rows, 528-byte rows, 64 x 64 panels
    assert "i32 9, i32 0, i32 3, i32 2, i32 0, i64 72, i64 200, i64 144, i32 64, i32 128" in main
    assert "i32 9, i32 0, i32 3, i32 2, i32 0, i64 264, i64 72, i64 528, i32 64, i32 64" in main
    # each site's stub: its buffer (the runtime's) at once for the tensor it last encoded
    site = ir[ir.index('define internal i64 @"__mlc_tensor_map_0"(') :]
    site = site[: site.index("\n}\n")]
    cached = re.search(r'(%"\.\d+") = load i64, i64\* @"__mlc_tensor_map_0_tensor"', site)
    assert cached and f"icmp eq i64 {cached.group(1)}" in site
    assert site.index("cuTensorMapEncodeTiled") < site.index("cuMemcpyHtoDAsync_v2")
    assert "cuMemAllocAsync" not in site


def test_host_code_compiles(host):
    compiled = compile_object(host)
    assert compiled is not None

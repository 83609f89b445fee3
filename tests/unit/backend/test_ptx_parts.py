"""
GPU kernels compiled to PTX in parts: the joined PTX defines each kernel once, as the
whole module's does, assembles with ptxas, is the same whether workers compiled parts or
not, comes from the disk cache the second time, and (on a GPU) computes what numpy does.
"""

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc.backend import ptx, ptx_parts, split_codegen
from mlc.compiler import executable_cache

PROGRAM = """
func.func @main(%x: tensor<37x19xf32>, %w: tensor<19x23xf32>) -> tensor<37x23xf32> {
  %y = ml.matmul %x, %w : (tensor<37x19xf32>, tensor<19x23xf32>) -> tensor<37x23xf32>
  %e = ml.exp %y : (tensor<37x23xf32>) -> tensor<37x23xf32>
  %s = ml.softmax %e {axis = 1 : i64} : (tensor<37x23xf32>) -> tensor<37x23xf32>
  %t = ml.tanh %s : (tensor<37x23xf32>) -> tensor<37x23xf32>
  %r = ml.reduce_sum %y {axes = array<i64: 0>, keepdims = true}
    : (tensor<37x23xf32>) -> tensor<1x23xf32>
  %o = ml.add %t, %r : (tensor<37x23xf32>, tensor<1x23xf32>) -> tensor<37x23xf32>
  func.return %o : tensor<37x23xf32>
}
"""


@pytest.fixture
def split_everything(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ptx_parts, "MIN_OPS", 0)
    monkeypatch.setattr(ptx_parts, "MIN_PART_OPS", 0)
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MLC_CACHE", raising=False)


def _entries(text: str) -> list[str]:
    return re.findall(r"^\.visible \.entry (\w+)\(", text, re.MULTILINE)


def _lowered():
    return mlc.compile(PROGRAM, target="gpu", emit="nvvm", sm="sm_80")


def _assemble(text: str, tmp_path: Path) -> None:
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas (CUDA toolkit) not on PATH: PTX not assembled")
    path = tmp_path / "k.ptx"
    path.write_text(text)
    done = subprocess.run(
        ["ptxas", "-arch=sm_80", str(path), "-o", str(tmp_path / "k.cubin")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_small_programs_compile_whole(monkeypatch: pytest.MonkeyPatch):
    module = _lowered()
    kernels = ptx.kernel_ops(module)
    assert ptx_parts.split(kernels, set(ptx.kernel_names(module))) == [kernels]


@pytest.mark.usefixtures("split_everything")
def test_parts_join_into_the_kernels_of_the_whole(monkeypatch, tmp_path: Path):
    module = _lowered()
    names = ptx.kernel_names(module)
    assert len(ptx_parts.split(ptx.kernel_ops(module), set(names))) == len(names) > 2
    joined = ptx.to_ptx(module, "sm_80", processes=1)
    monkeypatch.setattr(ptx_parts, "MIN_OPS", 10**9)
    whole = ptx.to_ptx(module, "sm_80", processes=1)
    assert sorted(_entries(joined)) == sorted(_entries(whole)) == sorted(names)
    assert joined.count(".target sm_80") == 1
    _assemble(joined, tmp_path)


@pytest.mark.usefixtures("split_everything")
def test_workers_make_the_same_ptx_and_the_cache_keeps_it(monkeypatch, tmp_path: Path):
    module = _lowered()
    monkeypatch.setenv("MLC_CACHE", "0")
    here = ptx.to_ptx(module, "sm_80", processes=1)
    spread = ptx.to_ptx(module, "sm_80", processes=2)
    assert here == spread
    monkeypatch.delenv("MLC_CACHE")
    compiled: list[int] = []
    original = split_codegen.run_jobs

    def counted(texts, target, processes=None):
        compiled.append(len(texts))
        return original(texts, target, processes)

    monkeypatch.setattr(ptx, "run_jobs", counted)
    assert ptx.to_ptx(module, "sm_80") == here
    assert ptx.to_ptx(module, "sm_80") == here
    assert compiled == [len(ptx.kernel_names(module)), 0]  # all parts, then none


def test_a_kernel_calling_an_undefined_function_is_one_error(monkeypatch):
    module = _lowered()
    monkeypatch.setenv("MLC_CACHE", "0")
    redirect = ptx.redirect_math  # to libdevice functions, here misnamed

    def misnamed(text: str, declared: list[str]) -> str:
        return redirect(text, declared).replace("@__nv_", "@nx_")

    monkeypatch.setattr(ptx, "redirect_math", misnamed)
    with pytest.raises(ptx.PTXError, match="no definition of: @nx_"):
        ptx.to_ptx(module, "sm_80", processes=1)


@pytest.mark.gpu
@pytest.mark.usefixtures("split_everything")
def test_kernels_in_parts_compute_what_numpy_does():
    from tests.gpu.targets import gpu_unavailable_reason

    if (reason := gpu_unavailable_reason()) is not None:
        pytest.skip(reason)
    executable_cache.clear()
    rng = np.random.default_rng()
    x = rng.standard_normal((37, 19)).astype(np.float32)
    w = rng.standard_normal((19, 23)).astype(np.float32) / 4
    y = x @ w
    e = np.exp(y)
    s = np.exp(e - e.max(1, keepdims=True))
    s /= s.sum(1, keepdims=True)
    expected = np.tanh(s) + y.sum(0, keepdims=True)
    result = mlc.compile(PROGRAM, target="cuda")(x, w)
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


HELPER = """target triple = "nvptx64-nvidia-cuda"
@table = internal addrspace(1) constant [4 x float] [float 1.5, float 2.5, float 3.5, float {k}.5]
define internal float @helper(float %x, i64 %i) #0 {{
  %p = getelementptr [4 x float], ptr addrspace(1) @table, i64 0, i64 %i
  %t = load float, ptr addrspace(1) %p
  %y = fmul float %x, %t
  ret float %y
}}
define ptx_kernel void @kernel_{k}(ptr addrspace(1) %out, i64 %i) {{
  %v = load float, ptr addrspace(1) %out
  %r = call float @helper(float %v, i64 %i)
  store float %r, ptr addrspace(1) %out
  ret void
}}
attributes #0 = {{ noinline }}
"""


def test_names_two_parts_both_define_are_renamed_in_the_later(tmp_path: Path):
    from mlc.backend import codegen_worker

    texts = [codegen_worker.compile_ptx(HELPER.format(k=k), "sm_80", "+ptx70", "") for k in (1, 2)]
    assert all(".func" in text and "helper" in text and "table" in text for text in texts)
    joined = ptx_parts.join(texts)
    assert ptx_parts._defined(joined) == {"helper", "table", "helper_p1", "table_p1"}
    assert joined.startswith(texts[0])  # the first part as it was
    second = joined[len(texts[0]) :]
    assert "helper_p1" in second and "table_p1" in second
    assert ptx_parts._defined(second) == {"helper_p1", "table_p1"}
    assert sorted(_entries(joined)) == ["kernel_1", "kernel_2"]
    _assemble(joined, tmp_path)

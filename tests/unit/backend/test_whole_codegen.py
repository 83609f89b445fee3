"""
Programs compiled whole by the long-lived worker: the same bytes as in this process,
a fresh worker after `WORKER_JOBS` programs, and a process that compiles many programs
stays flat (LLVM's pipeline keeps memory it never returns, in the worker now).
"""

import ctypes
import ctypes.util
import os

import numpy as np
import pytest

import mlc
from mlc.backend import jit, whole_codegen
from mlc.compiler import executable_cache

TEXT = """define float @f{i}(float %x) {{
  %y = fadd float %x, {i}.0
  %z = fmul float %y, %y
  ret float %z
}}
"""


def _resident_mib() -> float:
    name = ctypes.util.find_library("c")
    if name:
        trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
        if trim is not None:
            trim(0)  # freed memory back to the system, so only what is held counts
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_the_worker_makes_the_bytes_this_process_makes():
    text = TEXT.format(i=3)
    compiled, seconds = whole_codegen.compile_text(text)
    assert compiled == jit.compile_object(text)
    assert set(seconds) == {"LLVM optimize", "LLVM codegen"}


def test_a_fresh_worker_after_its_jobs(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(whole_codegen, "WORKER_JOBS", 2)
    whole_codegen._worker.close()
    pids = []
    for i in range(4):
        whole_codegen.compile_text(TEXT.format(i=i))
        assert whole_codegen._worker.process is not None
        pids.append(whole_codegen._worker.process.pid)
    assert pids[0] == pids[1] != pids[2] == pids[3]


def test_invalid_ir_is_a_jit_error():
    with pytest.raises(jit.JITError, match="invalid LLVM IR"):
        whole_codegen.compile_text("define i32 @g( {")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc")
def test_many_programs_keep_the_process_flat(monkeypatch: pytest.MonkeyPatch):
    texts = [TEXT.format(i=i) for i in range(130)]
    for text in texts[:10]:  # warm: the worker started, allocators settled
        whole_codegen.compile_text(text)
    before = _resident_mib()
    for text in texts[10:]:
        whole_codegen.compile_text(text)
    # In this process, LLVM's pipeline keeps ~0.08 MiB a program: ~10 MiB for these.
    assert _resident_mib() - before < 2.5


def test_compiles_past_the_in_process_ones_run(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(whole_codegen, "_compiled_here", whole_codegen.IN_PROCESS)
    ran = []
    original = whole_codegen.compile_text
    monkeypatch.setattr(
        whole_codegen, "compile_text", lambda *args: ran.append(1) or original(*args)
    )
    monkeypatch.setenv("MLC_CACHE", "0")
    executable_cache.clear()
    source = """
func.func @main(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %r = ml.tanh %x : (tensor<?x5xf32>) -> tensor<?x5xf32>
  func.return %r : tensor<?x5xf32>
}
"""
    exe = mlc.compile(source)
    assert {"LLVM optimize", "LLVM codegen"} <= set(exe.compile_times)  # timed by the worker
    assert ran == [1]
    x = np.random.default_rng().standard_normal((7, 5)).astype(np.float32)
    np.testing.assert_allclose(exe(x), np.tanh(x), rtol=1e-5, atol=1e-6)

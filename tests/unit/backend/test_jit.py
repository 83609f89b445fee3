"""The LLVM IR translation and the JIT's failure modes (the happy path is in tests/e2e)."""

import ctypes
from pathlib import Path

import llvmlite.binding as llvm
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f64

from mlc.backend.jit import JITError, JITModule
from mlc.backend.llvm import LLVMTranslationError, host_triple, to_llvm_ir

ADD = """
define double @add(double %a, double %b) {
  %s = fadd double %a, %b
  ret double %s
}
"""


def test_translation_uses_the_host_triple():
    assert f'target triple = "{host_triple()}"' in to_llvm_ir(ModuleOp([]))


def test_translation_of_unlowered_code_names_the_op():
    module = ModuleOp([func.FuncOp("f", ((f64,), (f64,)))])
    with pytest.raises(LLVMTranslationError, match=r"func\.func.*convert-to-llvm"):
        to_llvm_ir(module)


def test_jit_accepts_llvm_ir_text():
    add = JITModule(ADD).scalar_function("add", [ctypes.c_double] * 2, ctypes.c_double)
    assert add(1.5, 2.25) == 3.75


def test_invalid_ir_is_written_to_a_file_named_in_the_error():
    bad = ADD.replace("ret double %s", "ret i32 %s")
    with pytest.raises(JITError, match=r"invalid LLVM IR \(written to (.*\.ll)\)") as info:
        JITModule(bad)
    path = Path(str(info.value).split("written to ")[1].split(")")[0])
    try:
        assert path.read_text() == bad
    finally:
        path.unlink()


def test_missing_function_is_an_error():
    with pytest.raises(JITError, match="no function 'nope'"):
        JITModule(ADD).address("nope")


def test_engines_do_not_share_a_target_machine():
    # Each engine owns its target machine; two modules must both stay callable.
    first, second = JITModule(ADD), JITModule(ADD)
    del first
    assert second.scalar_function("add", [ctypes.c_double] * 2, ctypes.c_double)(1, 2) == 3
    assert llvm.get_host_cpu_name()

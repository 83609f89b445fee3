"""The JIT refuses machine code that needs a symbol the process lacks (it would jump to 0)."""

import ctypes

import pytest

from mlc.backend.jit import JITError, JITModule

CALLS_MISSING = """
declare i32 @mlc_no_such_function(i32)
define i32 @f(i32 %x) {
  %y = call i32 @mlc_no_such_function(i32 %x)
  ret i32 %y
}
"""

CALLS_LIBM = """
declare double @llvm.exp.f64(double)
define double @h(double %x) {
  %y = call double @llvm.exp.f64(double %x)
  ret double %y
}
"""


def test_missing_declared_function_is_refused_with_its_name():
    with pytest.raises(JITError, match=r"^compiled code needs 'mlc_no_such_function'"):
        JITModule(CALLS_MISSING)


def test_symbols_the_process_has_are_fine():
    exp = JITModule(CALLS_LIBM).scalar_function("h", [ctypes.c_double], ctypes.c_double)
    assert exp(1.0) == pytest.approx(2.718281828459045)

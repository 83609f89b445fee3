"""The JIT refuses machine code that needs a symbol the process lacks (it would jump to 0)."""

import ctypes

import llvmlite.binding as llvm
import pytest

from mlc.backend.jit import JITError, JITModule

CALLS_MISSING = """
declare i32 @mlc_no_such_function(i32)
define i32 @f(i32 %x) {
  %y = call i32 @mlc_no_such_function(i32 %x)
  ret i32 %y
}
"""

# LLVM lowers this to a call to compiler-rt's __truncdfhf2 on x86 (mlc never emits it).
NEEDS_COMPILER_RT = """
define half @g(double %x) {
  %y = fptrunc double %x to half
  ret half %y
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


def test_missing_library_call_is_refused():
    # GCC 12's libgcc_s also defines it, and C++ exception unwinding loads libgcc_s
    # into the process: then the call resolves and runs correctly.
    JITModule(CALLS_LIBM)  # an engine makes the process's libraries visible
    if llvm.address_of_symbol("__truncdfhf2"):
        pytest.skip("this process has loaded a library that defines __truncdfhf2")
    with pytest.raises(JITError, match=r"needs '__\w+'"):
        JITModule(NEEDS_COMPILER_RT)


def test_symbols_the_process_has_are_fine():
    exp = JITModule(CALLS_LIBM).scalar_function("h", [ctypes.c_double], ctypes.c_double)
    assert exp(1.0) == pytest.approx(2.718281828459045)

"""
Run-time checks of compiled code: `mlc_assert_failed(message)` and the error it becomes.

`convert-to-llvm` lowers `cf.assert` to a call of `mlc_assert_failed` with a one-line
diagnostic (`file:line:col: error: 'ml.add' op ...`) when the condition is false, and
the compiled code then carries on (mlc.lowering.convert_to_llvm.assertions). The symbol
is a ctypes callback registered with LLVM before any module is JIT-compiled; it keeps the
first message per thread. `mlc_assert_failed_value(message, value)` is its twin for
checks that name a value (an out-of-range index): the i64 goes into the message's `{}`.
Whoever calls compiled code calls `raise_failure()` once the
call has returned (and its results are owned), so the failure surfaces as a Python
`RuntimeCheckError` in the caller, never as a crash or a wrong result.

Checks run on the thread that called the compiled function: convert-to-llvm refuses a
`cf.assert` inside a parallel loop, whose body may run on a pool thread.
"""

import ctypes
import threading
from functools import cache

import llvmlite.binding as llvm

SYMBOL = "mlc_assert_failed"  # as mlc.lowering.convert_to_llvm.assertions calls it
VALUE_SYMBOL = "mlc_assert_failed_value"  # the same, with an i64 for the message's `{}`

_local = threading.local()
# Failures recorded and not yet raised, in all threads: when there are none (nearly
# always) `raise_failure` returns without looking up its thread's record, a failed
# attribute lookup that cost 0.7 us of every call. Updated under the GIL, which the
# callback holds.
_pending = 0


class RuntimeCheckError(ValueError):
    """A check in compiled code failed: arguments a program cannot run on (bad sizes)."""


def _record(message: bytes | None) -> None:
    global _pending
    if getattr(_local, "failure", None) is None:
        _local.failure = (message or b"error: a run-time check failed").decode(errors="replace")
        _pending += 1


def _record_value(message: bytes | None, value: int) -> None:
    text = (message or b"error: a run-time check failed: {}").decode(errors="replace")
    _record(text.replace("{}", str(value), 1).encode())


_callback = ctypes.CFUNCTYPE(None, ctypes.c_char_p)(_record)  # alive for the process
_value_callback = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int64)(_record_value)


@cache
def install() -> None:
    """Make `mlc_assert_failed` visible to code the JIT compiles (once per process)."""
    llvm.add_symbol(SYMBOL, ctypes.cast(_callback, ctypes.c_void_p).value)
    llvm.add_symbol(VALUE_SYMBOL, ctypes.cast(_value_callback, ctypes.c_void_p).value)


def raise_failure() -> None:
    """Raise the failure this thread's last compiled call recorded, if any (and forget it)."""
    global _pending
    if not _pending:
        return
    failure = getattr(_local, "failure", None)
    if failure is not None:
        _local.failure = None
        _pending -= 1
        raise RuntimeCheckError(failure)

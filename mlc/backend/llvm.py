"""
Translate an `llvm`-dialect module to LLVM IR (an llvmlite module).

A translation, not a pass (R1): it leaves MLIR. It is xDSL's `convert_module` with the
host's target triple, so the JIT and ahead-of-time output agree on the ABI. The input
must hold only `llvm.func`/`llvm.mlir.global` at the top level; run `convert-to-llvm`
first. Anything xDSL cannot translate becomes an `LLVMTranslationError` naming the op,
instead of a bare `NotImplementedError` from deep inside xDSL.
"""

import llvmlite.binding as llvm_binding
import llvmlite.ir as llvm_ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import LLVMTranslationException


class LLVMTranslationError(Exception):
    """The module holds something the LLVM IR translation does not handle."""


def host_triple() -> str:
    """The target triple of the machine we run on (what the JIT compiles for)."""
    return llvm_binding.get_default_triple()


def to_llvmlite(module: ModuleOp) -> llvm_ir.Module:
    """The llvmlite module for an `llvm`-dialect module, for the host triple."""
    try:
        return convert_module(module, fallback_target_triple=host_triple())
    except (NotImplementedError, LLVMTranslationException, KeyError) as error:
        raise LLVMTranslationError(
            f"cannot translate to LLVM IR: {error} (run convert-to-llvm first?)"
        ) from error


def to_llvm_ir(module: ModuleOp) -> str:
    """The textual LLVM IR of an `llvm`-dialect module."""
    return str(to_llvmlite(module))

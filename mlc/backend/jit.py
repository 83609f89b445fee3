"""
Run `llvm`-dialect modules on the host CPU through llvmlite's MCJIT.

Why a class: the execution engine owns the machine code; a function pointer taken from
it is valid only while the engine lives, so `JITModule` keeps the engine, and callables
made by `scalar_function` keep the `JITModule`. The IR is optimised at O3 for the host
CPU (its name and features, as `-march=native` would) with LLVM's new pass manager,
leaving loop unrolling and vectorisation to LLVM (XDSL-NOTES: keep IR small in mlc).

If llvmlite rejects the IR (a bug in a lowering), the IR is written to a temporary file
and the error names it (R18), so the failing module can be fed to `opt`/`llc` by hand.
"""

import ctypes
import tempfile
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

from mlc.backend.llvm import to_llvm_ir
from mlc.backend.symbols import unresolved_symbols


class JITError(Exception):
    """llvmlite rejected the LLVM IR mlc produced, or a symbol is missing."""


@cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def _target_machine() -> llvm.TargetMachine:
    """
    A new target machine for the host CPU at O3.

    New each time, not cached: an MCJIT engine takes ownership of its target machine
    and frees it with itself, so sharing one between engines crashes the process.
    """
    _initialize()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=3,
    )


def _dump_ir(ir_text: str) -> str:
    """Write IR to a temporary file that outlives the process; its path."""
    with tempfile.NamedTemporaryFile(
        "w", prefix="mlc-", suffix=".ll", delete=False
    ) as handle:
        handle.write(ir_text)
        return handle.name


def parse_and_verify(ir_text: str) -> llvm.ModuleRef:
    """The llvmlite module for LLVM IR text; a `JITError` naming a dump file if invalid."""
    try:
        module = llvm.parse_assembly(ir_text)
        module.verify()
    except RuntimeError as error:
        path = _dump_ir(ir_text)
        raise JITError(f"invalid LLVM IR (written to {path}): {error}") from None
    return module


def optimize(
    module: llvm.ModuleRef, machine: llvm.TargetMachine, speed_level: int = 3
) -> None:
    """Run LLVM's default `O<speed_level>` pipeline for `machine` on `module`, in place."""
    options = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


class JITModule:
    """An `llvm`-dialect module compiled to host machine code, ready to call."""

    def __init__(self, module: ModuleOp | str, opt_level: int = 3):
        ir_text = module if isinstance(module, str) else to_llvm_ir(module)
        self.llvm_module = parse_and_verify(ir_text)
        machine = _target_machine()  # owned by the engine from here on
        if opt_level:
            optimize(self.llvm_module, machine, opt_level)
        self.engine = llvm.create_mcjit_compiler(self.llvm_module, machine)
        objects: list[bytes] = []
        self.engine.set_object_cache(lambda _module, code: objects.append(code))
        self.engine.finalize_object()
        missing = [name for code in objects for name in unresolved_symbols(code)]
        if missing:  # the code would jump to address 0: refuse it
            raise JITError(f"compiled code needs '{missing[0]}', which the JIT process lacks")
        self.engine.run_static_constructors()

    @property
    def optimized_ir(self) -> str:
        """The LLVM IR after optimisation (for tests and debugging)."""
        return str(self.llvm_module)

    def address(self, name: str) -> int:
        """The address of function `name`; a `JITError` if the module has none."""
        address = self.engine.get_function_address(name)
        if not address:
            raise JITError(f"no function '{name}' in the JIT module")
        return address

    def scalar_function(
        self,
        name: str,
        argtypes: Sequence[type[Any]],
        restype: type[Any] | None,
    ) -> Callable[..., Any]:
        """
        Function `name` as a Python callable through ctypes (`ctypes.c_double`, ...).

        The callable holds a reference to this `JITModule`, so the code stays alive.
        """
        prototype = ctypes.CFUNCTYPE(restype, *argtypes)
        function = prototype(self.address(name))
        function.jit_module = self  # pyright: ignore[reportAttributeAccessIssue]
        return function


def scalar_function(
    module: ModuleOp | str,
    name: str,
    argtypes: Sequence[type[Any]],
    restype: type[Any] | None,
) -> Callable[..., Any]:
    """JIT-compile `module` and return function `name` as a ctypes callable."""
    return JITModule(module).scalar_function(name, argtypes, restype)

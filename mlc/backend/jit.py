"""
Run `llvm`-dialect modules on the host CPU through llvmlite's MCJIT.

Why a class: the execution engine owns the machine code; a function pointer taken from
it is valid only while the engine lives, so `JITModule` keeps the engine, and callables
made by `scalar_function` keep the `JITModule`. The IR is optimised at `OPT_LEVEL` for
the host CPU (its name and features, as `-march=native` would) with LLVM's new pass
manager, leaving loop unrolling and vectorisation to LLVM (XDSL-NOTES: keep IR small).
O2, not O3: both vectorise, but on the example CNN O3 took 6x longer to optimise and
its code ran 7x slower, while matmul, softmax and elementwise kernels ran the same
(bench/results/compile-time.md).

Compiling and loading are two steps: `compile_object` makes an object file (and keeps
the optimised IR as bitcode), and `JITModule` loads it into an engine that resolves its
calls (`expf`, ...) against the process, and `malloc`/`free` against mlc's caching
allocator (`mlc.backend.buffers`). Freshly compiled code and code from
the on-disk cache (`mlc.backend.cache`) thus take the same path into memory.

If llvmlite rejects the IR (a bug in a lowering), the IR is written to a temporary file
and the error names it (R18), so the failing module can be fed to `opt`/`llc` by hand.
"""

import ctypes
import tempfile
from collections.abc import Callable, Sequence
from functools import cache, cached_property
from typing import Any

import llvmlite.binding as llvm
from xdsl.dialects.builtin import ModuleOp

from mlc import resources, timing
from mlc.backend import assertions, buffers, half_conversions, parallel
from mlc.backend.compiled import CompiledObject
from mlc.backend.symbols import unresolved_symbols
from mlc.timing import Timer

OPT_LEVEL = 2  # LLVM's -O level for compiled programs (see the module docstring)


class JITError(Exception):
    """llvmlite rejected the LLVM IR mlc produced, or a symbol is missing."""


@cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    parallel.install()  # compiled parallel loops call into mlc's thread pool
    buffers.install()  # compiled code's malloc/free keep large buffers for reuse
    assertions.install()  # failed run-time checks report to the caller
    half_conversions.install()  # compiler-rt's f16 conversions, should LLVM call them


def host_features(cpu: str, features: dict[str, bool]) -> str:
    """
    The LLVM feature string for the host: its own features, as `-march=native`.

    With AVX-512 on AMD (Zen 4 on), 512-bit vectors run at full clock, so LLVM's
    `prefer-256-bit` tuning, which caps auto-vectorisation at 256 bits for Intel
    parts that throttle on 512-bit code, is turned off explicitly.
    """
    text = ",".join(f"{'+' if on else '-'}{name}" for name, on in sorted(features.items()))
    if features.get("avx512f") and cpu.startswith("znver"):
        text += ",-prefer-256-bit"
    return text


def target_description() -> tuple[str, str]:
    """The host CPU's name and LLVM feature string (what `_target_machine` targets)."""
    _initialize()
    cpu = llvm.get_host_cpu_name()
    return cpu, host_features(cpu, dict(llvm.get_host_cpu_features()))


def _target_machine() -> llvm.TargetMachine:
    """
    A new target machine for the host CPU at O3.

    New each time, not cached: an MCJIT engine takes ownership of its target machine
    and frees it with itself, so sharing one between engines crashes the process.
    """
    cpu, features = target_description()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=3)


def _dump_ir(ir_text: str) -> str:
    """Write IR to a temporary file that outlives the process; its path."""
    with tempfile.NamedTemporaryFile("w", prefix="mlc-", suffix=".ll", delete=False) as handle:
        handle.write(ir_text)
        return handle.name


def parse_and_verify(ir_text: str) -> llvm.ModuleRef:
    """The llvmlite module for LLVM IR text, in an LLVM context of its own (freed with
    the module: what a program's IR interns, its types and constants, would stay in the
    global context for the life of the process); a `JITError` naming a dump file if
    invalid."""
    try:
        module = llvm.parse_assembly(ir_text, context=llvm.create_context())
        module.verify()
    except RuntimeError as error:
        path = _dump_ir(ir_text)
        raise JITError(f"invalid LLVM IR (written to {path}): {error}") from None
    return module


def optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine, speed_level: int = 3) -> None:
    """Run LLVM's default `O<speed_level>` pipeline for `machine` on `module`, in place."""
    options = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


def bind_resources() -> None:
    """
    Point the symbols of the `dense_resource` constants this process holds at their data.

    Compiled code declares each resource as an external global and reads the weights in
    place (they stay in `mlc.resources`, read-only, never freed). Object code loaded from
    the disk cache names them the same way, since a handle is a digest of its bytes.
    """
    for handle, array in resources.stored():
        llvm.add_symbol(resources.symbol_name(handle), array.ctypes.data)


def compile_object(
    module: ModuleOp | str, opt_level: int = OPT_LEVEL, *, timer: Timer | None = None
) -> CompiledObject:
    """
    Translate, verify, optimise (at `O<opt_level>`, 0 for none) and compile `module`;
    `timer` (else the active `mlc.timing` timer) gets the wall time of each step.
    """
    # Imported here: loading cached machine code needs no LLVM translation (nor xDSL's
    # llvm dialect, ~0.4 s to import).
    from mlc.backend.llvm import to_llvm_ir

    phase = timer.phase if timer is not None else timing.phase
    with phase("translate to LLVM IR"):
        ir_text = module if isinstance(module, str) else to_llvm_ir(module)
        llvm_module = parse_and_verify(ir_text)
    machine = _target_machine()
    with phase("LLVM optimize"):
        if opt_level:
            optimize(llvm_module, machine, opt_level)
    with phase("LLVM codegen"):
        object_code = machine.emit_object(llvm_module)
        bitcode = llvm_module.as_bitcode()
    return CompiledObject(object_code, bitcode)


class JITModule:
    """An `llvm`-dialect module compiled to host machine code, ready to call."""

    def __init__(self, module: ModuleOp | str, opt_level: int = OPT_LEVEL):
        self._load(compile_object(module, opt_level))

    @classmethod
    def from_object(cls, compiled: CompiledObject) -> "JITModule":
        """Load machine code compiled before (in this process or, cached, in another)."""
        jit = cls.__new__(cls)
        jit._load(compiled)
        return jit

    def _load(self, compiled: CompiledObject) -> None:
        self.compiled = compiled
        _initialize()
        bind_resources()
        # An empty module only gives the engine a target; the code comes from the object.
        # Creating the engine also makes the process's own symbols (libc) visible.
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
        missing = unresolved_symbols(compiled.objects)
        if missing:  # the code would jump to address 0: refuse it
            raise JITError(f"compiled code needs '{missing[0]}', which the JIT process lacks")
        try:
            for object_code in compiled.objects:  # parts call each other: one engine
                self.engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
            self.engine.finalize_object()
        except RuntimeError as error:
            raise JITError(f"cannot load the compiled object: {error}") from None

    @cached_property
    def optimized_ir(self) -> str:
        """The LLVM IR after optimisation (for tests and debugging), parts linked."""
        context = llvm.create_context()
        module = llvm.parse_bitcode(self.compiled.bitcode, context=context)
        for part in self.compiled.parts:
            module.link_in(llvm.parse_bitcode(part.bitcode, context=context))
        return str(module)

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

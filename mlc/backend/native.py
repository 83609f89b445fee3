"""
Runtime code that mlc writes in LLVM IR (the thread pool, the buffer cache).

Compiled code calls it natively, with no Python in between, so it is compiled for the
host once, kept in the on-disk cache like any program (LLVM's code generator takes
30-50 ms even for these few functions, a cache hit a few), and loaded into an MCJIT
engine that is never freed: compiled programs and result arrays hold addresses into
it until the very end of the process.
"""

import ctypes

import llvmlite.binding as llvm

from mlc.backend import cache
from mlc.backend.compiled import CompiledObject

CODEGEN_LEVEL = 2


def _machine() -> llvm.TargetMachine:
    """A target machine for the host (a new one per engine, which takes ownership)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), opt=CODEGEN_LEVEL)


def object_code(ir_text: str) -> bytes:
    """`ir_text` compiled for the host, from the disk cache when it holds it."""
    key = cache.key(ir_text, "runtime", f"codegen O{CODEGEN_LEVEL}")
    cached = cache.load(key)
    if cached is not None:
        return cached.compiled.object_code
    module = llvm.parse_assembly(ir_text)
    module.verify()
    code = _machine().emit_object(module)
    cache.store(key, cache.Entry(CompiledObject(code, b"")))
    return code


def compile_runtime(ir_text: str) -> llvm.ExecutionEngine:
    """An engine holding `ir_text` compiled for the host; its external calls are resolved
    now, against the process, so symbols bound later do not change them."""
    code = object_code(ir_text)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _machine())
    engine.add_object_file(llvm.ObjectFileRef.from_data(code))
    engine.finalize_object()
    # Immortal: arrays still alive while the interpreter shuts down free their buffers
    # through this code, after module globals (and a plain reference) are gone.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(engine))
    return engine


def function_address(engine: llvm.ExecutionEngine, name: str) -> int:
    """The address of `name` in `engine` (a runtime function is always there)."""
    address = engine.get_function_address(name)
    assert address, f"runtime function {name} missing"
    return address

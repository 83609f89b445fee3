"""
Runtime code that mlc writes in LLVM IR (the thread pool, the buffer cache).

Compiled code calls it natively, with no Python in between, so it is compiled once per
process for the host, into an MCJIT engine kept for the life of the process: compiled
programs hold addresses into that engine, so it is never freed.
"""

import llvmlite.binding as llvm

_engines: list[llvm.ExecutionEngine] = []  # never freed (see the module docstring)


def compile_runtime(ir_text: str) -> llvm.ExecutionEngine:
    """An engine holding `ir_text` compiled for the host; its external calls are resolved
    now, against the process, so symbols bound later do not change them."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(), opt=2)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    _engines.append(engine)
    return engine


def function_address(engine: llvm.ExecutionEngine, name: str) -> int:
    """The address of `name` in `engine` (a runtime function is always there)."""
    address = engine.get_function_address(name)
    assert address, f"runtime function {name} missing"
    return address

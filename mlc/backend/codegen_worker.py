"""
Compile LLVM IR text to host machine code or to PTX: the work one code-generation
worker does.

`compile_one` is the only implementation of "verify, optimise, emit" for the split code
generation (`mlc.backend.split_codegen` for the host, `mlc.backend.ptx` for GPU kernels):
the parent process calls it for its own share of a program's modules and worker processes
call it for theirs, so both produce the same bytes for the same text. Run as a script
(`python -I codegen_worker.py`), the module reads pickled jobs from stdin and writes
each one's results to stdout, until stdin closes; it imports nothing of mlc (a worker
starts in ~0.1 s instead of the ~1 s that importing xDSL takes), which is why it depends
on llvmlite alone.

A job is `(target, [(index, ir_text), ...])`, the target one of
    ("cpu", cpu, features, opt_level)            -> (object code, optimised bitcode)
    ("ptx", sm, features, libdevice)             -> (PTX text, b"")
and the answer is a list of `(index, code, other, seconds)`, or `(index, None,
error_message, seconds)` for text that LLVM rejects (the parent reports it); `seconds`
is the wall time of each step (`LLVM optimize`, `LLVM codegen`), for the parent's report.

For PTX, the functions a text defines with external linkage are its kernels; the others,
and the libdevice functions linked in (`libdevice`: the bitcode's path, "" for none),
are internalised.
"""

import pickle
import sys
import time
from collections.abc import Callable
from functools import cache

import llvmlite.binding as llvm

Target = tuple[str | int, ...]
Job = tuple[Target, list[tuple[int, str]]]
Result = tuple[int, bytes | None, bytes | str, dict[str, float]]

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
_LOCAL = (llvm.Linkage.internal, llvm.Linkage.private)

_seconds: dict[str, float] = {}  # of the last `compile_one`, by step


@cache
def _initialize(ptx: bool) -> None:
    if ptx:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
    else:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()


def _optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine, opt_level: int) -> None:
    options = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


def compile_ir(ir_text: str, cpu: str, features: str, opt_level: int) -> tuple[bytes, bytes]:
    """The object code and optimised bitcode of `ir_text` for `cpu` with `features`,
    optimised at `O<opt_level>` (0 for none); RuntimeError if LLVM rejects the text."""
    _initialize(False)
    # A context of its own: what the process compiled before (types, names uniqued in
    # the global context) never changes the code, so this process and a fresh worker
    # produce the same bytes.
    module = llvm.parse_assembly(ir_text, context=llvm.create_context())
    module.verify()
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=cpu, features=features, opt=3)
    start = time.perf_counter()
    if opt_level:
        _optimize(module, machine, opt_level)
    optimized = time.perf_counter()
    object_code, bitcode = machine.emit_object(module), module.as_bitcode()
    _seconds["LLVM optimize"] = optimized - start
    _seconds["LLVM codegen"] = time.perf_counter() - optimized
    return object_code, bitcode


@cache
def _libdevice(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def compile_ptx(ir_text: str, sm: str, features: str, libdevice: str) -> str:
    """The PTX of the kernels in `ir_text` for `sm` (see the module docstring); a
    RuntimeError with a one-line message if LLVM rejects them."""
    _initialize(True)
    context = llvm.create_context()
    try:
        module = llvm.parse_assembly(ir_text, context=context)
    except RuntimeError as error:
        raise RuntimeError(f"invalid kernel LLVM IR: {error}") from None
    kernels = {f.name for f in module.functions if not f.is_declaration and f.linkage not in _LOCAL}
    try:
        if "@__nv_" in ir_text:
            module.link_in(llvm.parse_bitcode(_libdevice(libdevice), context=context))
        for function in module.functions:
            if not function.is_declaration and function.name not in kernels:
                function.linkage = "internal"
        module.verify()
    except RuntimeError as error:
        raise RuntimeError(f"invalid kernel LLVM IR: {error}") from None
    target = llvm.Target.from_triple(NVPTX_TRIPLE)
    machine = target.create_target_machine(cpu=sm, features=features, opt=3)
    _optimize(module, machine, 3)
    missing = [
        f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")
    ]
    if missing:
        names = ", ".join(f"@{name}" for name in sorted(missing))
        raise RuntimeError(f"kernels call functions the GPU has no definition of: {names}")
    return machine.emit_assembly(module)


def compile_one(target: Target, ir_text: str) -> tuple[bytes, bytes]:
    """What `target` makes of `ir_text` (see the module docstring)."""
    kind, *rest = target
    if kind == "ptx":
        sm, features, libdevice = (str(item) for item in rest)
        return compile_ptx(ir_text, sm, features, libdevice).encode(), b""
    cpu, features, opt_level = rest
    return compile_ir(ir_text, str(cpu), str(features), int(opt_level))


def run(job: Job, done: Callable[[], None] | None = None) -> list[Result]:
    """Compile each text of `job`, calling `done` after each; errors are returned, not
    raised."""
    target, texts = job
    results: list[Result] = []
    for index, text in texts:
        if results and done is not None:
            done()
        _seconds.clear()
        try:
            code, other = compile_one(target, text)
        except RuntimeError as error:
            results.append((index, None, str(error), dict(_seconds)))
        else:
            results.append((index, code, other, dict(_seconds)))
    if results and done is not None:
        done()
    return results


def main() -> None:
    """Answer jobs until the parent closes the pipe (one job, or many for a long-lived
    worker: `mlc.backend.whole_codegen`)."""
    while True:
        try:
            job = pickle.load(sys.stdin.buffer)  # from the parent process, which started us
        except EOFError:
            return
        pickle.dump(run(job), sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()

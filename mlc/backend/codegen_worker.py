"""
Compile LLVM IR text to host machine code: the work one code-generation worker does.

`compile_ir` is the only implementation of "verify, optimise, emit an object" for the
split code generation (`mlc.backend.split_codegen`): the parent process calls it for its
own share of a program's kernel modules and worker processes call it for theirs, so both
produce the same bytes for the same text. Run as a script (`python -I codegen_worker.py`),
the module reads one pickled job from stdin and writes the results to stdout; it imports
nothing of mlc (a worker starts in ~0.1 s instead of the ~1 s that importing xDSL takes),
which is why it depends on llvmlite alone.

A job is `(cpu, features, opt_level, [(index, ir_text), ...])`; the answer is a list of
`(index, object_code, bitcode)`, or `(index, None, error_message)` for text that LLVM
rejects (the parent reports it, naming a dump of the IR).
"""

import pickle
import sys

import llvmlite.binding as llvm

Job = tuple[str, str, int, list[tuple[int, str]]]
Result = tuple[int, bytes | None, bytes | str]

_initialized = False


def _initialize() -> None:
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialized = True


def compile_ir(ir_text: str, cpu: str, features: str, opt_level: int) -> tuple[bytes, bytes]:
    """The object code and optimised bitcode of `ir_text` for `cpu` with `features`,
    optimised at `O<opt_level>` (0 for none); RuntimeError if LLVM rejects the text."""
    _initialize()
    # A context of its own: what the process compiled before (types, names uniqued in
    # the global context) never changes the code, so this process and a fresh worker
    # produce the same bytes.
    module = llvm.parse_assembly(ir_text, context=llvm.create_context())
    module.verify()
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=cpu, features=features, opt=3)
    if opt_level:
        options = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        builder = llvm.create_pass_builder(machine, options)
        builder.getModulePassManager().run(module, builder)
    return machine.emit_object(module), module.as_bitcode()


def run(job: Job) -> list[Result]:
    """Compile each text of `job`; errors are returned, not raised."""
    cpu, features, opt_level, texts = job
    results: list[Result] = []
    for index, text in texts:
        try:
            object_code, bitcode = compile_ir(text, cpu, features, opt_level)
        except RuntimeError as error:
            results.append((index, None, str(error)))
        else:
            results.append((index, object_code, bitcode))
    return results


def main() -> None:
    job = pickle.load(sys.stdin.buffer)  # from the parent process, which started us
    pickle.dump(run(job), sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()

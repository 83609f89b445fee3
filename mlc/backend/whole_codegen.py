"""
Small programs compiled whole, without growing the process: LLVM's optimisation
pipeline, as llvmlite builds and runs it, keeps ~85 kB of native memory per run that it
never gives back (measured on llvmlite 0.50 / LLVM 22: building the pipeline ~31 kB,
running it ~24 kB more, with every llvmlite object disposed), so a process that compiles
many programs (800 small ones: +70 MB) would grow without end.

The first `IN_PROCESS` programs of a process are compiled in it (a script that compiles
a few starts no worker); later ones go to one long-lived worker process
(`mlc.backend.codegen_worker`, the code the split code generation runs, so the bytes are
the same), replaced by a fresh one after `WORKER_JOBS` programs: its growth is bounded,
and this process stays flat. Each program's LLVM IR is also parsed in an LLVM context of
its own (`jit.parse_and_verify`), so its types and constants leave with it.
"""

import atexit
import pickle
import subprocess
import sys
import threading

from xdsl.dialects.builtin import ModuleOp

from mlc.backend import codegen_worker
from mlc.backend.compiled import CompiledObject
from mlc.backend.jit import (
    OPT_LEVEL,
    JITError,
    compile_object,
    parse_and_verify,
    target_description,
)
from mlc.backend.llvm import to_llvm_ir
from mlc.timing import Timer

IN_PROCESS = 16  # programs compiled whole in this process before the long-lived worker
WORKER_JOBS = 200  # programs a long-lived worker compiles before a fresh one replaces it


class _LongLivedWorker:
    """One worker process answering job after job (`codegen_worker.main`), replaced by a
    fresh one after `WORKER_JOBS` jobs or if it died; closed when this process exits."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.jobs = 0
        self.lock = threading.Lock()
        atexit.register(self.close)

    def run(self, job: codegen_worker.Job) -> list[codegen_worker.Result]:
        with self.lock:
            if self.process is None or self.jobs >= WORKER_JOBS or self.process.poll() is not None:
                self.close()
                command = [sys.executable, "-I", codegen_worker.__file__]
                self.process = subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
                )
                self.jobs = 0
            assert self.process.stdin is not None and self.process.stdout is not None
            try:
                pickle.dump(job, self.process.stdin, pickle.HIGHEST_PROTOCOL)
                self.process.stdin.flush()
                results = pickle.load(self.process.stdout)
            except (OSError, EOFError, pickle.UnpicklingError):
                self.close()
                raise JITError("the code generation worker stopped") from None
            self.jobs += 1
            return results

    def close(self) -> None:
        if self.process is not None:
            for pipe in (self.process.stdin, self.process.stdout):
                if pipe is not None:
                    pipe.close()
            self.process.wait()
            self.process = None


_worker = _LongLivedWorker()
_compiled_here = 0


def compile_whole(module: ModuleOp, timer: Timer, opt_level: int = OPT_LEVEL) -> CompiledObject:
    """`module` compiled whole: in this process for its first `IN_PROCESS` programs,
    then by the long-lived worker (see the module docstring)."""
    global _compiled_here
    if _compiled_here < IN_PROCESS:
        _compiled_here += 1
        return compile_object(module, opt_level, timer=timer)
    with timer.phase("translate to LLVM IR"):
        text = to_llvm_ir(module)
    compiled, seconds = compile_text(text, opt_level)
    for step, spent in seconds.items():  # as `compile_object` reports them
        timer.add(step, spent)
    return compiled


def compile_text(
    ir_text: str, opt_level: int = OPT_LEVEL
) -> tuple[CompiledObject, dict[str, float]]:
    """LLVM IR text compiled (at `O<opt_level>`, for the host) by the long-lived worker:
    the same bytes as `jit.compile_object` makes in this process; with the seconds each
    step took there."""
    cpu, features = target_description()
    job = (("cpu", cpu, features, opt_level), [(0, ir_text)])
    [(_, object_code, other, seconds)] = _worker.run(job)
    if object_code is None:
        parse_and_verify(ir_text)  # raises a JITError naming a dump of the text
        raise JITError(f"LLVM rejected the module: {other}")
    assert isinstance(other, bytes)
    return CompiledObject(object_code, other), seconds

"""
Code generation on every core: a large `llvm`-dialect module is split into one LLVM
module per group of kernels plus one for the entry points, each optimised and compiled to
an object on its own (in worker processes, `mlc.backend.codegen_worker`), and the objects
are loaded together into one engine (`mlc.backend.jit.JITModule`).

The split (`split`) follows the references between functions: internal functions that
reference one another (an outlined loop and its `_chunk` body) stay together, and each
such group becomes a module; a function that several internal ones call (a shared
micro-kernel) is a group of its own, not the join of its callers'. The public
functions, with the groups too small to be worth a module of their own, form the entry
module, which comes first. A function called from
another module gets external linkage there and a declaration here; a global stays where
it is used, is copied into each user if it is an internal constant, and is otherwise
defined in one module (external) and declared in the others. Names are the program's
own, unique in it; each program has its own engine, so programs never see each other's.

Workers take LLVM IR text (llvmlite modules do not pickle) and return object code and
optimised bitcode. A program below `MIN_OPS` ops or with fewer than `MIN_MODULES`
modules is not split (`jit.compile_object` compiles it whole); whether one is split
depends on the program only, never on the machine, and the objects are the same whether
compiled in this process or in workers. This process compiles a share itself; the other
shares go to `os.process_cpu_count() - 1` workers, started as `python -I` on the worker's
file (no import of mlc or of the user's main module).

Each kernel part is also kept in the disk cache (`mlc.backend.cache`, whose writes are
atomic renames, safe when processes compile at once), keyed by its LLVM IR, the LLVM
version, the host CPU and the worker's code (`kernel_key`), not by mlc's sources: a
program that shares kernels with one compiled before, or that is compiled again after
an edit that left its kernels alone, reuses their code.
"""

import hashlib
import os
import pickle
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import llvmlite.binding as llvm_binding
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.ir import Operation

from mlc import progress
from mlc.backend import cache as kernel_cache
from mlc.backend import codegen_worker
from mlc.backend.compiled import CompiledObject
from mlc.backend.jit import OPT_LEVEL, JITError, parse_and_verify, target_description
from mlc.backend.llvm import ops_to_llvmlite
from mlc.timing import Timer

MIN_OPS = 8_000  # of `llvm` ops: smaller programs compile whole, in this process
MIN_MODULES = 4  # a split into fewer modules is not worth it
MIN_GROUP_OPS = 200  # a smaller group of kernels goes into the entry module
_LOCAL = ("internal", "private")


@dataclass
class Part:
    """The ops of one module of a split, and which of its symbols change linkage."""

    ops: list[Operation]
    exported: set[str]  # defined here, used elsewhere: external linkage
    declared: set[str]  # globals defined elsewhere: external declarations


def _linkage(op: llvm.FuncOp | llvm.GlobalOp) -> str:
    return op.linkage.linkage.data


def references(op: Operation) -> set[str]:
    """The symbols that the ops nested in `op` name (callees, addresses taken)."""
    names: set[str] = set()
    for inner in op.walk():
        for value in inner.properties.values():
            if isinstance(value, SymbolRefAttr):
                names.add(value.root_reference.data)
    return names


def _groups(functions: dict[str, llvm.FuncOp], uses: dict[str, set[str]]) -> list[list[str]]:
    """The internal functions, grouped by the references between them (union-find); a
    function that several internal ones call (a shared micro-kernel) joins none of their
    groups, which would otherwise all become one."""
    parent = {name: name for name, op in functions.items() if _linkage(op) in _LOCAL}
    callers: dict[str, int] = {}  # internal ones
    for caller in parent:
        for name in uses[caller]:
            callers[name] = callers.get(name, 0) + 1

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for name in parent:
        for used in uses[name]:
            if used in parent and callers[used] == 1:
                parent[root(used)] = root(name)
    groups: dict[str, list[str]] = {}
    for name in functions:  # program order, so the split is deterministic
        if name in parent:
            groups.setdefault(root(name), []).append(name)
    return list(groups.values())


def _classify(
    module: ModuleOp,
) -> tuple[dict[str, llvm.FuncOp], dict[str, llvm.GlobalOp], list[Operation]] | None:
    """Its defined functions, its globals and its declarations; None for other ops."""
    functions: dict[str, llvm.FuncOp] = {}
    globals_: dict[str, llvm.GlobalOp] = {}
    declarations: list[Operation] = []
    for op in module.ops:
        if isinstance(op, llvm.FuncOp) and op.body.blocks:
            functions[op.sym_name.data] = op
        elif isinstance(op, llvm.FuncOp):
            declarations.append(op)
        elif isinstance(op, llvm.GlobalOp):
            globals_[op.sym_name.data] = op
        else:
            return None
    return functions, globals_, declarations


def _homes(functions: dict[str, llvm.FuncOp], uses: dict[str, set[str]]) -> dict[str, int]:
    """The part of each function in a group large enough for a part of its own (the
    others go to part 0, the entry)."""
    home: dict[str, int] = {}
    count = 1
    for group in _groups(functions, uses):
        if sum(1 for name in group for _ in functions[name].walk()) >= MIN_GROUP_OPS:
            home.update(dict.fromkeys(group, count))
            count += 1
    return home


def _place_globals(
    parts: list[Part], globals_: dict[str, llvm.GlobalOp], users: dict[str, set[int]]
) -> None:
    """Each global into the parts that use it: internal constants copied, the others
    defined in the first user (exported if others use it) and declared in the rest."""
    for name, op in globals_.items():
        using = users.get(name, {0})
        owner = min(using)
        copied = op.constant is not None and _linkage(op) in _LOCAL
        for index in sorted(using):
            parts[index].ops.append(op)
            if not copied and index != owner:
                parts[index].declared.add(name)
        if not copied and len(using) > 1:
            parts[owner].exported.add(name)


def split(module: ModuleOp) -> list[Part]:
    """The modules `module` splits into, the entry module first; one part, the whole
    module, if it does not split (other top-level ops than functions and globals, fewer
    than `MIN_OPS` ops, or fewer than `MIN_MODULES` modules)."""
    whole = [Part(list(module.ops), set(), set())]
    classified = _classify(module)
    if classified is None:
        return whole
    functions, globals_, declarations = classified
    if sum(1 for op in functions.values() for _ in op.walk()) < MIN_OPS:
        return whole
    uses = {name: references(op) for name, op in functions.items()}
    home = _homes(functions, uses)
    count = len(set(home.values())) + 1
    if count < MIN_MODULES:
        return whole
    users: dict[str, set[int]] = {}  # symbol -> the parts that use it
    for name, used in uses.items():
        for symbol in used:
            users.setdefault(symbol, set()).add(home.get(name, 0))
    parts = [Part(list(declarations), set(), set()) for _ in range(count)]
    _place_globals(parts, globals_, users)
    members: list[list[str]] = [[] for _ in range(count)]
    for name in functions:
        members[home.get(name, 0)].append(name)
    external = llvm.LinkageAttr("external")
    for index, part in enumerate(parts):
        for name in sorted(set[str]().union(*(uses[member] for member in members[index]))):
            if name in functions and home.get(name, 0) != index:
                op = functions[name]
                part.ops.append(llvm.FuncOp(op.sym_name, op.function_type, external))
                parts[home.get(name, 0)].exported.add(name)
        part.ops.extend(functions[name] for name in members[index])
    return parts


def ir_texts(module: ModuleOp, parts: Sequence[Part]) -> list[str]:
    """The LLVM IR text of each part."""
    triple = module.attributes.get("llvm.target_triple")
    texts = []
    for part in parts:
        translated = ops_to_llvmlite(part.ops, triple)
        for name in part.exported:
            symbol = translated.get_global(name)
            if symbol.linkage in _LOCAL:
                symbol.linkage = ""
        for name in part.declared:
            variable = translated.get_global(name)
            variable.initializer = None
            variable.linkage = "external"
        texts.append(str(translated))
    return texts


def _shares(texts: Sequence[str], count: int) -> list[list[tuple[int, str]]]:
    """`count` shares of the texts, balanced by size (largest first, to the lightest)."""
    shares: list[list[tuple[int, str]]] = [[] for _ in range(count)]
    loads = [0] * count
    for index in sorted(range(len(texts)), key=lambda i: -len(texts[i])):
        lightest = loads.index(min(loads))
        shares[lightest].append((index, texts[index]))
        loads[lightest] += len(texts[index])
    return shares


def workers() -> int:
    """How many processes compile at once (this one included): the CPUs this process
    may use (`os.process_cpu_count`, from Python 3.13; the affinity mask before)."""
    counter = getattr(os, "process_cpu_count", None)
    if counter is not None:
        return max(1, counter() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def run_jobs(
    texts: Sequence[str], target: codegen_worker.Target, processes: int | None = None
) -> list[tuple[bytes | None, bytes | str]]:
    """What `target` makes of each text (`codegen_worker.compile_one`), or (None, the
    error), compiled by `processes` processes (this one and workers; `workers()` if None)."""
    count = min(len(texts), processes or workers())
    shares = _shares(texts, max(count, 1))
    started: list[subprocess.Popen[bytes]] = []
    for share in shares[1:]:
        try:
            started.append(_start((target, share)))
        except OSError:  # no worker can start (no interpreter to run): compile it here
            shares[0] += share
    results: dict[int, tuple[bytes | None, bytes | str]] = {}
    progress.kernels(len(texts))
    for index, code, other, _ in codegen_worker.run((target, shares[0]), progress.advance):
        results[index] = (code, other)
    for process in started:
        assert process.stdout is not None
        output = process.stdout.read()
        process.stdout.close()
        process.wait()
        if process.returncode != 0:
            raise JITError(f"a code generation worker failed (exit status {process.returncode})")
        for index, code, other, _ in pickle.loads(output):
            results[index] = (code, other)
            progress.advance()
    return [results[index] for index in range(len(texts))]


def compile_texts(
    texts: Sequence[str], opt_level: int = OPT_LEVEL, processes: int | None = None
) -> list[tuple[bytes, bytes]]:
    """Object code and bitcode of each text, compiled by `processes` processes (this one
    and workers; `workers()` if None)."""
    cpu, features = target_description()
    compiled: list[tuple[bytes, bytes]] = []
    for text, (object_code, other) in zip(
        texts, run_jobs(texts, ("cpu", cpu, features, opt_level), processes), strict=True
    ):
        if object_code is None:
            parse_and_verify(text)  # raises a JITError naming a dump of the text
            raise JITError(f"LLVM rejected a kernel module: {other}")
        assert isinstance(other, bytes)
        compiled.append((object_code, other))
    return compiled


def _start(job: codegen_worker.Job) -> subprocess.Popen[bytes]:
    """A worker process compiling `job`, its job already written."""
    command = [sys.executable, "-I", codegen_worker.__file__]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None
    pickle.dump(job, process.stdin, pickle.HIGHEST_PROTOCOL)
    process.stdin.close()
    return process


def compile_module(
    module: ModuleOp, timer: Timer, opt_level: int = OPT_LEVEL, processes: int | None = None
) -> CompiledObject | None:
    """`module` compiled in parts, entry first; None if it is not worth splitting (then
    compile it whole)."""
    with timer.phase("translate to LLVM IR"):
        parts = split(module)
        if len(parts) < MIN_MODULES:
            return None
        texts = ir_texts(module, parts)
    with timer.phase("kernel cache lookup"):
        keys = [kernel_key(text, opt_level) for text in texts]
        found = {index: kernel_cache.load(keys[index]) for index in range(1, len(texts))}
        done = {index: entry.compiled for index, entry in found.items() if entry is not None}
    missing = [index for index in range(len(texts)) if index not in done]
    with timer.phase("LLVM optimize and codegen (split)"):
        compiled = compile_texts([texts[index] for index in missing], opt_level, processes)
    with timer.phase("kernel cache store"):
        for index, (code, bitcode) in zip(missing, compiled, strict=True):
            done[index] = CompiledObject(code, bitcode)
            if index:  # the entry module is the program's own: its cache entry keeps it
                kernel_cache.store(keys[index], kernel_cache.Entry(done[index]))
    return CompiledObject(
        done[0].object_code, done[0].bitcode, tuple(done[index] for index in range(1, len(texts)))
    )


@cache
def _worker_digest() -> str:
    return hashlib.sha256(Path(codegen_worker.__file__).read_bytes()).hexdigest()


def kernel_key(ir_text: str, opt_level: int | str) -> str:
    """The disk cache key of one part's LLVM IR compiled at `O<opt_level>` for the host:
    the same kernel in another program, or after an edit elsewhere in mlc, hits."""
    cpu, features = target_description()
    return code_key(ir_text, ("cpu", cpu, features, opt_level))


def code_key(ir_text: str, target: codegen_worker.Target) -> str:
    """The disk cache key of what `target` makes of `ir_text`: the text, the target, the
    LLVM version and the worker's code (nothing else of mlc)."""
    llvm_version = ".".join(map(str, llvm_binding.llvm_version_info))
    digest = hashlib.sha256()
    parts = ("kernel", llvm_version, llvm_binding.get_default_triple(), _worker_digest())
    for part in (*parts, *map(str, target), ir_text):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()

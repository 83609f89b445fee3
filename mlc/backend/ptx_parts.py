"""
GPU kernels in parts: the kernels of a large program are grouped into several LLVM
modules, each compiled to PTX on its own (by this process and workers,
`mlc.backend.split_codegen.run_jobs`), and the PTX texts joined into one module, which
the CUDA driver loads as before.

`split` groups the kernels in program order, each group with the functions and globals
its kernels reach (helpers and constants are copied into every part that uses them,
internal in each); `join` keeps the first part's header (`.version`, `.target`,
`.address_size`) and every part's body, renaming a module-scope name a later part
defines again (a copied helper, a libdevice function both link in). A program is split
only where that cannot change what it computes: no kernel calls another kernel, and no
writable global outside shared memory is used by two parts (each would get its copy).
"""

import re

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from mlc.backend.split_codegen import references

MIN_OPS = 4_000  # of the kernels' `llvm` ops: fewer compile as one module
MIN_PART_OPS = 600  # consecutive kernels join one part until it has this many ops
SHARED = 3  # the address space of GPU shared memory


def _size(op: Operation) -> int:
    return sum(1 for _ in op.walk())


def split(ops: list[Operation], kernels: set[str]) -> list[list[Operation]]:
    """The ops of each part (see the module docstring); `[ops]` for no split."""
    classified = _classify(ops)
    if classified is None:
        return [ops]
    functions, globals_, declarations = classified
    sizes = {name: _size(op) for name, op in functions.items()}
    entries = [name for name in functions if name in kernels]
    if sum(sizes.values()) < MIN_OPS or len(entries) < 2:
        return [ops]
    uses = {name: references(op) for name, op in functions.items()}
    groups: list[list[str]] = [[]]
    for name in entries:
        if groups[-1] and sum(sizes[member] for member in groups[-1]) >= MIN_PART_OPS:
            groups.append([])
        groups[-1].append(name)
    reached = [_reach(group, uses, functions) for group in groups]
    users: dict[str, int] = {}
    for group, names in zip(groups, reached, strict=True):
        if any(name in kernels and name not in group for name in names):
            return [ops]  # a kernel called from another part's kernel
        for name in names:
            users[name] = users.get(name, 0) + 1
    if any(users.get(name, 0) > 1 and _writable(op) for name, op in globals_.items()):
        return [ops]
    return [
        [
            *declarations,
            *(op for name, op in globals_.items() if name in names),
            *(op for name, op in functions.items() if name in names),
        ]
        for names in reached
    ]


def _classify(
    ops: list[Operation],
) -> tuple[dict[str, llvm.FuncOp], dict[str, llvm.GlobalOp], list[Operation]] | None:
    """The defined functions, the globals and the declarations; None for other ops."""
    functions: dict[str, llvm.FuncOp] = {}
    globals_: dict[str, llvm.GlobalOp] = {}
    declarations: list[Operation] = []
    for op in ops:
        if isinstance(op, llvm.FuncOp) and op.body.blocks:
            functions[op.sym_name.data] = op
        elif isinstance(op, llvm.GlobalOp):
            globals_[op.sym_name.data] = op
        elif isinstance(op, llvm.FuncOp):
            declarations.append(op)
        else:
            return None
    return functions, globals_, declarations


def _reach(group: list[str], uses: dict[str, set[str]], functions: dict[str, llvm.FuncOp]):
    """The symbols the kernels of `group` reach through calls and addresses taken."""
    seen: set[str] = set()
    pending = list(group)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in functions:
            pending.extend(uses[name])
    return seen


def _writable(op: llvm.GlobalOp) -> bool:
    """A global whose copies could disagree: not constant, not in shared memory."""
    space = op.addr_space.value.data if isinstance(op.addr_space, IntegerAttr) else 0
    return op.constant is None and space != SHARED


# Module-scope definitions of a PTX text: internal functions (and their forward
# declarations) and variables; a kernel is `.visible .entry`, unique in the program.
_FUNCTION = re.compile(r"^\.func\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$]*)", re.MULTILINE)
_VARIABLE = re.compile(
    r"^\.(?:global|shared|const)\b[^;=\n]*?([A-Za-z_$%][\w$]*)\s*(?:\[\d*\]\s*)*(?:=|;)",
    re.MULTILINE,
)


def _defined(text: str) -> set[str]:
    return {*_FUNCTION.findall(text), *_VARIABLE.findall(text)}


def join(ptx_texts: list[str]) -> str:
    """
    One PTX module of several from one target: the first's header, every body. A
    module-scope name a part defines that an earlier part defined too (a helper, a
    libdevice function, a constant copied into both) is renamed in that part
    (`<name>_p<index>`); every other name stays as LLVM printed it.
    """
    bodies: list[str] = []
    seen_externs: set[str] = set()
    taken: set[str] = set()
    for index, text in enumerate(ptx_texts):
        head, marker, body = text.partition(".address_size 64\n")
        if not marker:
            raise ValueError("PTX without an `.address_size 64` header")
        if index == 0:
            bodies.append(head + marker)
        defined = _defined(body)
        for name in sorted(defined & taken):
            fresh = f"{name}_p{index}"
            while fresh in taken or fresh in defined:
                fresh += "_"
            body = re.sub(rf"(?<![\w$%]){re.escape(name)}(?![\w$])", fresh, body)
            defined = (defined - {name}) | {fresh}
        taken |= defined
        lines = []
        for line in body.splitlines(keepends=True):
            if line.startswith(".extern"):  # declared once
                if line in seen_externs:
                    continue
                seen_externs.add(line)
            lines.append(line)
        bodies.append("".join(lines))
    return "".join(bodies)

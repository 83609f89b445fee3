"""
instrument-kernels: each kernel of a function timed by calls into the profiling runtime.

Runs in the profiling compile only (`mlc.compile(...).profile(...)`, `mlc-run --profile`),
right after `linalg-tile`, when every kernel is one op at the top of a function body:
an `scf.parallel` (its dispatch to the thread pool timed as a whole), an `scf.for` nest,
or a linalg op or `memref.copy` that `convert-linalg-to-loops` lowers later:

    scf.parallel (%t) = ... { ... } loc(fused["conv1", "relu1"])
==>
    %id = arith.constant 3 : i64
    func.call @mlc_profile_begin(%id) : (i64) -> ()
    scf.parallel (%t) = ... { ... }
    func.call @mlc_profile_end(%id) : (i64) -> ()

Instrumenting here, after the kernels are chosen, leaves the program as it is compiled
without profiling (a call between two generics before `linalg-tile` would keep them out
of one row block). The control flow of a model (`scf.if`, `scf.while`, an `scf.for`
carrying values) is not a kernel: the kernels inside it are. Calls of other functions are
not timed (their kernels are), except calls of a kernel that `outline-kernels` moved
into a function of its own: the call is the kernel, timed at each call site (one
function serves several layers), and the function's body is not instrumented. Nor are
the bodies of functions called only from inside kernels (a matmul's packers and shared
micro-kernel): they are part of the kernel that calls them. Each
kernel gets an id, in program order, and the module a global `__mlc_profile_kernels`
listing them with their source ops (`mlc.lowering.support.kernel_sources`). The inserted
ops take the kernel's location.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from mlc.lowering.support.kernel_outlining import KERNEL_ATTR
from mlc.lowering.support.kernel_sources import instrument


def is_kernel(op: Operation, outlined: frozenset[str] = frozenset()) -> bool:
    """A loop nest, a linalg op, a copy or a call of an `outlined` kernel: work that runs
    as one unit."""
    if isinstance(op, func.CallOp):
        return op.callee.root_reference.data in outlined
    if isinstance(op, scf.ForOp):
        return not op.results  # a loop carrying values is a model's loop, not a kernel
    return isinstance(op, scf.ParallelOp | memref.CopyOp) or op.name.startswith("linalg.")


def is_control_flow(op: Operation) -> bool:
    return isinstance(op, scf.IfOp | scf.WhileOp | scf.ForOp) and not is_kernel(op)


def kernels_of(block: Block, outlined: frozenset[str] = frozenset()) -> list[Operation]:
    """The kernels of `block`, in order, looking inside its control flow."""
    found: list[Operation] = []
    for op in block.ops:
        if is_kernel(op, outlined):
            found.append(op)
        elif is_control_flow(op):
            for region in op.regions:
                for inner in region.blocks:
                    found += kernels_of(inner, outlined)
    return found


@dataclass(frozen=True)
class InstrumentKernelsPass(ModulePass):
    """Time each kernel of every function with calls of the profiling runtime."""

    name = "instrument-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outlined = frozenset(
            f.sym_name.data
            for f in op.ops
            if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes
        )

        found = {
            f.sym_name.data: [k for block in f.body.blocks for k in kernels_of(block, outlined)]
            for f in op.ops
            if isinstance(f, func.FuncOp)
        }
        parts = called_only_within(op, found)

        def kernels(function: func.FuncOp) -> list[Operation]:
            name = function.sym_name.data
            if name in outlined or name in parts:
                return []  # timed at its calls, or as part of the kernels calling it
            return found.get(name, [])

        instrument(op, kernels, lambda kernel: kernel.name)


def called_only_within(module: ModuleOp, kernels: dict[str, list[Operation]]) -> set[str]:
    """
    The functions every call of which lies inside a kernel: a matmul's packers and shared
    micro-kernel, called in its loops. They are part of those kernels, timed with them;
    timing their own loops too would count that time twice, and from the pool's worker
    threads at once, on timers made for the calling thread.
    """
    inside: set[str] = set()
    for found in kernels.values():
        for kernel in found:
            inside.update(
                c.callee.root_reference.data for c in kernel.walk() if isinstance(c, func.CallOp)
            )
    outside: set[str] = set()
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        within = {id(c) for k in kernels.get(function.sym_name.data, []) for c in k.walk()}
        outside.update(
            c.callee.root_reference.data
            for c in function.walk()
            if isinstance(c, func.CallOp) and id(c) not in within
        )
    return inside - outside

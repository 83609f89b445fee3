"""
instrument-launches: each kernel launch of the host code timed on the GPU.

Runs in the profiling compile for the cuda target only (`mlc.compile(..., target="cuda")
.profile(...)`, `mlc-run --target cuda --profile`), at the end of the `gpu` stage, when
every kernel is outlined and launched by one `gpu.launch_func`:

    gpu.launch_func @kernels::@k2 blocks in (...) ... loc(fused["conv1", "relu1"])
==>
    %id = arith.constant 3 : i64
    func.call @mlc_profile_launch_begin(%id) : (i64) -> ()
    gpu.launch_func @kernels::@k2 blocks in (...) ...
    func.call @mlc_profile_launch_end(%id) : (i64) -> ()

A launch returns before its kernel has run, so the timers (`mlc.backend.launch_timers`)
record CUDA events on the kernels' stream rather than read a clock. Launches inside a
model's control flow (`scf.for`, `scf.if`, `scf.while`) are timed each time they run.
Every launch gets an id, in program order, and the module the global
`__mlc_profile_kernels` listing them with their source ops, as `instrument-kernels` does
for the CPU (`mlc.lowering.support.kernel_sources`). The inserted ops take the launch's
location. A function that `outline-contractions` made (`mlc.kernel`) serves several
layers: each call of it is timed as one kernel, with the call's location (its layer),
and its own launches are not.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from mlc.lowering.support.kernel_outlining import KERNEL_ATTR
from mlc.lowering.support.kernel_sources import LAUNCH_BEGIN, LAUNCH_END, instrument

TIMED_BY = (LAUNCH_BEGIN, LAUNCH_END)


@dataclass(frozen=True)
class InstrumentLaunchesPass(ModulePass):
    """Time each kernel launch of every host function with CUDA events."""

    name = "instrument-launches"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outlined = frozenset(
            f.sym_name.data
            for f in op.ops
            if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes
        )

        def timed(o: Operation) -> bool:
            if isinstance(o, func.CallOp):
                return o.callee.root_reference.data in outlined
            return isinstance(o, gpu.LaunchFuncOp)

        def launches(function: func.FuncOp) -> list[Operation]:
            if function.sym_name.data in outlined:
                return []  # timed at its calls
            return [o for o in function.walk() if timed(o)]

        instrument(op, launches, _kind, TIMED_BY)


def _kind(op: Operation) -> str:
    if isinstance(op, func.CallOp):
        return f"func.call {op.callee}"
    return f"gpu.launch_func {op.kernel}"  # pyright: ignore[reportAttributeAccessIssue]

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
location.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlc.lowering.support.kernel_sources import LAUNCH_BEGIN, LAUNCH_END, instrument

TIMED_BY = (LAUNCH_BEGIN, LAUNCH_END)


@dataclass(frozen=True)
class InstrumentLaunchesPass(ModulePass):
    """Time each kernel launch of every host function with CUDA events."""

    name = "instrument-launches"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        instrument(
            op,
            lambda function: [o for o in function.walk() if isinstance(o, gpu.LaunchFuncOp)],
            lambda launch: f"gpu.launch_func {launch.kernel}",  # pyright: ignore
            TIMED_BY,
        )

"""
The per-layer profiler: where a compiled program's time goes, layer by layer.

`mlc.compile(src).profile(*args, repeat=20)` compiles `src` again with timers around
each kernel (`instrument-kernels`; the program compiled without profiling has none),
runs it, and returns a `Profile`: per layer (the kernels that share a list of source
ops: ONNX node names, `file:line` of traced code), the median time, its share, the
FLOPs and bytes moved from `mlc.cost_model`, the achieved GFLOP/s and GB/s and their
share of the machine's `Peaks` when given; as a table (`str(profile)`), JSON
(`as_json`, `save_json`) and a Chrome trace (`chrome_trace`, `save_trace`).
`mlc-run model.onnx --profile` prints it; `--compare onnxruntime` puts onnxruntime's own
per-node profile beside it (`mlc.profiler.onnxruntime`). See docs/profiling.md.

Modules: `measure` (running and timing), `costs` (pricing layers), `report` (the
`Profile` and its forms), `onnxruntime` (the comparison).
"""

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from mlc.backend.launch_timers import LaunchRecording
from mlc.lowering.support.kernel_sources import KERNELS_SYMBOL, KernelInfo, decode_kernels
from mlc.profiler.costs import at_call_shapes, layer_costs
from mlc.profiler.measure import Layer, Peaks, layers_of, measure
from mlc.profiler.report import SCHEMA, Profile

__all__ = ["SCHEMA", "Layer", "Peaks", "Profile", "kernel_table", "profile_call"]


def kernel_table(engine: Any) -> list[KernelInfo]:
    """The kernels a program compiled for profiling describes (`__mlc_profile_kernels`)
    in its llvmlite execution engine; none if it was not compiled for profiling."""
    address = engine.get_global_value_address(KERNELS_SYMBOL)
    if not address:
        return []
    return decode_kernels(ctypes.string_at(address).decode())


def profile_call(
    call: Callable[..., Any],
    args: Sequence[Any],
    *,
    kernels: Sequence[KernelInfo],
    graph: ModuleOp | None,
    target: str,
    function: str,
    repeat: int = 20,
    warmup: int = 1,
    peaks: Peaks | None = None,
) -> Profile:
    """
    Profile `call`, a function compiled for profiling whose kernels are `kernels`, on
    `args`; `graph` is its program after the graph passes, whose `ml` ops price the
    layers (None: no costs).
    """
    recording = None
    if target == "cuda":  # kernels run after their launch returns: timed by CUDA events
        from mlc.backend.cuda import device

        recording = LaunchRecording(len(kernels), device())
    measured = measure(call, args, len(kernels), repeat, warmup, recording)
    ran = [k for k in kernels if measured.kernel_runs[k.id]]  # those `call` reached
    layers = layers_of(ran, measured)
    if graph is not None:
        priced = at_call_shapes(graph, function, args)
        costs = layer_costs(priced, [layer.sources for layer in layers], target)
        for layer, cost in zip(layers, costs, strict=True):
            layer.cost = cost
    layers.sort(key=lambda layer: -layer.seconds)
    return Profile(
        target=target,
        function=function,
        repeat=repeat,
        call_seconds=measured.call_seconds,
        layers=layers,
        peaks=peaks or Peaks(),
        timeline=measured.timeline,
        kernels=list(kernels),
        outputs=measured.outputs,
    )

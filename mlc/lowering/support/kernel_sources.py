"""
What a profiled program's kernels came from, and the names its timers are called by.

`instrument-kernels` (CPU) wraps each kernel of a function in calls of
`mlc_profile_begin(id)` / `mlc_profile_end(id)`, `instrument-launches` (GPU) each kernel
launch in `mlc_profile_launch_begin(id)` / `mlc_profile_launch_end(id)` (`wrap`), and
both write the list of kernels, with
the source ops each was built from, as JSON into the global `__mlc_profile_kernels` of
the compiled program, so that a program loaded from the disk cache still says what its
kernels are (`mlc.profiler` reads it back). The sources are read from the locations
that every lowering keeps (`mlc.lowering.support.locations`): an ONNX node's name
(`loc("conv1"("model.onnx":0:0))` is `conv1`), a traced op's `file:line`; a kernel
fused from several ops names them all, in order of appearance.
"""

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.support.llvm_globals import declare_string

BEGIN = "mlc_profile_begin"  # void (i64 kernel id), as mlc.backend.profiling defines it
END = "mlc_profile_end"
LAUNCH_BEGIN = "mlc_profile_launch_begin"  # the same, as mlc.backend.launch_timers does
LAUNCH_END = "mlc_profile_launch_end"
TIMERS = (BEGIN, END, LAUNCH_BEGIN, LAUNCH_END)
KERNELS_SYMBOL = "__mlc_profile_kernels"  # the JSON list of `KernelInfo`s, NUL-terminated


def source_names(location: Attribute) -> list[str]:
    """The source ops a location names: ONNX node names, `file:line` of traced code."""
    match location:
        case NameLoc():
            return [location.desc.data]
        case FileLineColLoc():
            return [f"{location.filename.data}:{location.line.data}"]
        case FusedLoc():
            return unique(n for part in location.locations.data for n in source_names(part))
        case CallSiteLoc():
            return source_names(location.callee)
        case _:
            return []


def op_sources(op: Operation) -> list[str]:
    """The source ops named by `op`'s location and those of the ops nested in it
    (loops that xDSL's lowerings leave unknown take their bodies' sources)."""
    return unique(name for nested in op.walk() for name in source_names(nested.location))


def unique(names: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for name in names:
        seen.setdefault(name, None)
    return list(seen)


@dataclass(frozen=True)
class KernelInfo:
    """One timed kernel: its id, the function it runs in, what it is, where it came from."""

    id: int
    function: str
    kind: str  # the op timed: `scf.parallel`, `linalg.generic`, `gpu.launch_func`, ...
    sources: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "function": self.function,
            "kind": self.kind,
            "sources": list(self.sources),
        }

    @staticmethod
    def from_json(data: dict[str, object]) -> "KernelInfo":
        sources = data["sources"]
        assert isinstance(sources, list)
        return KernelInfo(
            int(str(data["id"])), str(data["function"]), str(data["kind"]), tuple(map(str, sources))
        )


def encode_kernels(kernels: Sequence[KernelInfo]) -> str:
    return json.dumps([k.as_json() for k in kernels], separators=(",", ":"))


def decode_kernels(text: str) -> list[KernelInfo]:
    return [KernelInfo.from_json(item) for item in json.loads(text)]


def declare_kernel_table(module: ModuleOp, kernels: Sequence[KernelInfo]) -> None:
    """The global `__mlc_profile_kernels` holding `kernels` as JSON (replacing one there)."""
    for op in list(module.ops):
        if isinstance(op, llvm.GlobalOp) and op.sym_name.data == KERNELS_SYMBOL:
            Rewriter.erase_op(op)
    declare_string(module, KERNELS_SYMBOL, encode_kernels(kernels), "external")


def wrap(op: Operation, id_: int, timers: tuple[str, str] = (BEGIN, END)) -> None:
    """Put `op` between calls of the `timers` (begin, end) with the constant `id_`,
    stamped with `op`'s location."""
    begin_name, end_name = timers
    constant = arith.ConstantOp(IntegerAttr(id_, i64))
    begin = func.CallOp(begin_name, [constant.result], [])
    end = func.CallOp(end_name, [constant.result], [])
    for new in (constant, begin, end):
        new.location = op.location
    Rewriter.insert_op([constant, begin], InsertPoint.before(op))
    Rewriter.insert_op(end, InsertPoint.after(op))


def declare_timers(module: ModuleOp, timers: tuple[str, str] = (BEGIN, END)) -> None:
    """Declare the `timers`, `void (i64)`, where `module` does not already."""
    present = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    for name in reversed(timers):
        if name not in present:
            Rewriter.insert_op(
                func.FuncOp.external(name, [i64], []), InsertPoint.at_start(module.body.block)
            )


def instrument(
    module: ModuleOp,
    kernels_of: Callable[[func.FuncOp], Iterable[Operation]],
    kind: Callable[[Operation], str],
    timers: tuple[str, str] = (BEGIN, END),
) -> None:
    """
    Put each kernel `kernels_of` finds in a defined function of `module` between the
    `timers`, ids in program order, and write the table of kernels (`kind` names each).
    The instrumenting passes of both targets differ only in what a kernel is.
    """
    kernels: list[KernelInfo] = []
    for function in [f for f in module.ops if isinstance(f, func.FuncOp)]:
        if function.is_declaration or function.sym_name.data in TIMERS:
            continue
        for kernel in list(kernels_of(function)):
            info = KernelInfo(
                len(kernels), function.sym_name.data, kind(kernel), tuple(op_sources(kernel))
            )
            kernels.append(info)
            wrap(kernel, info.id, timers)
    declare_timers(module, timers)
    declare_kernel_table(module, kernels)

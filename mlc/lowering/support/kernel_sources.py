"""
What a profiled program's kernels came from, and the names its timers are called by.

`instrument-kernels` (CPU) wraps each kernel of a function in calls of
`mlc_profile_begin(id)` / `mlc_profile_end(id)`, and writes the list of kernels, with
the source ops each was built from, as JSON into the global `__mlc_profile_kernels` of
the compiled program, so that a program loaded from the disk cache still says what its
kernels are (`mlc.profiler` reads it back). The sources are read from the locations
that every lowering keeps (`mlc.lowering.support.locations`): an ONNX node's name
(`loc("conv1"("model.onnx":0:0))` is `conv1`), a traced op's `file:line`; a kernel
fused from several ops names them all, in order of appearance.
"""

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    ModuleOp,
    NameLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.rewriter import Rewriter

from mlc.lowering.support.llvm_globals import declare_string

BEGIN = "mlc_profile_begin"  # void (i64 kernel id), as mlc.backend.profiling defines it
END = "mlc_profile_end"
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

"""
`prefer-vector-width` on the functions that run the host's widest FMAs, so that LLVM
vectorises their other loops at that width too.

On Intel's AVX-512 parts LLVM caps its own vectorisation at 256 bits (the tuning
feature `prefer-256-bit`, kept by `mlc.backend.jit.host_features` outside AMD), so
that code with no 512-bit instruction keeps the core's clock. A function whose own
FMAs are 512 bits wide (a matmul's register tile, inline) or that calls such a
function kept out of line (`no_inline`: the shared micro-kernel,
`mlc.lowering.cpu.shared_micro_kernel`) gains
nothing from the cap: the loops LLVM vectorises there, a matmul's epilogue on each
finished tile (a MoE expert's SiLU: an exp and a division per element), ran at half
width beside FMAs that pay for the full one (one thread, a MoE expert's 242-256 x 512
x 1024 with SiLU: 0.5-1.2% faster at 512 bits; bench/results/moe-lstm.md, 2026-11-29).

Such functions get `passthrough = [["prefer-vector-width", "<bits>"]]`, which
`mlc.backend.llvm` writes as LLVM's string attribute. Functions with no wide FMA
keep the cap, as do all functions where the widest vector is 256 bits or less (LLVM
then prefers that width anyway).
"""

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, VectorType
from xdsl.ir import Attribute

from mlc.lowering.support.op_walk import walk_ops

ATTRIBUTE = "prefer-vector-width"
CAPPED_BITS = 256  # the width LLVM's `prefer-256-bit` tuning stops at


def _bits(type_: Attribute) -> int:
    """A vector type's width in bits (0 for anything else)."""
    if not isinstance(type_, VectorType):
        return 0
    element = type_.get_element_type()
    width = getattr(element, "bitwidth", 0)
    return width * type_.element_count()


def _kept_out_of_line(function: llvm.FuncOp) -> bool:
    # A parsed module has it among the attributes: xDSL prints the property there.
    return function.no_inline is not None or "no_inline" in function.attributes


def _callees(function: llvm.FuncOp) -> set[str]:
    return {
        op.callee.root_reference.data
        for op in walk_ops(function)
        if isinstance(op, llvm.CallOp) and op.callee is not None
    }


def prefer_wide_vectors(module: ModuleOp, bits: int) -> set[str]:
    """Mark the functions of `module` that run `bits`-wide FMAs or call a function that
    does (see the module docstring); the names marked. Nothing where `bits` is at most
    what LLVM prefers on its own."""
    if bits <= CAPPED_BITS:
        return set()
    functions = [op for op in module.ops if isinstance(op, llvm.FuncOp) and op.body.blocks]
    wide = {
        f.sym_name.data
        for f in functions
        if any(isinstance(op, llvm.FMAOp) and _bits(op.res.type) >= bits for op in walk_ops(f))
    }
    # The callers of a shared kernel (kept out of line) hold its tile loops; the callers
    # of an outlined parallel body that holds them inline do not.
    shared = {f.sym_name.data for f in functions if _kept_out_of_line(f)} & wide
    marked = {f.sym_name.data for f in functions if f.sym_name.data in wide or _callees(f) & shared}
    entry = ArrayAttr([StringAttr(ATTRIBUTE), StringAttr(str(bits))])
    for function in functions:
        if function.sym_name.data in marked:
            kept = [] if function.passthrough is None else list(function.passthrough.data)
            if entry not in kept:
                function.passthrough = ArrayAttr([*kept, entry])
    return marked

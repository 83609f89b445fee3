"""
Short scalar loops inside another loop stay loops in LLVM (`llvm.loop.unroll.disable`).

LLVM fully unrolls a loop of a few iterations (the 10 logits of a row, a 2x2 pooling
window, 8 channels) and then vectorises the loop around it across its iterations: each
access of the unrolled body becomes a gather at the outer loop's stride
(`llvm.masked.gather`). A training step's loss backward is made of such 64 x 10 nests:
the MLP step's main function had 210 gathers after LLVM's O3, none with the loops kept.

`mark_short_loops` marks an `scf.for` with constant bounds and 2 to `SHORT_TRIP`
iterations, inside another `scf.for` but inside no short one, with no vector value and
no call inside (code mlc vectorised itself, a micro-kernel's register block, a GEMM's
blocks around its kernel calls are left to LLVM). A nest of short loops (a pooling
window's 2 x 2 inside its 4 x 4 outputs) keeps its inner loops unmarked: LLVM's
unrolled straight-line code for it pays at run time. Marking those too (every short
loop inside a loop) took the small CNN's step from 5507 to 4337 instructions but its
max pooling and the pooling's gradient from 18 to 57 us a step; marking the loops of
whole small nests (up to 1024 iterations) from 0.24 to 0.35 ms a step.

`MarkedForLowering` moves the mark onto the loop's back edge (`cf.br`),
`ConvertBranch` onto the `llvm.br`, and the LLVM IR translation (`mlc.backend.llvm`)
gives that branch `!llvm.loop` metadata:

    scf.for %j = %c0 to %c10 step %c1 { ...scalar body... }   (inside another scf.for)
==>
    llvm.br ^bb2(%next : i64) {mlc.unroll_disable}
==>
    br label %bb2, !llvm.loop !0      !0 = !{ !0, !1 }  !1 = !{ !"llvm.loop.unroll.disable" }

GPU kernels (`convert-to-llvm{libdevice=true}`) are not marked.
"""

from xdsl.dialects import cf, func, scf
from xdsl.dialects.builtin import ModuleOp, UnitAttr, VectorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.transforms.convert_scf_to_cf import ForLowering

from mlc.lowering.support.loop_builder import constant_index
from mlc.lowering.support.op_walk import walk_ops

UNROLL_DISABLE = "mlc.unroll_disable"
SHORT_TRIP = 16  # iterations: a vector of f32 on AVX-512


def _trip_count(loop: scf.ForOp) -> int | None:
    lb, ub, step = (constant_index(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))


def mark_short_loops(module: ModuleOp) -> int:
    """Mark the loops that keep their loop (module docstring); how many."""
    opaque: set[int] = set()  # loops with a vector value or a call somewhere inside
    for op in walk_ops(module):
        if isinstance(op, func.CallOp) or any(isinstance(r.type, VectorType) for r in op.results):
            parent = op.parent_op()
            while parent is not None and id(parent) not in opaque:
                opaque.add(id(parent))
                parent = parent.parent_op()
    marked = 0
    for op in walk_ops(module):
        if isinstance(op, scf.ForOp) and _keeps_its_loop(op, opaque):
            op.attributes[UNROLL_DISABLE] = UnitAttr()
            marked += 1
    return marked


def _keeps_its_loop(loop: scf.ForOp, opaque: set[int]) -> bool:
    """A short scalar loop inside another loop, none of them short."""
    if not _is_short(loop) or id(loop) in opaque:
        return False
    outer = _enclosing_loops(loop)
    return bool(outer) and not any(_is_short(o) for o in outer)


def _is_short(loop: scf.ForOp) -> bool:
    trip = _trip_count(loop)
    return trip is not None and 1 < trip <= SHORT_TRIP


def _enclosing_loops(op: Operation) -> list[scf.ForOp]:
    loops: list[scf.ForOp] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops


class MarkedForLowering(ForLowering):
    """xDSL's `scf.for` lowering; a marked loop's back edge (`cf.br`) keeps the mark."""

    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter, /) -> None:
        if UNROLL_DISABLE not in op.attributes:
            super().match_and_rewrite(op, rewriter)
            return
        before, condition = op.parent_block(), op.body.first_block
        super().match_and_rewrite(op, rewriter)
        if condition is None:
            return
        for block in condition.predecessors():  # the entry's branch and the back edge
            if block is not before and isinstance(block.last_op, cf.BranchOp):
                block.last_op.attributes[UNROLL_DISABLE] = UnitAttr()

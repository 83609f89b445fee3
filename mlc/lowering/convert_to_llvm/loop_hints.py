"""
Loops of small scalar nests stay loops in LLVM (`llvm.loop.unroll.disable`).

LLVM fully unrolls a loop of a few iterations (the 10 logits of a row, a 2x2 pooling
window, 8 channels) and then vectorises the loop around it across its iterations: each
access of the unrolled body becomes a gather at the outer loop's stride
(`llvm.masked.gather`); and a nest of a few hundred iterations in all is unrolled whole.
A training step's loss backward and a small CNN's window and channel nests are made of
such loops: the small CNN's step had 3581 instructions in its main function after
LLVM's O3, 176 of them gathers, 1688 and none with the loops kept, and LLVM's
optimisation and code generation of the step's module shrink with it.

`mark_short_loops` marks an `scf.for` with constant bounds and at least two iterations,
with no vector value and no call inside (code mlc vectorised itself, a micro-kernel's
register block, a GEMM's blocks around its kernel calls are left to LLVM), that is

- short (at most `SHORT_TRIP` iterations) and inside another `scf.for`, or
- a loop of a small nest (at most `SMALL_NEST` iterations of its innermost body, the
  trip counts multiplied) that no larger nest of known bounds encloses: a row of 512
  in a 64 x 512 column sum is LLVM's to vectorise and interleave.

LLVM still vectorises a kept innermost loop on its own. `MarkedForLowering` moves the
mark onto the loop's back edge (`cf.br`), `ConvertBranch` onto the `llvm.br`, and the
LLVM IR translation (`mlc.backend.llvm`) gives that branch `!llvm.loop` metadata:

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
SMALL_NEST = 1024  # iterations of a nest's innermost body, all loops multiplied
SHORT_TRIP = 16  # iterations: a vector of f32 on AVX-512


def _trip_count(loop: scf.ForOp) -> int | None:
    lb, ub, step = (constant_index(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))


def _nest_iterations(loop: scf.ForOp, opaque: set[int], known: dict[int, int | None]) -> int | None:
    """How many times the innermost body of `loop`'s nest runs (its longest path),
    or None if a loop in it has bounds unknown here, or vector values or calls."""
    if id(loop) in known:
        return known[id(loop)]
    trip = _trip_count(loop)
    count = None
    # Several blocks: control flow lowered already (an `scf.while`), trips unknown.
    if trip is not None and id(loop) not in opaque and len(loop.body.blocks) == 1:
        inner: int | None = 1
        for op in loop.body.block.ops:
            for nested in op.walk():
                if isinstance(nested, scf.ParallelOp | scf.WhileOp):
                    inner = None
                elif isinstance(nested, scf.ForOp) and inner is not None:
                    below = _nest_iterations(nested, opaque, known)
                    inner = None if below is None else max(inner, below)
        count = None if inner is None else trip * inner
    known[id(loop)] = count
    return count


def mark_short_loops(module: ModuleOp) -> int:
    """Mark the loops that keep their loop (module docstring); how many."""
    opaque: set[int] = set()  # loops with a vector value or a call somewhere inside
    for op in walk_ops(module):
        if isinstance(op, func.CallOp) or any(isinstance(r.type, VectorType) for r in op.results):
            parent = op.parent_op()
            while parent is not None and id(parent) not in opaque:
                opaque.add(id(parent))
                parent = parent.parent_op()
    known: dict[int, int | None] = {}
    marked = 0
    for op in walk_ops(module):
        if isinstance(op, scf.ForOp) and _keeps_its_loop(op, opaque, known):
            op.attributes[UNROLL_DISABLE] = UnitAttr()
            marked += 1
    return marked


def _keeps_its_loop(loop: scf.ForOp, opaque: set[int], known: dict[int, int | None]) -> bool:
    """A short scalar loop inside another loop, or any loop of a small scalar nest
    that no larger nest of known bounds encloses (a loop of a large nest, a row of
    512 in a 64 x 512 sum, is LLVM's to vectorise and interleave)."""
    trip = _trip_count(loop)
    if trip is None or trip < 2 or id(loop) in opaque:
        return False
    outer = _enclosing_loops(loop)
    if trip <= SHORT_TRIP and outer:
        return True
    count = _nest_iterations(loop, opaque, known)
    if count is None or count > SMALL_NEST:
        return False
    return all((c := _nest_iterations(p, opaque, known)) is None or c <= SMALL_NEST for p in outer)


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

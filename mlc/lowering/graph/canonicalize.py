"""
`canonicalize`: xDSL's canonicalizer, plus folds of the tensor ops mlc relies on.

xDSL's pass applies every op's `HasCanonicalizationPatternsTrait` patterns and the
folders of `arith` (which fold index arithmetic); `ml` ops bring theirs through
their traits (`mlc.lowering.graph.patterns`). xDSL's `tensor` dialect declares none, so
this pass adds `tensor.dim` of a static dim and the identity `tensor.cast` (both
appear once constant folding and `shape-inference` make shapes static). It then
remarks on the ops that had only constant operands and stayed unfolded.

Constants leave a nest of `scf.for` loops in one step (`HoistLoopConstants`): xDSL's
`RehoistConstInLoops` moves them out of one loop at a time, and since the walker does
not revisit the loop around, each level of a loop nest cost one more sweep of the
whole module (the transformer block's loop-level IR took five sweeps, now two).
After each sweep, dead ops go by `mlc.lowering.support.dead_code.region_dce`, xDSL's
analysis with each op's effects computed once (linear in a loop nest, not quadratic).
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from mlc.lowering.graph.patterns.fold import TENSOR_PATTERNS, explain_unfolded
from mlc.lowering.support.dead_code import region_dce


class EraseDeadOps(RewritePattern):
    """
    Erase an op without regions that is trivially dead, as the greedy applier's own
    check would. That check, on a loop, computes the effects of its whole body, and
    again for each loop nested in it: on loop-level IR most of the applier's time.
    A dead loop is left to `region_dce`, which runs after every sweep anyway.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not op.regions and is_trivially_dead(op):
            rewriter.erase(op)


class HoistLoopConstants(RewritePattern):
    """
    An `arith.constant` in an `scf.for` body moves before the outermost loop of the
    nest of `scf.for`s around it: where `RehoistConstInLoops`, applied until nothing
    changes, would leave it. Constants made while folding move too, as they are made.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /) -> None:
        loop = op.parent_op()
        if not isinstance(loop, scf.ForOp):
            return
        while isinstance(parent := loop.parent_op(), scf.ForOp):
            loop = parent
        op.detach()
        rewriter.insert(op, InsertPoint.before(loop))


def canonicalize(ctx: Context, module: ModuleOp) -> None:
    """Apply the canonicalization patterns and folders until none applies."""
    pattern = GreedyRewritePatternApplier(
        [EraseDeadOps(), HoistLoopConstants(), CanonicalizationRewritePattern(), *TENSOR_PATTERNS],
        ctx=ctx,
        folding_enabled=True,
        dce_enabled=False,  # EraseDeadOps, then region_dce
    )
    PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_module(module)


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Canonicalize and fold (see the module docstring)."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize(ctx, op)
        explain_unfolded(op)

"""
`lower-affine`: xDSL's pass of that name, with its dead-code check and pattern choice
made per op class.

xDSL's pass runs a `GreedyRewritePatternApplier` of its five patterns over every op of
the module (twice: the walker sweeps again once anything changed), and the applier
first asks xDSL's `is_trivially_dead` of each op, which looks its traits up anew, then
tries the five patterns' type checks in turn. On ResNet-50's GPU loop-level IR that is
~120k visits (two sweeps of ~60k ops) for a few hundred `affine.apply`s. Here the same
walker applies one pattern that asks `DeadOpCheck` (the same answer, trait lookups kept
per class), erases a dead op as the applier does, and otherwise applies the one
lowering for the op's class, or none: the same rewrites in the same order, so the same
IR (as `mlc.lowering.convert_to_llvm.scf_to_cf` does for `convert-scf-to-cf`).
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker
from xdsl.transforms.lower_affine import (
    LowerAffineApply,
    LowerAffineFor,
    LowerAffineLoad,
    LowerAffineStore,
    LowerAffineYield,
)

from mlc.lowering.support.op_type_dispatch import DeadFirstByClass


def lower_affine_by_class() -> DeadFirstByClass:
    """xDSL's five affine lowerings, each on its op class, dead ops erased first."""
    return DeadFirstByClass(
        {
            affine.StoreOp: LowerAffineStore(),
            affine.LoadOp: LowerAffineLoad(),
            affine.ForOp: LowerAffineFor(),
            affine.YieldOp: LowerAffineYield(),
            affine.ApplyOp: LowerAffineApply(),
        }
    )


@dataclass(frozen=True)
class LowerAffinePass(ModulePass):
    """Lower `affine` ops to `arith`, `scf` and `memref` (see the module docstring)."""

    name = "lower-affine"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(lower_affine_by_class()).rewrite_module(op)

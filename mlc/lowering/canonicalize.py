"""
`canonicalize`: xDSL's canonicalizer, plus folds of the tensor ops mlc relies on.

xDSL's pass applies every op's `HasCanonicalizationPatternsTrait` patterns and the
folders of `arith` (which fold index arithmetic); `ml` ops bring theirs through
their traits (`mlc.lowering.patterns`). xDSL's `tensor` dialect declares none, so
this pass adds `tensor.dim` of a static dim and the identity `tensor.cast` (both
appear once constant folding and `shape-inference` make shapes static). It then
remarks on the ops that had only constant operands and stayed unfolded.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from mlc.lowering.patterns.fold import TENSOR_PATTERNS, explain_unfolded


def canonicalize(ctx: Context, module: ModuleOp) -> None:
    """Apply the canonicalization patterns and folders until none applies."""
    pattern = GreedyRewritePatternApplier(
        [CanonicalizationRewritePattern(), *TENSOR_PATTERNS], ctx=ctx, folding_enabled=True
    )
    PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_module(module)


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Canonicalize and fold (see the module docstring)."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize(ctx, op)
        explain_unfolded(op)

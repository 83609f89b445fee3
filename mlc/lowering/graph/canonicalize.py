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
The patterns are chosen per op class (`CanonicalizeByType`), not tried on every op.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.folder import Folder
from xdsl.ir import Operation, OpResult
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import ConstantLike, HasCanonicalizationPatternsTrait, HasFolder

from mlc.lowering.graph.patterns.fold import TENSOR_PATTERNS, explain_unfolded
from mlc.lowering.support.dead_code import DeadOpCheck, region_dce
from mlc.lowering.support.op_type_dispatch import declared_op_types


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


# When `CanonicalizeByType` asks the folder to fold an op of a class.
NEVER, ALWAYS, WITH_A_CONSTANT_OPERAND = 0, 1, 2


class CanonicalizeByType(RewritePattern):
    """
    What xDSL's greedy applier does with the patterns `[EraseDeadOps, HoistLoopConstants,
    CanonicalizationRewritePattern, *TENSOR_PATTERNS]`, folding on and its own dead-code
    check off, with what depends on an op's class alone worked out once per class.

    xDSL's applier asks every op, on every visit, whether it has a folder and is not a
    constant (two trait lookups), tries each pattern in turn (each an `isinstance` or a
    trait lookup to find it does not apply), and its `CanonicalizationRewritePattern`
    collects the op's canonicalization traits and their patterns anew. On ResNet-50's
    loop-level IR (~60k visits) that was most of `canonicalize`. Here the per-class plan
    holds: whether to fold, and the patterns that can match, in the applier's order.
    The dead-code check (xDSL's `is_trivially_dead`, for ops without regions: on a loop
    it computes the effects of the whole body, again for each loop nested in it; dead
    loops are left to the `region_dce` that runs after each sweep) keeps its per-class
    trait answers too. The rewrites done, and their order, are the applier's.

    xDSL's integer binary ops (`arith.addi`, `arith.remui`, ...) fold only when an
    operand is a constant (to a constant, or to the other operand for an identity such
    as `x * 1`); their folder looks both operands' constant values up through traits
    (most of a sweep's folding time on ResNet-50's kernels, nearly always for nothing).
    Such an op is handed to the folder only when an operand is defined by a
    `ConstantLike` op, which is the folder's own first condition.
    """

    def __init__(self, ctx: Context) -> None:
        self.folder = Folder(ctx)
        self.is_dead = DeadOpCheck()
        self.ordered = [HoistLoopConstants(), None, *TENSOR_PATTERNS]  # None: the traits'
        self.declared = [None if p is None else declared_op_types(p) for p in self.ordered]
        self.plans: dict[type[Operation], tuple[int, tuple[RewritePattern, ...]]] = {}
        self.constant_like: dict[type[Operation], bool] = {}

    def plan(self, cls: type[Operation]) -> tuple[int, tuple[RewritePattern, ...]]:
        fold = NEVER
        if cls.has_trait(HasFolder, value_if_unregistered=False) and not cls.has_trait(
            ConstantLike, value_if_unregistered=True
        ):
            binary = getattr(cls, "fold", None) is arith.SignlessIntegerBinaryOperation.fold
            fold = WITH_A_CONSTANT_OPERAND if binary else ALWAYS
        patterns: list[RewritePattern] = []
        for pattern, types in zip(self.ordered, self.declared, strict=True):
            if pattern is None:
                found = tuple(
                    each
                    for trait in cls.get_traits_of_type(HasCanonicalizationPatternsTrait)
                    for each in trait.get_patterns(cls)
                )
                if len(found) == 1:
                    patterns.append(found[0])
                elif found:  # as `CanonicalizationRewritePattern` applies several
                    patterns.append(GreedyRewritePatternApplier(list(found)))
            elif types is None or issubclass(cls, types):
                patterns.append(pattern)
        self.plans[cls] = (fold, tuple(patterns))
        return self.plans[cls]

    def has_constant_operand(self, op: Operation) -> bool:
        for operand in op.operands:
            if isinstance(operand, OpResult):
                cls = type(operand.owner)
                found = self.constant_like.get(cls)
                if found is None:
                    found = self.constant_like[cls] = cls.has_trait(ConstantLike)
                if found:
                    return True
        return False

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        fold, patterns = self.plans.get(type(op)) or self.plan(type(op))
        if (
            fold == ALWAYS or (fold == WITH_A_CONSTANT_OPERAND and self.has_constant_operand(op))
        ) and (folded := self.folder.try_fold(op)) is not None:
            rewriter.replace(op, new_ops=folded[1], new_results=folded[0])
            return
        if not op.regions and self.is_dead(op):
            rewriter.erase(op)
            return
        for pattern in patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def canonicalize(ctx: Context, module: ModuleOp) -> bool:
    """Apply the canonicalization patterns and folders until none applies; whether any
    rewrite or dead-op erasure changed the module."""
    walker = PatternRewriteWalker(CanonicalizeByType(ctx), post_walk_func=region_dce)
    return walker.rewrite_module(module)


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Canonicalize and fold (see the module docstring)."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize(ctx, op)
        explain_unfolded(op)

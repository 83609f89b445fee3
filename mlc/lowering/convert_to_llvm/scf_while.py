"""
`scf.while` -> blocks and branches (xDSL's `convert-scf-to-cf` lowers `for`/`if` only).

As MLIR's SCFToControlFlow does it: the block holding the loop is split at the loop;
the `before` region's blocks come in and receive the initial values, `scf.condition`
becomes a `cf.cond_br` to the `after` region (with the forwarded values) or to the
continuation (whose block arguments replace the loop's results), and the `after`
region's `scf.yield` branches back to the `before` region.
"""

from xdsl.dialects import cf, scf
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import BlockInsertPoint, InsertPoint


class WhileLowering(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter, /) -> None:
        init_block = op.parent_block()
        if init_block is None:
            return
        continuation = init_block.split_before(op)
        for i, type_ in enumerate(op.result_types):
            rewriter.insert_block_argument(continuation, i, type_)

        before = op.before_region.first_block
        after = op.after_region.first_block
        assert before is not None and after is not None

        condition = op.before_region.last_block.last_op
        assert isinstance(condition, scf.ConditionOp)
        branch = cf.ConditionalBranchOp(
            condition.condition, after, condition.args, continuation, condition.args
        )
        branch.location = op.location
        rewriter.replace(condition, branch)

        for block in op.after_region.blocks:
            terminator = block.last_op
            if isinstance(terminator, scf.YieldOp):
                back = cf.BranchOp(before, *terminator.operands)
                back.location = op.location
                rewriter.replace(terminator, back)

        rewriter.inline_region(op.before_region, BlockInsertPoint.before(continuation))
        rewriter.inline_region(op.after_region, BlockInsertPoint.before(continuation))
        entry = cf.BranchOp(before, *op.arguments)
        entry.location = op.location
        rewriter.insert(entry, InsertPoint.at_end(init_block))
        rewriter.replace(op, [], continuation.args)

"""
Tests for `OpTypeDispatch`: which patterns it tries on which op classes, and that a
walk with it rewrites a module exactly as xDSL's greedy applier does.
"""

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlc.ir import parse_module, print_module
from mlc.lowering.support.op_type_dispatch import OpTypeDispatch, declared_op_types


class AddToSub(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp | arith.AddfOp, rewriter: PatternRewriter, /):
        if isinstance(op, arith.AddiOp):
            rewriter.replace(op, arith.SubiOp(op.lhs, op.rhs))


class MulToAdd(RewritePattern):
    op_types = (arith.MuliOp,)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if isinstance(op, arith.MuliOp):
            rewriter.replace(op, arith.AddiOp(op.lhs, op.rhs))


class SwapSubOperands(RewritePattern):
    """Declares nothing, so it is tried on every op; rewrites each `subi` once."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if isinstance(op, arith.SubiOp) and "swapped" not in op.attributes:
            new = arith.SubiOp(op.rhs, op.lhs)
            new.attributes["swapped"] = UnitAttr()
            rewriter.replace(op, new)


PROGRAM = """
func.func @f(%a: i32, %b: i32) -> i32 {
  %0 = arith.muli %a, %b : i32
  %1 = arith.addi %0, %a : i32
  %2 = arith.subi %1, %b : i32
  %3 = arith.muli %2, %2 : i32
  func.return %3 : i32
}
"""


def test_declared_op_types():
    assert declared_op_types(AddToSub()) == (arith.AddiOp, arith.AddfOp)
    assert declared_op_types(MulToAdd()) == (arith.MuliOp,)
    assert declared_op_types(SwapSubOperands()) is None


def test_candidates_keep_order_and_skip_finished_dialects():
    add, mul, swap = AddToSub(), MulToAdd(), SwapSubOperands()
    dispatch = OpTypeDispatch([add, mul, swap], finished=["llvm"])
    assert dispatch.candidates(arith.AddiOp) == (add, swap)
    assert dispatch.candidates(arith.MuliOp) == (mul, swap)
    assert dispatch.candidates(arith.SubiOp) == (swap,)
    assert dispatch.candidates(llvm.AddOp) == ()


def test_rewrites_as_the_greedy_applier_does():
    patterns = [AddToSub(), MulToAdd(), SwapSubOperands()]
    greedy = parse_module(PROGRAM)
    PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(greedy)
    dispatched = parse_module(PROGRAM)
    applier = GreedyRewritePatternApplier([OpTypeDispatch(patterns)])
    PatternRewriteWalker(applier).rewrite_module(dispatched)
    assert print_module(dispatched) == print_module(greedy)
    assert "arith.muli" not in print_module(greedy)
    assert "arith.addi" not in print_module(greedy)

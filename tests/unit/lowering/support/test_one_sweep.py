"""`sweep` rewrites what xDSL's non-recursive walker rewrites, in the same order, to the
same IR: replaced ops, ops a rewrite erases before they are visited, regions removed."""

import pytest
from xdsl.dialects import arith, llvm, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from mlc.ir import parse_module
from mlc.lowering.support.one_sweep import sweep

SOURCE = """
func.func @f(%n: index, %x: i32) -> i32 {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %a = arith.addi %x, %x : i32
  %b = arith.muli %a, %x : i32
  %dead = arith.subi %x, %x : i32
  scf.for %i = %zero to %n step %one {
    %c = arith.addi %b, %x : i32
    scf.yield
  }
  %y = arith.subi %b, %a : i32
  func.return %y : i32
}
"""


class Lower(RewritePattern):
    """Records what it visits: an `addi` becomes an llvm add (and a zero it inserts),
    a `muli` erases the unused `subi` after it, the `scf.for` is erased with its body."""

    def __init__(self) -> None:
        self.visited: list[str] = []

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        self.visited.append(op.name)
        if isinstance(op, arith.AddiOp):
            zero = llvm.ConstantOp(IntegerAttr(0, op.result.type), op.result.type)
            add = llvm.AddOp(op.lhs, op.rhs)
            rewriter.replace(op, [zero, add], [add.res])
        elif isinstance(op, arith.MuliOp):
            following = op.next_op
            assert isinstance(following, arith.SubiOp)
            rewriter.erase(following)
        elif isinstance(op, scf.ForOp):
            rewriter.erase(op)


def _rewritten(apply) -> tuple[str, list[str]]:
    module = parse_module(SOURCE)
    pattern = Lower()
    apply(module, pattern)
    return str(module), pattern.visited


def test_same_ops_same_order_same_ir():
    def walker(module: ModuleOp, pattern: RewritePattern) -> None:
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(module)

    expected_ir, expected_visits = _rewritten(walker)
    ir, visits = _rewritten(sweep)
    assert visits == expected_visits
    assert ir == expected_ir
    # The erased `subi` and the `scf.for`'s body were not visited; the inserted ops neither.
    assert visits.count("arith.subi") == 1 and "arith.addi" in visits
    assert "llvm.add" not in visits and "scf.yield" not in visits


def test_reports_nothing_changed_and_errors_as_the_walker():
    module = parse_module("func.func @g() {\n  func.return\n}\n")
    assert sweep(module, Lower()) is False
    assert sweep(ModuleOp([]), Lower()) is False

    class Fails(RewritePattern):
        def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
            raise ValueError("no")

    for apply in (
        sweep,
        lambda m, p: PatternRewriteWalker(p, apply_recursively=False).rewrite_module(m),
    ):
        with pytest.raises(ValueError, match="Error while applying pattern: no"):
            apply(parse_module(SOURCE), Fails())

"""`canonicalize`'s per-class dispatch rewrites exactly as xDSL's greedy applier would."""

from pathlib import Path

import pytest
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from mlc.ir import parse_module, print_module
from mlc.lowering.graph.canonicalize import HoistLoopConstants, canonicalize
from mlc.lowering.graph.patterns.fold import TENSOR_PATTERNS
from mlc.lowering.support.dead_code import region_dce
from mlc.registry import make_context

FILECHECK = Path(__file__).parents[3] / "filecheck"
SOURCES = [
    FILECHECK / "lowering" / "graph" / "canonicalize.mlir",
    FILECHECK / "dialects" / "ml" / "canonicalize.mlir",
]

# Loop-level IR: index arithmetic that folds, constants deep in a loop nest, dead
# loads and allocs, a loop that runs once and one that never runs, a live store.
LOOPS = """
func.func @loops(%m: memref<8x8xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c2 = arith.constant 2 : index
  %four = arith.muli %c2, %c2 : index
  %dead = arith.addi %n, %four : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %four step %c1 {
      %k = arith.constant 3 : index
      %j3 = arith.addi %j, %k : index
      %x = memref.load %m[%i, %j3] : memref<8x8xf32>
      %unused = memref.load %m[%j, %i] : memref<8x8xf32>
      %t = memref.alloc() : memref<4xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %m[%j, %i] : memref<8x8xf32>
    }
  }
  %once = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %n) -> (index) {
    %s = arith.addi %acc, %i : index
    scf.yield %s : index
  }
  %f = arith.constant 1.0 : f32
  scf.for %i = %c8 to %c0 step %c1 {
    memref.store %f, %m[%i, %i] : memref<8x8xf32>
  }
  func.return %once : index
}
"""


class _EraseDeadOps(RewritePattern):
    """The dead-code check `canonicalize` applied before its per-class dispatch."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /) -> None:
        if not op.regions and is_trivially_dead(op):
            rewriter.erase(op)


def _reference(module, ctx) -> None:
    pattern = GreedyRewritePatternApplier(
        [_EraseDeadOps(), HoistLoopConstants(), CanonicalizationRewritePattern(), *TENSOR_PATTERNS],
        ctx=ctx,
        folding_enabled=True,
        dce_enabled=False,
    )
    PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_module(module)


def _programs() -> list[tuple[str, str]]:
    found = [("loops", LOOPS)]
    for source in SOURCES:
        for i, text in enumerate(source.read_text().split("// -----")):
            found.append((f"{source.parent.name}/{source.stem}#{i}", text))
    return found


@pytest.mark.parametrize(("name", "text"), _programs(), ids=[n for n, _ in _programs()])
def test_same_rewrites_as_greedy_applier(name, text):
    ctx = make_context()
    ours, theirs = parse_module(text), parse_module(text)
    canonicalize(ctx, ours)
    _reference(theirs, ctx)
    assert print_module(ours) == print_module(theirs)


def test_loops_are_canonicalized():
    """The loop-level program does change: folds, hoists, dead loads and loops go."""
    module = parse_module(LOOPS)
    canonicalize(make_context(), module)
    text = print_module(module)
    assert "arith.muli" not in text and "%four = arith.constant 4 : index" in text
    assert text.index("%k = arith.constant 3") < text.index("scf.for")  # out of the nest
    assert text.count("memref.load") == 1 and text.count("scf.for") == 2
    assert "func.return %n : index" in text  # the one-trip loop folded away

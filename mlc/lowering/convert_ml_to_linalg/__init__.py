"""
Lower `ml` ops on tensors to linalg on tensors (level 2 of docs/design/lowering.md).

Each `ml` op becomes one `linalg.generic` per stage of its computation, over outputs
made by `tensor.empty` (or, for reductions, by a fill generic):

- elementwise ops: one generic over the result, operands read through numpy
  broadcasting maps (`elementwise`);
- `ml.matmul`: a zero fill and one generic with loops `(batch..., i, k, j)`
  (`contraction`);
- reductions: a fill with the reduction's identity and one generic with
  `reduction` iterators, plus a division for the mean (`reduction`);
- softmax, layer_norm, batch_norm: a few generics each (`normalization`);
- movement ops (transpose, reshape, broadcast_to, concat, slice, gather) and
  conv2d/pooling: `movement` and `conv`; gather_elements, gather_nd and top_k:
  `indexing`; scatter_elements and scatter_nd: `scatter`; their index checks (and
  gather's): `index_checks`; with `scatter-atomic`, NonZero's compacting scatter
  first, as one loop of writes (`scatter_compaction`).

Dynamic dims are read with `tensor.dim`; where one may be a size-1 broadcast at run
time, the sizes are checked and the operand read at a run-time stride (`broadcast`);
other dims the `ml` verifier let pass are assumed to match. Every new op keeps the
location of the `ml` op it replaces. Afterwards no `ml` op may remain: one that no
pattern lowers stops the pass with an error at its location. Unsigned integer types
are then made signless (`signless`): the lowerings chose unsigned ops where they mattered.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)

from mlc.diagnostics import op_error
from mlc.lowering.convert_ml_to_linalg import (
    contraction,
    conv,
    conv_pixel,
    elementwise,
    indexing,
    movement,
    normalization,
    reduction,
    scan,
    scatter,
)
from mlc.lowering.convert_ml_to_linalg.signless import signless_types


def patterns(
    online_softmax: bool = False,
    scatter_group_pairs: int = scatter.GROUPED_MIN_PAIRS,
    scatter_atomic: bool = False,
) -> list[RewritePattern]:
    """Every `ml` op's lowering; softmax in its online form with `online_softmax`."""
    return [
        *elementwise.PATTERNS,
        *contraction.PATTERNS,
        *reduction.PATTERNS,
        *normalization.patterns(online_softmax),
        *movement.PATTERNS,
        *indexing.PATTERNS,
        *conv_pixel.PATTERNS,
        *conv.PATTERNS,
        *scan.PATTERNS,
        *scatter.patterns(scatter_group_pairs, scatter_atomic),
    ]


def check_fully_lowered(module: ModuleOp) -> None:
    """Stop with an error at the first `ml` op that no pattern lowered."""
    for op in module.walk():
        if op.name.startswith("ml."):
            op_error(op, f"convert-ml-to-linalg: no lowering for '{op.name}' yet")


@dataclass(frozen=True)
class ConvertMLToLinalgPass(ModulePass):
    """Lower every `ml` op to linalg on tensors (see the module docstring)."""

    name = "convert-ml-to-linalg"

    online_softmax: bool = False
    """Softmax as an online max-and-sum and a normalising pass (two `exp` per element,
    two passes) rather than three passes with one `exp`: the GPU pipeline's choice."""

    scatter_group_pairs: int = scatter.GROUPED_MIN_PAIRS
    """Scatters of more destination x update-tuple pairs than this (or of sizes known
    only at run time) are grouped by destination first (`scatter_grouped.py`; a
    `scatter_nd` of rows: a loop over its tuples, `scatter_rows.py`); -1:
    never (the GPU pipeline's choice: its grouping loops are one-thread kernels)."""

    scatter_atomic: bool = False
    """Scatters whose reduction an atomic applies (`none`, and `add`/`max`/`min` on 32-
    and 64-bit elements) as loops over their updates marked `mlc.atomic_updates`, which
    the GPU runs one thread an update (`scatter_atomic.py`): the GPU pipeline's choice."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.scatter_atomic:
            PatternRewriteWalker(scatter.LowerCompaction()).rewrite_module(op)
        applier = GreedyRewritePatternApplier(
            patterns(self.online_softmax, self.scatter_group_pairs, self.scatter_atomic)
        )
        PatternRewriteWalker(applier).rewrite_module(op)
        check_fully_lowered(op)
        signless_types(op)

"""
`scf.if`, `scf.for` and `scf.index_switch` -> `cf` branches: xDSL's
`convert-scf-to-cf`, with its dead-code check and pattern choice made per op class.

xDSL's pass runs a `GreedyRewritePatternApplier` of its three patterns over every op
of the module (twice: the walker sweeps again once anything changed), and the applier
first asks xDSL's `is_trivially_dead` of each op, which looks its traits up anew
(an `isinstance` over the class's traits per question). On ResNet-50's loop-level IR
that is ~46k visits for ~1.1k loops and branches. Here the same walker applies one
pattern that asks `DeadOpCheck` (the same answer, trait lookups kept per class), erases
a dead op as the applier does, and otherwise applies the one lowering for the op's
class, or none: the same rewrites in the same order, so the same IR. A loop marked
by `loop_hints` passes its mark to its back edge.
"""

from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import PatternRewriteWalker
from xdsl.transforms.convert_scf_to_cf import IfLowering, SwitchLowering

from mlc.lowering.convert_to_llvm.loop_hints import MarkedForLowering
from mlc.lowering.support.op_type_dispatch import DeadFirstByClass


def convert_scf_to_cf(module: ModuleOp) -> None:
    """Lower every `scf.if`, `scf.for` and `scf.index_switch` under `module` to `cf`."""
    lowering = DeadFirstByClass(
        {
            scf.IndexSwitchOp: SwitchLowering(),
            scf.IfOp: IfLowering(),
            scf.ForOp: MarkedForLowering(),
        }
    )
    PatternRewriteWalker(lowering).rewrite_module(module)

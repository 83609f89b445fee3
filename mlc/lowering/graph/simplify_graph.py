"""
Alternate `shape-inference` and `canonicalize` until the module stops changing.

Each enables the other: a refined static shape lets a fold fire (an `ml.reshape` or
`ml.broadcast_to` to the operand's own type is a no-op only once both are static,
`tensor.dim` of a static dim is a constant), and a fold can expose a static value to
shape inference (a constant shape operand makes a reshape static; a folded constant
or a forwarded operand replaces a dynamically typed result). The fixpoint is
detected by comparing the printed module after each round, so there is no fixed
number of rounds; each round makes the IR strictly more static or smaller, which
bounds the loop. Remarks are given once, for the end result: dims refined per
function, and constants left unfolded.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlc.lowering.graph.canonicalize import canonicalize
from mlc.lowering.graph.patterns.fold import explain_unfolded
from mlc.lowering.graph.shape_inference import refine_functions, remark_refined


def simplify_graph(ctx: Context, module: ModuleOp) -> int:
    """Run shape inference and canonicalization to a common fixpoint; the rounds taken."""
    rounds = 0
    refined: dict[func.FuncOp, int] = {}
    after = str(module)
    while True:
        before = after  # one print a round: this round's end is the next one's start
        for function, count in refine_functions(module).items():
            refined[function] = refined.get(function, 0) + count
        canonicalize(ctx, module)
        rounds += 1
        after = str(module)
        if after == before:
            break
    remark_refined({f: n for f, n in refined.items() if f.parent is not None})
    explain_unfolded(module)
    return rounds


@dataclass(frozen=True)
class SimplifyGraphPass(ModulePass):
    """`shape-inference` and `canonicalize`, alternated until neither changes the IR."""

    name = "simplify-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        simplify_graph(ctx, op)

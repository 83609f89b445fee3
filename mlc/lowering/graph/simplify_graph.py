"""
Alternate `shape-inference` and `canonicalize` until the module stops changing.

Each enables the other: a refined static shape lets a fold fire (an `ml.reshape` or
`ml.broadcast_to` to the operand's own type is a no-op only once both are static,
`tensor.dim` of a static dim is a constant), and a fold can expose a static value to
shape inference (a constant shape operand makes a reshape static; a folded constant
or a forwarded operand replaces a dynamically typed result). The fixpoint is the
first round in which neither changed anything: shape inference counts the dims it
refined (its only edits, the casts included, follow from a refined type) and the
rewrite walker reports whether a pattern, a fold or dead-code removal acted. Printing
the module to compare it cost more than a sweep on a training step's joint graph.
There is no fixed number of rounds; each round makes the IR strictly more static or
smaller, which bounds the loop. Remarks are given once, for the end result: dims refined per
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
    changed = True
    while changed:
        changed = False
        for function, count in refine_functions(module).items():
            refined[function] = refined.get(function, 0) + count
            changed |= count > 0
        changed |= canonicalize(ctx, module)
        rounds += 1
    remark_refined({f: n for f, n in refined.items() if f.parent is not None})
    explain_unfolded(module)
    return rounds


@dataclass(frozen=True)
class SimplifyGraphPass(ModulePass):
    """`shape-inference` and `canonicalize`, alternated until neither changes the IR."""

    name = "simplify-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        simplify_graph(ctx, op)

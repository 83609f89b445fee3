"""
Alternate `shape-inference` and `canonicalize` until the module stops changing.

Each enables the other: a refined static shape lets a fold fire (an `ml.reshape` or
`ml.broadcast_to` to the operand's own type is a no-op only once both are static), and
a fold can expose a static value to shape inference (a forwarded operand replaces a
dynamically typed result). The fixpoint is detected by comparing the printed module
after each round, so there is no fixed number of rounds; each round makes the IR
strictly more static or smaller, which bounds the loop.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass

from mlc.lowering.shape_inference import infer_shapes


def simplify_graph(ctx: Context, module: ModuleOp) -> int:
    """Run shape inference and canonicalization to a common fixpoint; the rounds taken."""
    rounds = 0
    while True:
        before = str(module)
        infer_shapes(module)
        CanonicalizePass().apply(ctx, module)
        rounds += 1
        if str(module) == before:
            return rounds


@dataclass(frozen=True)
class SimplifyGraphPass(ModulePass):
    """`shape-inference` and `canonicalize`, alternated until neither changes the IR."""

    name = "simplify-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        simplify_graph(ctx, op)

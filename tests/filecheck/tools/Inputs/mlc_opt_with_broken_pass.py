"""
`mlc-opt` with one more pass, `test-misplace-index`, that breaks the IR as a buggy
rewrite would: it puts a `linalg.index` at the top of every function, outside any
`linalg.generic`. For mlc-opt-verify-each.mlir; the pass exists only in this process.
The driver is the `tools/mlc_opt.py` of the checkout this file is in.
"""

import sys
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc import registry


@dataclass(frozen=True)
class MisplaceIndexPass(ModulePass):
    name = "test-misplace-index"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            Rewriter.insert_op(IndexOp(0), InsertPoint.at_start(function.body.block))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
    from tools.mlc_opt import main  # the checkout's, found only once its root is on the path

    registry.MLC_PASSES[MisplaceIndexPass.name] = lambda: MisplaceIndexPass
    sys.exit(main(sys.argv[1:]))

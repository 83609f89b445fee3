"""
Building the GPU's tiled contraction kernel: ops appended at a point, each at the
location of the generic it replaces (`mlc.lowering.support.locations`), and index
arithmetic in one call each.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, f32
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map

from mlc.lowering.support.locations import LocatedEmitter, keep_location


class Emitter(LocatedEmitter):
    """Appends ops at `point`, each at the location of the generic `op` it replaces,
    with index arithmetic in one call each."""

    def __init__(self, rewriter: PatternRewriter, point: InsertPoint, op: Operation):
        super().__init__(point, op.location)
        self.rewriter = rewriter
        self.op = op

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.AddiOp(a, self.index(b) if isinstance(b, int) else b))

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.MuliOp(a, self.index(b) if isinstance(b, int) else b))

    def div(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.DivUIOp(a, self.index(b) if isinstance(b, int) else b))

    def rem(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.RemUIOp(a, self.index(b) if isinstance(b, int) else b))

    def ceil_div(self, a: SSAValue, b: int) -> SSAValue:
        return self.div(self.add(a, b - 1), b)

    def less(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.CmpiOp(a, b, "ult"))

    def zero(self) -> SSAValue:
        return self(arith.ConstantOp(FloatAttr(0.0, f32)))

    def sub(self, a: SSAValue, b: int) -> SSAValue:
        return self(arith.SubiOp(a, self.index(b)))

    def indices(self, op: GenericOp, index: int, ivs: Sequence[SSAValue]) -> list[SSAValue]:
        """The indices of operand `index` of `op` at loop indices `ivs` (its indexing map)."""
        affine_map = op.get_indexing_maps().data[index].data
        with keep_location(self.rewriter, self.op):
            return list(indices_for_map(self.rewriter, self.point, affine_map, ivs))

    def load(self, op: GenericOp, index: int, ivs: Sequence[SSAValue]) -> SSAValue:
        """Operand `index` of `op` at loop indices `ivs` (through its indexing map)."""
        return self(memref.LoadOp.get(op.operands[index], self.indices(op, index, ivs)))

    def region(self, body: Block) -> "Emitter":
        return Emitter(self.rewriter, InsertPoint.at_end(body), self.op)

"""
Building the loop nest that replaces a `linalg.generic` (or a `memref.copy`) in
`convert-linalg-to-parallel-loops`: ops inserted at a moving point, each at the location
of the op being lowered (`mlc.lowering.support.locations.located_builder`), the
`scf.parallel` and `scf.for` loops, the operands' loads and stores through their indexing
maps, and the generic's body cloned at the loop indices.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map

from mlc.lowering.support.locations import keep_location, located_builder


class LoopEmitter:
    """Inserts ops at a moving point (`point`), each at the location of the op lowered."""

    def __init__(self, rewriter: PatternRewriter, op: Operation):
        self.rewriter = rewriter
        self.op = op
        self.builder = located_builder(InsertPoint.before(op), op.location)

    @property
    def point(self) -> InsertPoint:
        return self.builder.insertion_point

    @point.setter
    def point(self, point: InsertPoint) -> None:
        self.builder.insertion_point = point

    def __call__(self, new: Operation) -> Operation:
        return self.builder.insert(new)

    def keep_location(self, new: Operation) -> Operation:
        """Insert `new` as it is: a cloned body op keeps its own location."""
        return self.rewriter.insert(new, self.point)

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr.from_index_int_value(value))).results[0]

    def indices(self, affine_map: AffineMap, ivs: Sequence[SSAValue]) -> Sequence[SSAValue]:
        """The results of `affine_map` at `ivs`, an `affine.apply` each that is not a dim."""
        with keep_location(self.rewriter, self.op):
            return indices_for_map(self.rewriter, self.point, affine_map, ivs)

    def loads(self, op: GenericOp, ivs: Sequence[SSAValue], which: Sequence[int]) -> list[SSAValue]:
        """Operands `which` of `op` at loop indices `ivs`; a scalar operand as it is."""
        maps = op.get_indexing_maps().data
        values: list[SSAValue] = []
        for i in which:
            operand = op.operands[i]
            if not isinstance(operand.type, MemRefType):
                values.append(operand)  # a scalar operand is used as is
                continue
            load = memref.LoadOp.get(operand, self.indices(maps[i].data, ivs))
            values.append(self(load).results[0])
        return values

    def stores(self, op: GenericOp, ivs: Sequence[SSAValue], values: Sequence[SSAValue]) -> None:
        """Store `values` into `op`'s outputs at loop indices `ivs`."""
        maps = op.get_indexing_maps().data
        for j, value in enumerate(values):
            i = len(op.inputs) + j
            self(memref.StoreOp.get(value, op.operands[i], self.indices(maps[i].data, ivs)))

    def ceil_div(self, value: SSAValue, divisor: int) -> SSAValue:
        if divisor == 1:
            return value
        bumped = self(arith.AddiOp(value, self.index(divisor - 1))).results[0]
        return self(arith.DivUIOp(bumped, self.index(divisor))).results[0]


def parallel_loop(emit: LoopEmitter, bounds: Sequence[SSAValue]) -> tuple[scf.ParallelOp, Block]:
    """An empty `scf.parallel` from 0 to `bounds` step 1 (one iteration when no bounds)."""
    zero, one = emit.index(0), emit.index(1)
    uppers = list(bounds) or [one]
    body = Block(arg_types=[IndexType()] * len(uppers))
    loop = scf.ParallelOp([zero] * len(uppers), uppers, [one] * len(uppers), Region(body))
    emit(loop)
    return loop, body


def for_nest(
    emit: LoopEmitter,
    bounds: Sequence[SSAValue],
    dims: Sequence[int],
    ivs: list[SSAValue | None],
    carried: Sequence[SSAValue],
) -> tuple[list[scf.ForOp], list[SSAValue]]:
    """`scf.for` loops over `dims` (outermost first) carrying `carried`; emit moves inside."""
    loops: list[scf.ForOp] = []
    for dim in dims:
        zero, one = emit.index(0), emit.index(1)
        types = [v.type for v in carried]
        block = Block(arg_types=[IndexType(), *types])
        loop = scf.ForOp(zero, bounds[dim], one, carried, Region(block))
        emit(loop)
        loops.append(loop)
        ivs[dim] = block.args[0]
        carried = list(block.args[1:])
        emit.point = InsertPoint.at_start(block)
    return loops, list(carried)


def clone_body(
    emit: LoopEmitter, block: Block, args: Sequence[SSAValue], ivs: Sequence[SSAValue]
) -> list[SSAValue]:
    """Clone a generic's body with its arguments bound; the values it yields."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
    for inner in block.ops:
        if isinstance(inner, YieldOp):
            return [mapping.get(v, v) for v in inner.operands]
        if isinstance(inner, IndexOp):
            mapping[inner.result] = ivs[inner.dim.value.data]
            continue
        emit.keep_location(inner.clone(value_mapper=mapping))
    raise AssertionError("a linalg.generic body ends with linalg.yield")

"""
Four consecutive iterations per GPU thread, with 16-byte loads and stores.

`convert-parallel-loops-to-gpu` gives each thread one iteration of a flattened
`scf.parallel`; an elementwise kernel then moves 4 bytes per load instruction and
stays far under the copy bandwidth. For a loop body of f32 loads, scalar arithmetic
and stores (what `convert-linalg-to-parallel-loops` makes of an elementwise generic),
each thread instead takes iterations `4q .. 4q + 3` of the last dim:

    %j0 = %q * 4
    scf.if %j0 + 4 <= %n and every contiguous buffer is 16-byte aligned with rows
           of a multiple of 4 floats (`aligned_rows`) {
      %v = vector.load %a[%i, %j0] {alignment = 16}     // ld.global.v4.f32
      ... the body on each lane (vector.extract) ...
      vector.store %w, %out[%i, %j0] {alignment = 16}   // st.global.v4.f32
    } else {
      scf.if %j0 + 0 < %n { body at %j0 + 0 } ... scf.if %j0 + 3 < %n { body at %j0 + 3 }
    }

An access is contiguous when its last index is the loop's last index; a load whose
indices ignore it (a broadcast, as a bias row read down a column) is read once for
the four lanes. Buffers must have identity layouts (offset 0), so a row starts
16-byte aligned when the buffer does and its last dim is a multiple of 4; the check
is made at run time, the scalar path serves the rest (misaligned views, the tail).
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, NoneAttr, VectorType, f32, i64
from xdsl.ir import Block, Operation, SSAValue

from mlc.lowering.support.loop_builder import constant_index

LANES = 4  # f32 lanes of a 16-byte access


@dataclass
class Lanes:
    """The loop body's accesses, sorted for the four-lane kernel."""

    body: list[Operation]  # the ops of the loop body, without its terminator
    contiguous: list[memref.LoadOp | memref.StoreOp]
    uniform: list[memref.LoadOp]


def is_pure_scalar(op: Operation) -> bool:
    """Scalar arithmetic: an `arith` or `math` op on neither vectors nor buffers."""
    return (
        op.dialect_name() in ("arith", "math")
        and not op.regions
        and all(not isinstance(r.type, VectorType | MemRefType) for r in op.results)
    )


def plan_lanes(loop: scf.ParallelOp) -> Lanes | None:
    """How `loop` runs four lanes per thread (module docstring), or None if it cannot."""
    block = loop.body.block
    ivs = list(block.args)
    if not ivs or not _unit_last_dim(loop):
        return None
    body = list(block.ops)[:-1]
    contiguous: list[memref.LoadOp | memref.StoreOp] = []
    uniform: list[memref.LoadOp] = []
    stored = False
    for op in body:
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            kind = access_kind(op, ivs, block)
            if kind is None or (isinstance(op, memref.LoadOp) and stored):
                return None
            if kind == "contiguous":
                contiguous.append(op)
            elif isinstance(op, memref.LoadOp):
                uniform.append(op)
            else:
                return None  # four lanes storing to one element
            stored |= isinstance(op, memref.StoreOp)
        elif not is_pure_scalar(op):
            return None
    if not any(isinstance(op, memref.StoreOp) for op in contiguous):
        return None
    return Lanes(body, contiguous, uniform)


def _unit_last_dim(loop: scf.ParallelOp) -> bool:
    """Whether the last dim runs from 0 in steps of 1."""
    return constant_index(loop.lowerBound[-1]) == 0 and constant_index(loop.step[-1]) == 1


def access_kind(
    op: memref.LoadOp | memref.StoreOp, ivs: list[SSAValue], block: Block
) -> str | None:
    """'contiguous', 'uniform' (ignores the last index), or None when not a plain access."""
    type_ = op.memref.type
    if not (
        isinstance(type_, MemRefType)
        and type_.element_type == f32
        and isinstance(type_.layout, NoneAttr)
        and isinstance(type_.memory_space, NoneAttr)
    ):
        return None
    if not op.indices:
        return "uniform"  # a rank-0 buffer: one scalar
    if isinstance(op, memref.StoreOp) and op.value.owner is not None and op.value in ivs:
        return None
    last = ivs[-1]
    indices = list(op.indices)
    # (a rank-0 store was "uniform" above, and plan_lanes refuses uniform stores)
    for index in indices[:-1]:
        if index is last or not (index in ivs or _outside(index, block)):
            return None
    if indices[-1] is last:
        return "contiguous"
    if indices[-1] in ivs or _outside(indices[-1], block):
        return "uniform"
    return None


def _outside(value: SSAValue, block: Block) -> bool:
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    while op is not None:
        if op.parent_block() is block:
            return False
        op = op.parent_op()
    return not (isinstance(owner, Block) and owner is block)


def aligned_rows(buffer: SSAValue, emit: Callable[[Operation], SSAValue]) -> SSAValue:
    """
    Whether `buffer` (an identity layout: offset 0) starts 16-byte aligned and, with
    more than one dim, its rows hold a multiple of 4 floats: then every 4th element of
    a row starts a 16-byte vector. `emit` inserts each op made and gives its result.
    """

    def index(value: int) -> SSAValue:
        return emit(arith.ConstantOp(IntegerAttr.from_index_int_value(value)))

    address = emit(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
    zero = index(0)
    aligned = emit(arith.CmpiOp(emit(arith.RemUIOp(address, index(16))), zero, "eq"))
    type_ = buffer.type
    assert isinstance(type_, MemRefType)
    if type_.get_num_dims() < 2:
        return aligned
    size = emit(memref.DimOp(buffer, index(type_.get_num_dims() - 1)))
    rows = emit(arith.CmpiOp(emit(arith.RemUIOp(size, index(LANES))), zero, "eq"))
    return emit(arith.AndIOp(aligned, rows))


class LaneEmitter:
    """Emits the four-lane body of `plan` into a block (see the module docstring)."""

    def __init__(self, plan: Lanes, ivs: list[SSAValue], emit):
        self.plan = plan
        self.ivs = ivs  # the loop's indices, the last one being the lane group `q`
        self.emit = emit  # an emitter appending at a point (convert_parallel_loops_to_gpu)

    def build(self, loop: scf.ParallelOp, last_count: SSAValue) -> None:
        emit = self.emit
        first = emit(arith.MuliOp(self.ivs[-1], emit.index(LANES)))
        end = emit(arith.AddiOp(first, emit.index(LANES)))
        fits = emit(arith.CmpiOp(end, last_count, "ule"))
        for buffer in dict.fromkeys(op.memref for op in self.plan.contiguous):
            fits = emit(arith.AndIOp(fits, aligned_rows(buffer, emit)))
        vector_block, scalar_block = Block(), Block()
        emit(scf.IfOp(fits, [], [vector_block], [scalar_block]))
        self._vector(loop, first, emit.at(vector_block))
        self._scalar(loop, first, last_count, emit.at(scalar_block))

    def _mapping(self, loop: scf.ParallelOp, last: SSAValue) -> dict[SSAValue, SSAValue]:
        block = loop.body.block
        mapping = dict(zip(block.args, [*self.ivs[:-1], last], strict=True))
        return mapping

    def _vector(self, loop: scf.ParallelOp, first: SSAValue, emit) -> None:
        quad = VectorType(f32, [LANES])
        lanes: list[dict[SSAValue, SSAValue]] = []
        for lane in range(LANES):
            index = first if lane == 0 else emit(arith.AddiOp(first, emit.index(lane)))
            lanes.append(self._mapping(loop, index))
        base = self._mapping(loop, first)
        for op in self.plan.body:
            if isinstance(op, memref.LoadOp) and op in self.plan.contiguous:
                indices = [base.get(i, i) for i in op.indices]
                load = vector.LoadOp(op.memref, indices, quad)
                load.attributes["alignment"] = IntegerAttr(16, i64)
                loaded = emit(load)
                for lane, mapping in enumerate(lanes):
                    mapping[op.res] = emit(vector.ExtractOp(loaded, [lane], f32))
            elif isinstance(op, memref.LoadOp):
                value = emit(memref.LoadOp.get(op.memref, [base.get(i, i) for i in op.indices]))
                for mapping in lanes:
                    mapping[op.res] = value
            elif isinstance(op, memref.StoreOp):
                values = [mapping.get(op.value, op.value) for mapping in lanes]
                packed = emit(vector.BroadcastOp(values[0], quad))
                for lane in range(1, LANES):
                    packed = emit(vector.InsertOp(values[lane], packed, [lane], quad))
                store = vector.StoreOp(packed, op.memref, [base.get(i, i) for i in op.indices])
                store.attributes["alignment"] = IntegerAttr(16, i64)
                emit(store)
            else:
                for mapping in lanes:
                    emit.keep(op.clone(value_mapper=mapping))
        emit(scf.YieldOp())

    def _scalar(self, loop: scf.ParallelOp, first: SSAValue, count: SSAValue, emit) -> None:
        for lane in range(LANES):
            index = first if lane == 0 else emit(arith.AddiOp(first, emit.index(lane)))
            inside = emit(arith.CmpiOp(index, count, "ult"))
            then = Block()
            emit(scf.IfOp(inside, [], [then]))
            inner = emit.at(then)
            mapping = self._mapping(loop, index)
            for op in self.plan.body:
                inner.keep(op.clone(value_mapper=mapping))
            inner(scf.YieldOp())
        emit(scf.YieldOp())

"""
Four consecutive iterations per GPU thread, with 16-byte loads and stores.

`convert-parallel-loops-to-gpu` gives each thread one iteration of a flattened
`scf.parallel`; an elementwise kernel then moves 4 bytes per load instruction and
stays far under the copy bandwidth. For a loop body of f32 loads, scalar arithmetic
and stores (what `convert-linalg-to-parallel-loops` makes of an elementwise generic),
each thread instead takes iterations `4q .. 4q + 3` of the last dim:

    %j0 = %q * 4
    scf.if %j0 + 4 <= %n and every contiguous buffer is 16-byte aligned with a
           last dim that is a multiple of 4 {
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

from dataclasses import dataclass

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, NoneAttr, VectorType, f32, i64
from xdsl.ir import Block, Operation, SSAValue

LANES = 4  # f32 lanes of a 16-byte access


@dataclass
class Lanes:
    """The loop body's accesses, sorted for the four-lane kernel."""

    body: list[Operation]  # the ops of the loop body, without its terminator
    contiguous: list[memref.LoadOp | memref.StoreOp]
    uniform: list[memref.LoadOp]


def _is_pure_scalar(op: Operation) -> bool:
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
        elif not _is_pure_scalar(op):
            return None
    if not any(isinstance(op, memref.StoreOp) for op in contiguous):
        return None
    return Lanes(body, contiguous, uniform)


def _unit_last_dim(loop: scf.ParallelOp) -> bool:
    """Whether the last dim runs from 0 in steps of 1."""

    def constant(value: SSAValue) -> int | None:
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        return None

    return constant(loop.lowerBound[-1]) == 0 and constant(loop.step[-1]) == 1


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
            fits = emit(arith.AndIOp(fits, self._aligned(buffer)))
        vector_block, scalar_block = Block(), Block()
        emit(scf.IfOp(fits, [], [vector_block], [scalar_block]))
        self._vector(loop, first, emit.at(vector_block))
        self._scalar(loop, first, last_count, emit.at(scalar_block))

    def _aligned(self, buffer: SSAValue) -> SSAValue:
        """Whether `buffer` starts 16-byte aligned and its rows hold a multiple of 4 floats."""
        emit = self.emit
        address = emit(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
        zero = emit.index(0)
        start = emit(arith.CmpiOp(emit(arith.RemUIOp(address, emit.index(16))), zero, "eq"))
        type_ = buffer.type
        assert isinstance(type_, MemRefType)
        last = type_.get_num_dims() - 1
        size = emit(memref.DimOp(buffer, emit.index(last)))
        rows = emit(arith.CmpiOp(emit(arith.RemUIOp(size, emit.index(LANES))), zero, "eq"))
        return emit(arith.AndIOp(start, rows))

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

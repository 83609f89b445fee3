"""
16-byte lanes for a warp's row loops: before the lane-strided scalar loop that
`mlc.lowering.gpu.loop_mapping.warp_reduction` gives each row loop (its reduction and the column
loops fused after it), a lane takes four consecutive elements at a time with one
`vector.load` (`ld.global.v4.f32`) per buffer, four such groups a step on long rows
(one on static rows under 2048), so each lane keeps 64 bytes a buffer in flight where
the scalar loop keeps 16:

    for c = lb + 4 lane to end step 512:
      v_u = vector.load x[row, c + 128 u]         // u = 0..3, all loads first
      body(c + 128 u + k) on v_u[k]               // k = 0..3, in order
      vector.store y[row, c + 128 u]              // the four results of a store
    (the scalar loop then takes the columns from end on; end = lb + the full steps)

Only where every buffer read or written along the columns starts 16-byte aligned and
its rows hold a multiple of 4 floats (checked at run time, as `vector_lanes` does):
otherwise `end` is the loop's start and the scalar loop takes the whole row. A loop
qualifies when its step is 1, its start a multiple of 4, every access either along the
column (the last index, f32, plain layout) or independent of it, and a buffer written
along the columns is read only where it is written.
"""

from collections.abc import Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr, VectorType, f32, i64
from xdsl.ir import Block, Operation, SSAValue

from mlc.gpu_architectures import WARP
from mlc.lowering.gpu.loop_mapping.vector_lanes import LANES, access_kind, aligned_rows
from mlc.lowering.support.loop_builder import constant_index, implicit_index

QUAD = LANES  # elements a lane loads at once: 16 bytes of f32
GROUP = QUAD * WARP  # columns a warp covers with one group of four a lane
GROUPS = 4  # groups a lane takes a step, on long rows (4 x 16 bytes in flight)
LONG_ROW = 2048  # static rows shorter than this take one group a step: none go unused


def _contiguous(loop: scf.ForOp) -> list[memref.LoadOp | memref.StoreOp] | None:
    """The accesses of `loop` along its columns, or None if it does not qualify."""
    start, step = constant_index(loop.lb), constant_index(loop.step)
    if step != 1 or start is None or start % QUAD:
        return None
    block = loop.body.block
    iv = block.args[0]
    along: list[memref.LoadOp | memref.StoreOp] = []
    for op in block.ops:
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            kind = access_kind(op, [iv], block)
            if kind is None or (kind == "uniform" and isinstance(op, memref.StoreOp)):
                return None
            if kind == "contiguous":
                along.append(op)
    written = {op.memref for op in along if isinstance(op, memref.StoreOp)}
    if not all(in_place(along, buffer) for buffer in written):
        return None
    if not any(isinstance(op, memref.LoadOp) for op in along):
        return None
    return along


def in_place(ops: Sequence[Operation], buffer: SSAValue) -> bool:
    """Whether every access of `ops` to `buffer` is at the same indices: a buffer written
    in a loop body is then read only where it is written, one element an iteration, and
    no iteration reads what another writes."""
    places = {
        tuple(op.indices)
        for op in ops
        if isinstance(op, memref.LoadOp | memref.StoreOp) and op.memref is buffer
    }
    return len(places) <= 1


def _aligned(buffers: Sequence[SSAValue]) -> SSAValue:
    """Whether every buffer starts 16-byte aligned with rows of a multiple of 4 floats
    (built under the caller's implicit builder, which inserts each op as it is made)."""
    checks = [aligned_rows(buffer, lambda op: op.results[0]) for buffer in buffers]
    ok = checks[0]
    for check in checks[1:]:
        ok = arith.AndIOp(ok, check).result
    return ok


def vector_prefix(loop: scf.ForOp, lane: SSAValue, inits: Sequence[SSAValue]) -> list[SSAValue]:
    """
    Build the 16-byte loop before `loop` (under the caller's implicit builder) and make
    `loop` start where it ends; the `iter_args` the rest of the row starts from. `loop`
    is left alone, and `inits` returned, where it does not qualify.
    """
    along = _contiguous(loop)
    if along is None:
        return list(inits)
    start, stop = constant_index(loop.lb), constant_index(loop.ub)
    groups = GROUPS if start is None or stop is None or stop - start >= LONG_ROW else 1
    step = GROUP * groups
    aligned = _aligned(list(dict.fromkeys(op.memref for op in along)))
    span = arith.SubiOp(arith.MaxSIOp(loop.ub, loop.lb), loop.lb).result
    full = arith.MuliOp(arith.DivSIOp(span, implicit_index(step)), implicit_index(step)).result
    end = arith.SelectOp(aligned, arith.AddiOp(loop.lb, full), loop.lb).result
    first = arith.AddiOp(loop.lb, arith.MuliOp(lane, implicit_index(QUAD))).result
    body = Block(arg_types=[IndexType(), *(value.type for value in inits)])
    _build_step(loop, along, body, groups)
    main = scf.ForOp(first, end, implicit_index(step), inits, body)
    loop.operands = [end, loop.ub, loop.step, *loop.iter_args]
    return list(main.results)


def _build_step(
    loop: scf.ForOp, along: list[memref.LoadOp | memref.StoreOp], body: Block, groups: int
) -> None:
    """The body of one step: all its vector loads, then each element's body in order,
    each group's stores as one vector store."""
    original = loop.body.block
    yielded = original.last_op
    assert isinstance(yielded, scf.YieldOp)
    ops = [op for op in list(original.ops)[:-1] if op not in along]
    stores = [op for op in along if isinstance(op, memref.StoreOp)]
    with ImplicitBuilder(body):
        loaded = [_group_loads(original, along, body.args[0], group) for group in range(groups)]
        carried: list[SSAValue] = list(body.args[1:])
        for base, lanes in loaded:
            for mapping in lanes:
                mapping.update(zip(original.args[1:], carried, strict=True))
                for op in ops:
                    op.clone(mapping)  # inserted by the implicit builder
                carried = [mapping.get(value, value) for value in yielded.operands]
            for store in stores:
                _vector_store(store, original.args[0], base, lanes)
        scf.YieldOp(*carried)


def _group_loads(
    original: Block, along: list[memref.LoadOp | memref.StoreOp], first: SSAValue, group: int
) -> tuple[SSAValue, list[dict[SSAValue, SSAValue]]]:
    """Group `group`'s first column, and for each of its four elements the values of
    the original body's column and of its loads along the columns."""
    iv = original.args[0]
    base = first if not group else arith.AddiOp(first, implicit_index(group * GROUP)).results[0]
    lanes: list[dict[SSAValue, SSAValue]] = [
        {iv: base if k == 0 else arith.AddiOp(base, implicit_index(k)).results[0]}
        for k in range(QUAD)
    ]
    quad = VectorType(f32, [QUAD])
    for op in along:
        if isinstance(op, memref.LoadOp):
            load = vector.LoadOp(op.memref, [base if i is iv else i for i in op.indices], quad)
            load.attributes["alignment"] = IntegerAttr(16, i64)
            for k, mapping in enumerate(lanes):
                mapping[op.res] = vector.ExtractOp(load.results[0], [k], f32).results[0]
    return base, lanes


def _vector_store(
    store: memref.StoreOp, iv: SSAValue, base: SSAValue, lanes: list[dict[SSAValue, SSAValue]]
) -> None:
    """The four elements' values of `store` as one aligned vector store at `base`."""
    quad = VectorType(f32, [QUAD])
    values = [mapping.get(store.value, store.value) for mapping in lanes]
    packed = vector.BroadcastOp(values[0], quad).results[0]
    for k in range(1, QUAD):
        packed = vector.InsertOp(values[k], packed, [k], quad).results[0]
    new = vector.StoreOp(packed, store.memref, [base if i is iv else i for i in store.indices])
    new.attributes["alignment"] = IntegerAttr(16, i64)

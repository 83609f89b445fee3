"""
Scans shared by a warp: the rows of an `ml.cumsum` (its running totals carried in an
`scf.for`'s `iter_args`, `mlc.lowering.gpu.loop_nests.scan_loops`) that
`convert-parallel-loops-to-gpu` maps to a warp a row instead of a thread a row.

A loop body qualifies when it is setup ops, one `scf.for` of straight-line ops whose
`iter_args` each accumulate with `addf` or `addi` a value that depends on no carried
value (the running total may also be stored, as an exclusive scan stores it, and so may
its next value), then loads, stores and arithmetic that use the row's totals.

The warp walks the row in passes of `32 * chunk` elements, lane `l` taking the `chunk`
contiguous ones from `l * chunk` (a chunk of 1 for a row of at most 32 static elements,
else `ceil(n / 32)` up to `CHUNK_LIMIT`):

    carry = the loop's own start (a fill's 0)
    for each pass:
      partial = the sum of the lane's chunk (the loop without its stores)
      inclusive = a Kogge-Stone scan of `partial` over the lanes: five steps of
                  `shfl.sync.up` by 1, 2, 4, 8, 16, each lane at or past the distance
                  adding what it receives
      the loop itself over the lane's chunk, from carry + the lanes below's total
                  (`inclusive` of the lane below, by one more `shfl.sync.up`)
      carry += inclusive of lane 31 (`shfl.sync.idx`)

so every lane ends with the row's totals, and lane 0 alone stores them. A 1-D scan of
2048 elements is 8 passes of 5 + 2 shuffles, not 2048 dependent adds on one thread.

A scan along an axis other than the last (the loop's index in an access's other
indices) keeps a thread a row when there are many rows or their count is unknown:
neighbouring threads then read neighbouring elements, while a warp's lanes would each
read another row of memory. Only a few rows (at most `FEW_ROWS`, static) leave the GPU
so idle that a warp a row pays anyway (a cumsum down 3 columns).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.gpu_architectures import WARP
from mlc.lowering.gpu.loop_mapping.shuffles import i32_constant, shuffle, shuffles
from mlc.lowering.gpu.loop_mapping.vector_lanes import is_pure_scalar
from mlc.lowering.gpu.loop_mapping.warp_reduction import (
    lanes_may_sum,
    ops_after,
    static_trips,
    stored_by_lane_zero,
)
from mlc.lowering.gpu.loop_mapping.warp_vectors import in_place
from mlc.lowering.support.locations import located_builder
from mlc.lowering.support.loop_builder import constant_index, implicit_index

# The most elements a lane scans serially a pass: more passes cost 7 shuffles each;
# longer chunks, more of each lane's loads in flight at once and less coalesced.
CHUNK_LIMIT = 8

SCANS = (arith.AddfOp, arith.AddiOp)

# Rows (static) up to which a strided scan still takes a warp a row: 4096 threads
# leave most of a GPU idle (an H100 holds 132 x 2048), 4096 warps do not.
FEW_ROWS = 4096


@dataclass(frozen=True)
class WarpScan:
    """A row's scan loop a warp can share, and each of its `iter_args`' combiner."""

    loop: scf.ForOp
    kinds: tuple[type[arith.AddfOp | arith.AddiOp], ...]


def warp_scan(op: scf.ParallelOp) -> WarpScan | None:
    """The row scan in `op`'s body that a warp can share (module docstring), or None."""
    ops = list(op.body.block.ops)[:-1]  # without scf.reduce
    loops = [inner for inner in ops if isinstance(inner, scf.ForOp) and inner.iter_args]
    if len(loops) != 1 or any(inner.regions for inner in loops[0].body.block.ops):
        return None
    loop = loops[0]
    position = ops.index(loop)
    if any(inner.regions or isinstance(inner, memref.StoreOp) for inner in ops[:position]):
        return None
    kinds = _scans(loop)
    if kinds is None or not _after(ops[position + 1 :], loop):
        return None
    if _strided(loop) and not _few_rows(op):
        return None  # a thread a row reads memory coalesced (module docstring)
    return WarpScan(loop, kinds)


def _strided(loop: scf.ForOp) -> bool:
    """Whether an access of `loop`'s body moves along another index than its last
    as the loop runs."""
    block = loop.body.block
    moving = {block.args[0]}
    for op in block.ops:
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            if any(index in moving for index in list(op.indices)[:-1]):
                return True
        elif any(v in moving for v in op.operands):
            moving.update(op.results)
    return False


def _few_rows(op: scf.ParallelOp) -> bool:
    """Whether `op` has at most `FEW_ROWS` iterations, all its bounds static."""
    rows = 1
    for lower, upper, step in zip(op.lowerBound, op.upperBound, op.step, strict=True):
        bounds = [constant_index(v) for v in (lower, upper, step)]
        if any(b is None for b in bounds):
            return False
        first, last, stride = bounds
        assert first is not None and last is not None and stride is not None
        rows *= max(0, -(-(last - first) // stride)) if stride > 0 else 0
    return rows <= FEW_ROWS


def _scans(loop: scf.ForOp) -> tuple[type[arith.AddfOp | arith.AddiOp], ...] | None:
    """Each `iter_arg`'s add, when every one is a scan the lanes can split."""
    block = loop.body.block
    yielded = block.last_op
    assert isinstance(yielded, scf.YieldOp)
    args, values = list(block.args[1:]), list(yielded.operands)
    if not all(shuffles(arg.type) for arg in args):
        return None
    if not all(lanes_may_sum(arg.type) for arg in args):
        return None
    adds: dict[Operation, SSAValue] = {}  # each add and the running total it takes
    for arg, value in zip(args, values, strict=True):
        owner = value.owner
        if not isinstance(owner, SCANS) or owner.parent_block() is not block:
            return None
        if list(owner.operands).count(arg) != 1:
            return None
        adds[owner] = arg
    carried = set(args) | set(values)
    body = list(block.ops)[:-1]
    if not all(_splittable(inner, body, carried, adds.get(inner)) for inner in body):
        return None
    return tuple(type(add) for add in adds)  # pyright: ignore[reportReturnType]


def _splittable(
    op: Operation, body: Sequence[Operation], carried: set[SSAValue], total: SSAValue | None
) -> bool:
    """Whether `op` of a scan loop's `body` lets lanes scan chunks of it: a store (of a
    running total, maybe, never at one), or an op that reads no running total but
    `total` (an add's own), loads none of what another iteration stores."""
    if isinstance(op, memref.StoreOp):
        return not any(v in carried for v in (op.memref, *op.indices))
    if any(v in carried and v is not total for v in op.operands):
        return False  # an element's value must not depend on the running totals
    if isinstance(op, memref.LoadOp):
        written = any(isinstance(o, memref.StoreOp) and o.memref is op.memref for o in body)
        return not written or in_place(body, op.memref)
    return isinstance(op, memref.DimOp) or is_pure_scalar(op)


def _after(after: Sequence[Operation], loop: scf.ForOp) -> bool:
    """Whether what follows the scan loop is straight-line: arithmetic, loads of buffers
    the scan does not write (no lane may read another's stores) and stores."""
    written = {o.memref for o in loop.body.block.ops if isinstance(o, memref.StoreOp)}
    for inner in after:
        if isinstance(inner, memref.LoadOp):
            if inner.memref in written:
                return False
        elif not (isinstance(inner, memref.StoreOp | memref.DimOp) or is_pure_scalar(inner)):
            return False
    return True


def _identity(element: Attribute) -> SSAValue:
    if isinstance(element, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, element)).result
    return arith.ConstantOp(IntegerAttr(0, element)).result  # pyright: ignore[reportArgumentType]


def scan_with_warp(scan: WarpScan, lane: SSAValue, location: object) -> None:
    """Rewrite the row's scan loop into the warp's passes (module docstring); lane 0
    stores what follows it."""

    def builder(point: InsertPoint) -> Builder:
        return located_builder(point, location)

    loop = scan.loop
    after, uses = ops_after(loop)
    types = [value.type for value in loop.iter_args]
    with ImplicitBuilder(builder(InsertPoint.before(loop))):
        is_first = arith.CmpiOp(lane, implicit_index(0), "eq").result
        lane_span = arith.MuliOp(_chunk(loop), loop.step).result
        span = arith.MuliOp(lane_span, implicit_index(WARP)).result
        body = Block(arg_types=[IndexType(), *types])
        passes = scf.ForOp(loop.lb, loop.ub, span, loop.iter_args, Region(body))
    carry = list(body.args[1:])
    with ImplicitBuilder(builder(InsertPoint.at_end(body))):
        start = arith.AddiOp(body.args[0], arith.MuliOp(lane, lane_span)).result
        end = arith.MinSIOp(arith.AddiOp(start, lane_span).result, loop.ub).result
        identities = [_identity(t) for t in types]
    partial = _partial_sums(loop, start, end, identities, body)
    with ImplicitBuilder(builder(InsertPoint.at_end(body))):
        inclusive = _kogge_stone(partial, lane, scan.kinds)
        prefix: list[SSAValue] = []
        for kind, total, below, zero in zip(scan.kinds, carry, inclusive, identities):
            lower = arith.SelectOp(is_first, zero, shuffle(below, "up", i32_constant(1))).result
            prefix.append(kind(total, lower).result)
    loop.detach()
    Rewriter.insert_op(loop, InsertPoint.at_end(body))
    loop.operands = [start, end, loop.step, *prefix]
    with ImplicitBuilder(builder(InsertPoint.at_end(body))):
        last = i32_constant(WARP - 1)
        totals = [
            kind(total, shuffle(value, "idx", last)).result
            for kind, total, value in zip(scan.kinds, carry, inclusive)
        ]
        scf.YieldOp(*totals)
    for user, index in uses:
        user.operands[index] = passes.results[list(loop.results).index(user.operands[index])]
    stored_by_lane_zero(after, is_first, location)


def _chunk(loop: scf.ForOp) -> SSAValue:
    """The elements a lane scans a pass: 1 for a row of at most 32 static elements, else
    `ceil(trips / 32)` clamped to [1, CHUNK_LIMIT] (under the caller's builder)."""
    trips = static_trips(loop)
    if trips is not None:
        return implicit_index(min(max(1, -(-trips // WARP)), CHUNK_LIMIT))
    span = arith.SubiOp(arith.MaxSIOp(loop.ub, loop.lb).result, loop.lb).result
    step_less = arith.SubiOp(loop.step, implicit_index(1)).result
    count = arith.DivSIOp(arith.AddiOp(span, step_less).result, loop.step).result
    per_lane = arith.DivSIOp(
        arith.AddiOp(count, implicit_index(WARP - 1)).result, implicit_index(WARP)
    ).result
    clamped = arith.MinSIOp(per_lane, implicit_index(CHUNK_LIMIT)).result
    return arith.MaxSIOp(clamped, implicit_index(1)).result


def _partial_sums(
    loop: scf.ForOp,
    start: SSAValue,
    end: SSAValue,
    identities: Sequence[SSAValue],
    block: Block,
) -> list[SSAValue]:
    """The lane's chunk summed: a copy of `loop` over it at the end of `block`, from the
    identities, without its stores."""
    copy = loop.clone()
    copy.operands = [start, end, loop.step, *identities]
    for inner in list(copy.body.block.ops):
        if isinstance(inner, memref.StoreOp):
            Rewriter.erase_op(inner)
    Rewriter.insert_op(copy, InsertPoint.at_end(block))
    return list(copy.results)


def _kogge_stone(
    values: Sequence[SSAValue], lane: SSAValue, kinds: Sequence[type[Operation]]
) -> list[SSAValue]:
    """Each lane's inclusive scan of `values` over the warp's lanes (under the caller's
    builder): at distance 1, 2, 4, 8, 16 a lane adds the value of the lane that far below."""
    scanned = list(values)
    distance = 1
    while distance < WARP:
        reaches = arith.CmpiOp(lane, implicit_index(distance), "uge").result
        offset = i32_constant(distance)
        for n, kind in enumerate(kinds):
            added = kind(scanned[n], shuffle(scanned[n], "up", offset)).results[0]  # pyright: ignore[reportCallIssue]
            scanned[n] = arith.SelectOp(reaches, added, scanned[n]).result
        distance *= 2
    return scanned

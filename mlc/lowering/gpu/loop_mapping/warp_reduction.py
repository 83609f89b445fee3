"""
Row reductions shared by a warp: what `convert-parallel-loops-to-gpu` maps to a warp per
iteration, and how the warp's lanes combine their partial results.

A loop body qualifies when it is setup ops, one `scf.for` whose `iter_args` are all
reductions the lanes can split, then what uses the row's results: straight-line ops,
stores, and loops over the row's columns (`fuse-row-epilogues` puts a reduction's
consumers there) that do not read what the row stores. A reduction is either one value
that accumulates with `addf` (f32, f64), `maximumf` or `minimumf` (a float of 16 to 64
bits), or
`addi`, `maxsi`, `minsi`, `maxui` or `minui` (an integer of 8 to 64 bits), as its only
use, the online softmax pair (max, sum, f32) that
`mlc.lowering.support.online_softmax.step` carries, or a select by key (an index
check's farthest index: `keyed_select`), whose lanes all start from the loop's start.

Lane `l` runs iterations `l, l + 32, ...` from the reduction's identity (lane 0 from the
loop's own start), four of them a step with their loads issued first; then five
butterfly steps of `shfl.sync.bfly` (`shuffles`: 64-bit values as two halves) leave
every lane with the row's totals; the column loops take every 32nd column a lane,
and lane 0 stores the row's own results. Reading every 32nd element per lane makes a
warp's loads of a row coalesce, and splitting a row's sum 32 ways keeps its
rounding error smaller. A row of at most 16 static elements takes the next
power of two of lanes instead, and a row with many accumulators a quarter of a warp
(`row_width`), so a warp holds several rows and the butterfly takes fewer steps.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType, f32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.gpu_architectures import WARP
from mlc.lowering.gpu.loop_mapping.keyed_select import keyed_select
from mlc.lowering.gpu.loop_mapping.shuffles import CLAMPS, i32_constant, shuffle, shuffles
from mlc.lowering.gpu.loop_mapping.vector_lanes import is_pure_scalar
from mlc.lowering.gpu.loop_mapping.warp_vectors import in_place, vector_prefix
from mlc.lowering.support import online_softmax
from mlc.lowering.support.locations import located_builder
from mlc.lowering.support.loop_builder import constant_index, implicit_index

# One-value combiners a warp can share a reduction with, and their identities: by a
# float's value, or by an integer's width.
FLOAT_COMBINERS: dict[type[Operation], float] = {
    arith.AddfOp: 0.0,
    arith.MaximumfOp: -math.inf,
    arith.MinimumfOp: math.inf,
}
INTEGER_COMBINERS: dict[type[Operation], Callable[[int], int]] = {
    arith.AddiOp: lambda width: 0,
    arith.MaxSIOp: lambda width: -(1 << (width - 1)),
    arith.MinSIOp: lambda width: (1 << (width - 1)) - 1,
    arith.MaxUIOp: lambda width: 0,
    arith.MinUIOp: lambda width: -1,  # all ones
}


def identity(kind: type[Operation], element: Attribute) -> Attribute | None:
    """The value `kind` leaves any `element` value unchanged with, or None when the warp
    does not share `kind` on `element`."""
    if not shuffles(element):
        return None
    if isinstance(element, AnyFloat) and kind in FLOAT_COMBINERS:
        if kind is arith.AddfOp and not lanes_may_sum(element):
            return None
        return FloatAttr(FLOAT_COMBINERS[kind], element)
    if isinstance(element, IntegerType) and kind in INTEGER_COMBINERS:
        width = element.width.data
        return IntegerAttr(INTEGER_COMBINERS[kind](width), element) if width >= 8 else None
    return None


def lanes_may_sum(element: Attribute) -> bool:
    """Whether lanes may add partial sums of `element` (the warp reduction's and the warp
    scan's rule): not 16-bit floats, whose partial sums would be rounded at every step;
    a thread's running sum of them is widened to f32 when lowered."""
    return not (isinstance(element, AnyFloat) and element.bitwidth < 32)


Merge = Callable[[Sequence[SSAValue], Sequence[SSAValue]], list[SSAValue]]


@dataclass(frozen=True)
class Reduction:
    """Consecutive `iter_args` of a loop that reduce together, and how two lanes' merge."""

    first: int
    identities: tuple[Attribute | None, ...]  # None: each lane from the loop's own start
    merge: Merge


@dataclass(frozen=True)
class WarpReduction:
    """A loop a warp can share, its reductions in `iter_args` order, and the lanes a
    row takes (32, or a power of two under 32 for a short row: several rows a warp)."""

    loop: scf.ForOp
    reductions: tuple[Reduction, ...]
    width: int = WARP


# A row carrying this many accumulators (a narrow contraction's outputs: a row of 10
# columns) takes a quarter of a warp: each value's 5 butterfly steps become 3, for four
# rows at once. The MLP's head on an H100: 4.2 us against 6.0 with a warp a row (4.5
# with 16 lanes, 5.0 with 4).
MANY_ACCUMULATORS = 8
ACCUMULATOR_LANES = 8


def row_width(loop: scf.ForOp) -> int:
    """
    Lanes for a row of `loop`'s trip count: a warp (a quarter of one for a row with many
    accumulators), or for a static count of at most 16 the next power of two, so that
    a warp takes several short rows (a classifier's 10 columns: 16 lanes, two rows a
    warp) instead of idling most of its lanes, and the butterfly takes fewer steps.
    """
    trips = static_trips(loop)
    if trips is None or trips > WARP // 2:
        return ACCUMULATOR_LANES if len(loop.iter_args) >= MANY_ACCUMULATORS else WARP
    return 1 << max(0, (trips - 1).bit_length())


def ops_after(loop: scf.ForOp) -> tuple[list[Operation], list[tuple[Operation, int]]]:
    """The ops after the row's `loop` in the loop body around it (to its yield), and
    every use of `loop`'s results (op, operand index), before anything moves."""
    after: list[Operation] = []
    following = loop.next_op
    while following is not None and not isinstance(following, scf.YieldOp):
        after.append(following)
        following = following.next_op
    uses = [(use.operation, use.index) for result in loop.results for use in result.uses]
    return after, uses


def stored_by_lane_zero(after: list[Operation], is_first: SSAValue, location: object) -> None:
    """The row's stores among `after` moved under `scf.if is_first`: every lane holds the
    row's results, lane 0 alone writes them."""
    stores = [store for store in after if isinstance(store, memref.StoreOp)]
    if not stores:
        return
    then = Block()
    with ImplicitBuilder(located_builder(InsertPoint.after(after[-1]), location)):
        scf.IfOp(is_first, [], Region(then))
    for store in stores:
        store.detach()
        then.add_op(store)
    Rewriter.insert_op(scf.YieldOp(), InsertPoint.at_end(then))


def static_trips(loop: scf.ForOp) -> int | None:
    """`loop`'s trip count when its bounds and step are constants."""
    lb, ub, step = (constant_index(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))


def _combiner(kind: type[Operation]) -> Merge:
    return lambda mine, theirs: [kind(mine[0], theirs[0]).results[0]]  # pyright: ignore[reportCallIssue]


def _merge_online(mine: Sequence[SSAValue], theirs: Sequence[SSAValue]) -> list[SSAValue]:
    return online_softmax.merge(mine[0], mine[1], theirs[0], theirs[1])


def _accumulates(arg: SSAValue, value: SSAValue) -> bool:
    """Whether `value` is `combine(arg, x)` with `arg` used there only and `value` only
    yielded (a reduction; a scan stores them too, `warp_scan`)."""
    owner = value.owner
    if identity(type(owner), arg.type) is None:
        return False
    if not arg.has_one_use() or not value.has_one_use():
        return False
    return arg in owner.operands and owner.operands[0] is not owner.operands[1]  # type: ignore


def _reductions(loop: scf.ForOp) -> tuple[Reduction, ...] | None:
    """How each of `loop`'s `iter_args` reduces, or None if one cannot be split."""
    yielded = loop.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    args, values = list(loop.body.block.args[1:]), list(yielded.operands)
    found: list[Reduction] = []
    position = 0
    while position < len(args):
        pair = slice(position, position + 2)
        pair_f32 = position + 1 < len(args) and all(arg.type == f32 for arg in args[pair])
        if pair_f32 and online_softmax.is_step(*args[pair], *values[pair]):
            identities = tuple(FloatAttr(value, f32) for value in online_softmax.IDENTITY)
            found.append(Reduction(position, identities, _merge_online))
            position += 2
        elif (chosen := keyed_select(args[position], values[position])) is not None:
            found.append(Reduction(position, (None,), chosen.merge))
            position += 1
        elif _accumulates(args[position], values[position]):
            kind = type(values[position].owner)
            start = identity(kind, args[position].type)
            assert start is not None
            found.append(Reduction(position, (start,), _combiner(kind)))
            position += 1
        else:
            return None
    return tuple(found)


def _simple(loop: scf.ForOp) -> bool:
    """A loop body of straight-line ops: no nested loops or branches."""
    return not any(inner.regions for inner in loop.body.block.ops)


def _plain(op: Operation) -> bool:
    """Arithmetic, or a load or store: what every lane may run after the row's loop."""
    return isinstance(op, memref.LoadOp | memref.StoreOp | memref.DimOp) or is_pure_scalar(op)


def warp_reduction(op: scf.ParallelOp) -> WarpReduction | None:
    """The row reduction in `op`'s body that a warp can share (module docstring), or None."""
    ops = list(op.body.block.ops)[:-1]  # without scf.reduce
    loops = [inner for inner in ops if isinstance(inner, scf.ForOp) and inner.iter_args]
    if len(loops) != 1 or not _simple(loops[0]):
        return None
    loop = loops[0]
    position = ops.index(loop)
    if any(inner.regions or isinstance(inner, memref.StoreOp) for inner in ops[:position]):
        return None
    if not _uses_after(ops[position + 1 :]):
        return None
    reductions = _reductions(loop)
    return None if reductions is None else WarpReduction(loop, reductions, row_width(loop))


def _uses_after(after: Sequence[Operation]) -> bool:
    """Whether what follows a row's loop is what every lane may run (module docstring),
    with the row's results stored somewhere."""
    if not any(isinstance(o, memref.StoreOp | scf.ForOp) for o in after):
        return False  # the row's results go nowhere
    stored = {o.memref for o in after if isinstance(o, memref.StoreOp)}
    for inner in after:
        if isinstance(inner, scf.ForOp):  # an epilogue over the row's columns
            body = list(inner.body.block.ops)[:-1]
            if inner.iter_args or not all(_plain(o) for o in body):
                return False
            if any(isinstance(o, memref.LoadOp) and o.memref in stored for o in body):
                return False  # lane 0 stores only once the row is done
        elif not _plain(inner) or (isinstance(inner, memref.LoadOp) and inner.memref in stored):
            return False
    return True


def share_with_warp(
    reduction: WarpReduction, lane: SSAValue, location: object, active: SSAValue | None = None
) -> None:
    """
    Lanes take every 32nd (every `width`th) iteration of the reduction and of the column
    loops after it from their own; a butterfly gives every lane of the row its totals;
    lane 0 stores. `active`: the lanes that shuffle, where not all the warp's do.
    """

    def builder(point: InsertPoint) -> Builder:
        return located_builder(point, location)

    loop = reduction.loop
    after, uses = ops_after(loop)
    with ImplicitBuilder(builder(InsertPoint.before(loop))):
        is_first = arith.CmpiOp(lane, implicit_index(0), "eq").result
        _lanes(loop, lane, _lane_starts(reduction, is_first), reduction.width)
    with ImplicitBuilder(builder(InsertPoint.after(loop))):
        totals = _butterfly(reduction, active)
    for user, index in uses:
        user.operands[index] = totals[list(loop.results).index(user.operands[index])]
    for epilogue in after:
        if isinstance(epilogue, scf.ForOp):
            with ImplicitBuilder(builder(InsertPoint.before(epilogue))):
                _lanes(epilogue, lane, [], reduction.width)
    stored_by_lane_zero(after, is_first, location)


def _lane_starts(reduction: WarpReduction, is_first: SSAValue) -> list[SSAValue]:
    """Each lane's `iter_args`: lane 0 the loop's own, the others the identities (all
    lanes the loop's own where that is the identity: a fill's -inf or 0)."""
    inits = list(reduction.loop.iter_args)
    for part in reduction.reductions:
        for offset, value in enumerate(part.identities):
            position = part.first + offset
            if value is None or _is_constant(inits[position], value):
                continue
            start = arith.ConstantOp(value).result
            inits[position] = arith.SelectOp(is_first, inits[position], start).result
    return inits


def _is_constant(value: SSAValue, attr: Attribute) -> bool:
    """Whether `value` is an `arith.constant` of `attr` (a reduction's identity)."""
    owner = value.owner
    return isinstance(owner, arith.ConstantOp) and owner.value == attr


def _butterfly(reduction: WarpReduction, active: SSAValue | None) -> list[SSAValue]:
    """The row's totals in every lane of it, after log2(width) shuffle-and-merge steps
    (a distance under the width stays within the row's lanes)."""
    totals: list[SSAValue] = list(reduction.loop.results)
    steps = reduction.width.bit_length() - 1
    distances = [i32_constant(1 << step) for step in reversed(range(steps))]
    lanes, clamp = active or i32_constant(-1), i32_constant(CLAMPS["bfly"])
    for part in reduction.reductions:
        width = len(part.identities)
        values = totals[part.first : part.first + width]
        for distance in distances:
            theirs = [shuffle(value, "bfly", distance, lanes, clamp) for value in values]
            values = part.merge(values, theirs)
        totals[part.first : part.first + width] = values
    return totals


UNROLL = 4  # lane iterations a step of the unrolled loop: loads in flight a lane


def _lanes(loop: scf.ForOp, lane: SSAValue, inits: Sequence[SSAValue], width: int) -> None:
    """A row loop split among a row's lanes: where a warp takes the row, 16-byte groups
    of four elements first (`warp_vectors`), then every `width`th element a lane."""
    if width == WARP:
        inits = vector_prefix(loop, lane, inits)
    _stride(loop, lane, inits, width)


def _stride(loop: scf.ForOp, lane: SSAValue, inits: Sequence[SSAValue], width: int) -> None:
    """
    `loop` from iteration `lane`, every `width`th (the lanes a row has), `UNROLL` of a
    lane's iterations a step, then the rest one at a time. A step issues the loads of all
    its iterations first (`_early`), so they are in flight together: a lane waiting on
    one load at a time leaves a long row bound by latency. Built under the caller's
    implicit builder, before `loop`, which becomes the rest.
    """
    start = arith.AddiOp(loop.lb, arith.MuliOp(lane, loop.step)).result
    step = arith.MuliOp(loop.step, implicit_index(width)).result
    trips = static_trips(loop)
    if trips is not None and trips <= width:
        loop.operands = [start, loop.ub, step, *inits]  # a lane's one iteration at most
        return
    span = arith.SubiOp(arith.MaxSIOp(loop.ub, start), start).result
    trips = arith.DivSIOp(arith.AddiOp(span, arith.SubiOp(step, implicit_index(1))), step).result
    unrolled = arith.MuliOp(
        arith.DivSIOp(trips, implicit_index(UNROLL)), implicit_index(UNROLL)
    ).result
    main_end = arith.AddiOp(start, arith.MuliOp(unrolled, step)).result
    wide = arith.MuliOp(step, implicit_index(UNROLL)).result
    body = Block(arg_types=[IndexType(), *(value.type for value in inits)])
    original = loop.body.block
    yielded = original.last_op
    assert isinstance(yielded, scf.YieldOp)
    ops = list(original.ops)[:-1]
    early = _early(original)
    with ImplicitBuilder(body):
        mappers: list[dict[SSAValue, SSAValue]] = []
        for k in range(UNROLL):
            at = body.args[0]
            if k:
                at = arith.AddiOp(at, arith.MuliOp(step, implicit_index(k))).result
            mappers.append({original.args[0]: at})
            for op in ops:
                if op in early:
                    op.clone(mappers[k])  # inserted by the implicit builder
        carried: list[SSAValue] = list(body.args[1:])
        for mapper in mappers:
            mapper.update(zip(original.args[1:], carried, strict=True))
            for op in ops:
                if op not in early:
                    op.clone(mapper)
            carried = [mapper.get(value, value) for value in yielded.operands]
        scf.YieldOp(*carried)
    main = scf.ForOp(start, main_end, wide, inits, body)
    loop.operands = [main_end, loop.ub, step, *main.results]


def _early(block: Block) -> set[Operation]:
    """
    The ops of a loop body that may run for every unrolled iteration before the rest:
    loads and the index arithmetic they need, when they depend on nothing carried and
    no store of the body could write what they read (none writes their buffer, or the
    body updates it in place: `in_place`).
    """
    ops = list(block.ops)
    written = {op.memref for op in ops if isinstance(op, memref.StoreOp)}
    inside = set(ops)
    carried = set(block.args[1:])
    early: set[Operation] = set()
    for op in ops:
        if op.regions or isinstance(op, memref.StoreOp | scf.YieldOp):
            continue
        if not isinstance(op, memref.LoadOp) and not all(
            isinstance(t, IndexType) for t in op.result_types
        ):
            continue  # only loads and their index arithmetic go early
        if any(v in carried or (v.owner in inside and v.owner not in early) for v in op.operands):
            continue
        if isinstance(op, memref.LoadOp) and op.memref in written and not in_place(ops, op.memref):
            continue
        early.add(op)
    return early

"""
Row reductions shared by a warp: what `convert-parallel-loops-to-gpu` maps to a warp per
iteration, and how the warp's lanes combine their partial results.

A loop body qualifies when it is setup ops, one `scf.for` whose f32 `iter_args` are all
reductions the lanes can split, then only stores. A reduction is either one value that
accumulates with `addf`, `maximumf` or `minimumf` (its only use), or the online softmax
pair (max, sum) that `mlc.lowering.online_softmax.step` carries. Lane `l` runs
iterations `l, l + 32, ...` from the reduction's identity (lane 0 from the loop's own
start), then five butterfly steps of `shfl.sync.bfly` (emitted as the NVVM intrinsic:
xDSL 0.74 has no `gpu.shuffle`) combine the lanes, and lane 0 stores. Reading every
32nd element per lane makes a warp's loads of a row coalesce, and splitting a row's
sum 32 ways keeps its rounding error that much smaller.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f32, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering import online_softmax

WARP = 32

# One-value combiners a warp can share a reduction with, and their identities.
COMBINERS: dict[type[Operation], float] = {
    arith.AddfOp: 0.0,
    arith.MaximumfOp: -math.inf,
    arith.MinimumfOp: math.inf,
}

Merge = Callable[[Sequence[SSAValue], Sequence[SSAValue]], list[SSAValue]]


@dataclass(frozen=True)
class Reduction:
    """Consecutive `iter_args` of a loop that reduce together, and how two lanes' merge."""

    first: int
    identities: tuple[float, ...]
    merge: Merge


@dataclass(frozen=True)
class WarpReduction:
    """A loop a warp can share, and its reductions in `iter_args` order."""

    loop: scf.ForOp
    reductions: tuple[Reduction, ...]


def _combiner(kind: type[Operation]) -> Merge:
    return lambda mine, theirs: [kind(mine[0], theirs[0]).results[0]]  # pyright: ignore[reportCallIssue]


def _merge_online(mine: Sequence[SSAValue], theirs: Sequence[SSAValue]) -> list[SSAValue]:
    return online_softmax.merge(mine[0], mine[1], theirs[0], theirs[1])


def _accumulates(arg: SSAValue, value: SSAValue) -> bool:
    """Whether `value` is `combine(arg, x)` with `arg` used there only (a reduction)."""
    owner = value.owner
    if type(owner) not in COMBINERS or not arg.has_one_use():
        return False
    return arg in owner.operands and owner.operands[0] is not owner.operands[1]  # type: ignore


def _reductions(loop: scf.ForOp) -> tuple[Reduction, ...] | None:
    """How each of `loop`'s `iter_args` reduces, or None if one cannot be split."""
    yielded = loop.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    args, values = list(loop.body.block.args[1:]), list(yielded.operands)
    if any(arg.type != f32 for arg in args):
        return None
    found: list[Reduction] = []
    position = 0
    while position < len(args):
        pair = slice(position, position + 2)
        if position + 1 < len(args) and online_softmax.is_step(*args[pair], *values[pair]):
            found.append(Reduction(position, online_softmax.IDENTITY, _merge_online))
            position += 2
        elif _accumulates(args[position], values[position]):
            kind = type(values[position].owner)
            found.append(Reduction(position, (COMBINERS[kind],), _combiner(kind)))
            position += 1
        else:
            return None
    return tuple(found)


def warp_reduction(op: scf.ParallelOp) -> WarpReduction | None:
    """The row reduction in `op`'s body that a warp can share (module docstring), or None."""
    ops = list(op.body.block.ops)[:-1]  # without scf.reduce
    loops = [inner for inner in ops if isinstance(inner, scf.ForOp)]
    if len(loops) != 1 or not loops[0].iter_args:
        return None
    loop = loops[0]
    position = ops.index(loop)
    if any(isinstance(inner, memref.StoreOp) for inner in ops[:position]):
        return None
    if not ops[position + 1 :] or not all(
        isinstance(inner, memref.StoreOp) for inner in ops[position + 1 :]
    ):
        return None
    if any(isinstance(inner, scf.ForOp | scf.WhileOp | scf.IfOp) for inner in loop.body.walk()):
        return None
    reductions = _reductions(loop)
    return None if reductions is None else WarpReduction(loop, reductions)


def _index(value: int) -> SSAValue:
    return arith.ConstantOp(IntegerAttr.from_index_int_value(value)).result


def _i32(value: int) -> SSAValue:
    return llvm.ConstantOp(IntegerAttr(value, i32), i32).result


def _shuffle(value: SSAValue, distance: SSAValue, every_lane: SSAValue, clamp: SSAValue) -> SSAValue:
    """The value of lane `lane ^ distance`."""
    args = [every_lane, value, distance, clamp]
    return llvm.CallIntrinsicOp("llvm.nvvm.shfl.sync.bfly.f32", args, [f32]).results[0]


def share_with_warp(reduction: WarpReduction, lane: SSAValue, location: object) -> None:
    """Lanes take every 32nd iteration from their own; a butterfly combines the lanes."""

    def located(new: Operation) -> None:
        new.location = location  # pyright: ignore[reportAttributeAccessIssue]

    def builder(point: InsertPoint) -> Builder:
        return Builder(point, operation_insertion_handler=[located])

    loop = reduction.loop
    stores = list(dict.fromkeys(use.operation for result in loop.results for use in result.uses))
    with ImplicitBuilder(builder(InsertPoint.before(loop))):
        first = arith.AddiOp(loop.lb, arith.MuliOp(lane, loop.step)).result
        step = arith.MuliOp(loop.step, _index(WARP)).result
        is_first = arith.CmpiOp(lane, _index(0), "eq").result
        inits = list(loop.iter_args)
        for part in reduction.reductions:
            for offset, identity in enumerate(part.identities):
                start = arith.ConstantOp(FloatAttr(identity, f32)).result
                position = part.first + offset
                inits[position] = arith.SelectOp(is_first, inits[position], start).result
    loop.operands = [first, loop.ub, step, *inits]

    totals: list[SSAValue] = list(loop.results)
    then = Block()
    with ImplicitBuilder(builder(InsertPoint.after(loop))):
        every_lane, clamp = _i32(-1), _i32(WARP - 1)
        distances = [_i32(distance) for distance in (16, 8, 4, 2, 1)]
        for part in reduction.reductions:
            width = len(part.identities)
            values = totals[part.first : part.first + width]
            for distance in distances:
                theirs = [_shuffle(value, distance, every_lane, clamp) for value in values]
                values = part.merge(values, theirs)
            totals[part.first : part.first + width] = values
        scf.IfOp(is_first, [], Region(then))
    for store in stores:
        for position, operand in enumerate(store.operands):
            if operand in loop.results:
                store.operands[position] = totals[list(loop.results).index(operand)]
        store.detach()
        then.add_op(store)
    Rewriter.insert_op(scf.YieldOp(), InsertPoint.at_end(then))

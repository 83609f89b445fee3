"""
fuse-row-epilogues: the loops that consume a row reduction's results join its loop, so
that on the GPU one warp computes a row's statistics and goes on to use them, with no
second kernel and no round trip of the statistics through memory.

Softmax on the GPU is an online max-and-sum over each row, then `exp(x - m) / s` over
the rows and columns; layer norm is two sums over each row, the mean and `rsqrt(var +
eps)` per row, then the normalisation over rows and columns. Each is two or three
`scf.parallel`s, so two or three kernels, and the second reads the statistics the first
stored. When the first loop is a row reduction a warp can share
(`mlc.lowering.gpu.loop_mapping.warp_reduction`), the loops after it that run over the same rows
join it: one with the same dims (the per-row statistics) is appended to its body, one
with a trailing column dim becomes an `scf.for` over the columns inside it, and their
loads of what the row body stored at the same place read the stored value instead:

    scf.parallel (%i) { %m = scf.for ... ; memref.store %m, %max[%i, %c0] }
    scf.parallel (%i, %j) { %v = memref.load %max[%i, %c0] ; ... %v ... }
==>
    scf.parallel (%i) {
      %m = scf.for ... ; memref.store %m, %max[%i, %c0]
      scf.for %j { ... %m ... }
    }

A loop joins only if it consumes the row body's results (it loads something the body
stored), every such load reads a place the body stored in the same row (so the value
can be forwarded), it stores only into buffers freshly allocated and not yet touched,
into the row's own statistics, or in place into a buffer the row body reads only in its
own rows (each element read where it is written), and its body has no loops or branches. Allocations
and constants between the loops move above the first; deallocations stay where they are
(what a later loop frees, it does not use). Statistics that every reader now
gets forwarded are not stored at all: a buffer only written to goes, with its stores.
The result is the same program read sequentially; convert-parallel-loops-to-gpu then
gives the row a warp, whose lanes split the reduction and the column loop alike.

A row body whose results are a few whole columns (a narrow contraction: a classifier
head's ten outputs a row, each stored at a constant column) is read by what follows
column by column: softmax's statistics loop over the columns, then its normalisation
over rows and columns. Such a short static column loop (at most `UNROLLED_COLUMNS`
iterations) that reads what the row stored is unrolled as it joins, so that each load
reads a place the row stored and gets its value; a store the join overwrites with no
read between goes. Head, bias and softmax are then one kernel, every lane of the row
holding all its columns after the butterfly. Unrolled, softmax's online (max, sum) pair
becomes the two-pass form (a max tree, then a sum tree of `exp(x - max)`: no chain of
rescaling steps), and a load the fused body repeats of a buffer it never writes (the
bias) reuses the first, so the statistics and the output share each `exp`.

The row's places and accesses, the unrolling and the forwarding after a join live in
`mlc.lowering.gpu.row_fusion`; this module decides which loops join and joins them.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mlc.lowering.gpu.convert_parallel_loops_to_gpu import is_outermost
from mlc.lowering.gpu.loop_mapping.warp_reduction import warp_reduction
from mlc.lowering.gpu.row_fusion.column_unrolling import unroll_columns
from mlc.lowering.gpu.row_fusion.row_forwarding import drop_if_unread, drop_overwritten, forward
from mlc.lowering.gpu.row_fusion.row_places import Row, row_of, same_index, same_place
from mlc.lowering.support.loop_builder import constant_index

# Ops that may sit between the loops: moved above the first, they change nothing.
_HOISTABLE = (memref.AllocOp, arith.ConstantOp, memref.DimOp)


def _is_unit(loop: scf.ParallelOp, dim: int) -> bool:
    """Whether dim `dim` of `loop` runs once (0 to 1 step 1)."""
    bounds = (loop.lowerBound[dim], loop.upperBound[dim], loop.step[dim])
    return tuple(map(constant_index, bounds)) == (0, 1, 1)


@dataclass(frozen=True)
class _Plan:
    """How a loop's ivs map into the row body: the row's ivs, a unit dim's start, or
    the column loop's iv (None until it exists)."""

    ivs: list[SSAValue | None]
    column: int | None  # the dim that becomes an `scf.for`


def _plan(reduction: scf.ParallelOp, loop: scf.ParallelOp) -> _Plan | None:
    """How `loop`'s dims line up with the reduction's rows, or None if they do not."""
    rows = len(reduction.lowerBound)
    if loop.initVals or len(loop.lowerBound) < rows:
        return None
    for dim in range(rows):
        pairs = zip(
            (reduction.lowerBound[dim], reduction.upperBound[dim], reduction.step[dim]),
            (loop.lowerBound[dim], loop.upperBound[dim], loop.step[dim]),
            strict=True,
        )
        if not all(same_index(a, b) for a, b in pairs):
            return None
    ivs: list[SSAValue | None] = list(reduction.body.block.args)
    column = None
    last = len(loop.lowerBound) - 1
    for dim in range(rows, last + 1):
        if _is_unit(loop, dim):
            ivs.append(loop.lowerBound[dim])
        elif dim == last:
            column = dim
            ivs.append(None)
        else:
            return None
    return _Plan(ivs, column)


def _mapped(value: SSAValue, loop: scf.ParallelOp, plan: _Plan) -> SSAValue | None:
    """`value` (an index in `loop`'s body) as the row body sees it; None: the column."""
    args = list(loop.body.block.args)
    return plan.ivs[args.index(value)] if value in args else value


def _joins(row: Row, loop: scf.ParallelOp, plan: _Plan) -> bool:
    """Whether `loop` may join the row body (module docstring)."""
    body = list(loop.body.block.ops)[:-1]  # without scf.reduce
    consumes = False
    for op in body:
        if op.regions:
            return False
        if isinstance(op, memref.LoadOp) and op.memref in row.written:
            if _stored_value(row, loop, plan, op.indices, op.memref) is None:
                return False  # read at a place the row did not store: no forwarding
            consumes = True
        elif isinstance(op, memref.StoreOp) and not _may_store(row, loop, plan, op):
            return False
    return consumes


def _stored_value(
    row: Row, loop: scf.ParallelOp, plan: _Plan, indices: Sequence[SSAValue], buffer: SSAValue
) -> SSAValue | None:
    """What the row stored where `loop` accesses `buffer[indices]`, if it did."""
    mapped = [_mapped(i, loop, plan) for i in indices]
    if any(i is None for i in mapped):
        return None  # the place moves with the column
    return row.value_at(buffer, mapped)  # pyright: ignore[reportArgumentType]


def _may_store(row: Row, loop: scf.ParallelOp, plan: _Plan, store: memref.StoreOp) -> bool:
    """
    A store into a fresh buffer; a per-row loop's into the row's own statistics at their
    place; or an elementwise update in place of a buffer the row body reads only within
    its own rows (softmax writing over its input), which no other row then sees.
    """
    buffer = store.memref
    if buffer in row.stored:
        stat = _stored_value(row, loop, plan, store.indices, buffer)
        return plan.column is None and stat is not None
    accesses = [op for op in loop.walk() if isinstance(op, memref.LoadOp | memref.StoreOp)]
    own = [op for op in accesses if op.memref is buffer]
    if isinstance(buffer.owner, memref.AllocOp) and buffer not in row.accesses:
        return all(op is store for op in own)  # a fresh output, only written
    if buffer in row.written or not row.in_own_rows(buffer):
        return False
    rows = len(row.ivs)
    mapped = [_mapped(i, loop, plan) for i in store.indices[:rows]]
    if any(i is None for i in mapped) or not same_place(mapped, row.ivs):  # pyright: ignore[reportArgumentType]
        return False
    # read where it is written: each lane updates only its own elements
    return all(op is store or same_place(op.indices, store.indices) for op in own)


def _join(
    rewriter: PatternRewriter,
    row: Row,
    reduction: scf.ParallelOp,
    loop: scf.ParallelOp,
    plan: _Plan,
) -> None:
    """Move `loop`'s body into the reduction's, its column dim as an `scf.for`."""
    end = InsertPoint.before(reduction.body.block.last_op)  # pyright: ignore[reportArgumentType]
    body = loop.body.block
    terminator = body.last_op
    assert isinstance(terminator, scf.ReduceOp)
    rewriter.erase(terminator)
    stores = [op for op in body.ops if isinstance(op, memref.StoreOp)]
    accesses = [op for op in body.ops if isinstance(op, memref.LoadOp | memref.StoreOp)]
    if plan.column is None:
        rewriter.inline_block(body, end, plan.ivs)  # pyright: ignore[reportArgumentType]
    else:
        dim = plan.column
        inner = Block(arg_types=[IndexType()])
        ivs = [inner.args[0] if v is None else v for v in plan.ivs]
        rewriter.inline_block(body, InsertPoint.at_end(inner), ivs)
        inner.add_op(scf.YieldOp())
        columns = scf.ForOp(loop.lowerBound[dim], loop.upperBound[dim], loop.step[dim], [], inner)
        rewriter.insert(columns, end)
    rewriter.erase(loop)
    for access in accesses:
        row.access(access)
    for store in stores:
        if plan.column is None:  # per-row results, which later loops may read
            row.store(store.memref, list(store.indices), store.value)


@dataclass(frozen=True)
class FuseRowEpilogues(RewritePattern):
    """A warp-shareable row reduction takes in the loops after it that consume it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter) -> None:
        if not is_outermost(op) or warp_reduction(op) is None:
            return
        row = row_of(op)
        joined = False
        between: list[Operation] = []
        following = op.next_op
        while isinstance(following, (*_HOISTABLE, memref.DeallocOp, scf.ParallelOp)):
            after = following.next_op
            if isinstance(following, _HOISTABLE):
                between.append(following)
            elif isinstance(following, memref.DeallocOp):
                pass  # stays: a loop after it does not touch what it frees
            elif (joining := _joining(rewriter, row, op, following)) is not None:
                following, plan = joining
                for moved in between:  # above the fused loop, which uses them
                    moved.detach()
                    rewriter.insert(moved, InsertPoint.before(op))
                between = []
                _join(rewriter, row, op, following, plan)
                joined = True
            else:
                break
            following = after
        if joined:
            forward(rewriter, op.body.block)
            drop_overwritten(rewriter, op.body.block)
            for buffer in row.written:
                drop_if_unread(rewriter, buffer)


def _joining(
    rewriter: PatternRewriter, row: Row, reduction: scf.ParallelOp, loop: scf.ParallelOp
) -> tuple[scf.ParallelOp, _Plan] | None:
    """`loop`, or in its place its form with short column loops unrolled, and how it
    joins the row body; None if neither joins."""
    if (plan := _plan(reduction, loop)) is not None and _joins(row, loop, plan):
        return loop, plan
    unrolled = unroll_columns(row, len(reduction.lowerBound), loop)
    if unrolled is None:
        return None
    if (plan := _plan(reduction, unrolled)) is None or not _joins(row, unrolled, plan):
        unrolled.erase()
        return None
    rewriter.insert(unrolled, InsertPoint.before(loop))
    rewriter.erase(loop)
    return unrolled, plan


@dataclass(frozen=True)
class FuseRowEpiloguesPass(ModulePass):
    """Fuse row reductions with the loops that consume them (see the module docstring)."""

    name = "fuse-row-epilogues"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseRowEpilogues(), apply_recursively=False).rewrite_module(op)

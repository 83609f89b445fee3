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
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.gpu.convert_parallel_loops_to_gpu import is_outermost
from mlc.lowering.gpu.loop_mapping.warp_reduction import warp_reduction
from mlc.lowering.support import online_softmax
from mlc.lowering.support.loop_builder import constant_index

# Ops that may sit between the loops: moved above the first, they change nothing.
_HOISTABLE = (memref.AllocOp, arith.ConstantOp, memref.DimOp)
# Column loops of at most this many static iterations that read a row's stored columns
# are unrolled as they join (module docstring): a narrow contraction's columns.
UNROLLED_COLUMNS = 16


def same_index(a: SSAValue, b: SSAValue) -> bool:
    """Whether two index values are the same: one value, or equal constants."""
    if a is b:
        return True
    ca, cb = constant_index(a), constant_index(b)
    return ca is not None and ca == cb


def _is_unit(loop: scf.ParallelOp, dim: int) -> bool:
    """Whether dim `dim` of `loop` runs once (0 to 1 step 1)."""
    bounds = (loop.lowerBound[dim], loop.upperBound[dim], loop.step[dim])
    return tuple(map(constant_index, bounds)) == (0, 1, 1)


@dataclass
class _Row:
    """What the fused row body has done so far: the value it last stored at each place
    of its top level (for forwarding), and every access it makes (for hazards)."""

    ivs: Sequence[SSAValue]
    stored: dict[SSAValue, list[tuple[tuple[SSAValue, ...], SSAValue]]] = field(
        default_factory=dict
    )
    # every load and store so far, at any depth: buffer -> the indices of each access
    accesses: dict[SSAValue, list[tuple[SSAValue, ...]]] = field(default_factory=dict)
    written: set[SSAValue] = field(default_factory=set)  # stored, at any depth

    def access(self, op: memref.LoadOp | memref.StoreOp) -> None:
        self.accesses.setdefault(op.memref, []).append(tuple(op.indices))
        if isinstance(op, memref.StoreOp):
            self.written.add(op.memref)

    def in_own_rows(self, buffer: SSAValue) -> bool:
        """Whether every access to `buffer` so far is in the row's own slice of it."""
        rows = len(self.ivs)
        return all(
            _same_place(indices[:rows], self.ivs) for indices in self.accesses.get(buffer, [])
        )

    def store(self, buffer: SSAValue, indices: Sequence[SSAValue], value: SSAValue) -> None:
        places = [p for p in self.stored.get(buffer, []) if not _same_place(p[0], indices)]
        self.stored[buffer] = [*places, (tuple(indices), value)]

    def value_at(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue | None:
        for place, value in self.stored.get(buffer, []):
            if _same_place(place, indices):
                return value
        return None


def _same_place(a: Sequence[SSAValue], b: Sequence[SSAValue]) -> bool:
    return len(a) == len(b) and all(same_index(x, y) for x, y in zip(a, b, strict=True))


def _row_of(reduction: scf.ParallelOp) -> _Row:
    """The places the reduction's body stores at its top level, and what it touches."""
    row = _Row(list(reduction.body.block.args))
    for op in reduction.body.block.ops:
        if isinstance(op, memref.StoreOp):
            row.store(op.memref, list(op.indices), op.value)
    for op in reduction.body.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            row.access(op)
    return row


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


def _joins(row: _Row, loop: scf.ParallelOp, plan: _Plan) -> bool:
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
    row: _Row, loop: scf.ParallelOp, plan: _Plan, indices: Sequence[SSAValue], buffer: SSAValue
) -> SSAValue | None:
    """What the row stored where `loop` accesses `buffer[indices]`, if it did."""
    mapped = [_mapped(i, loop, plan) for i in indices]
    if any(i is None for i in mapped):
        return None  # the place moves with the column
    return row.value_at(buffer, mapped)  # pyright: ignore[reportArgumentType]


def _may_store(row: _Row, loop: scf.ParallelOp, plan: _Plan, store: memref.StoreOp) -> bool:
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
    if any(i is None for i in mapped) or not _same_place(mapped, row.ivs):  # pyright: ignore[reportArgumentType]
        return False
    # read where it is written: each lane updates only its own elements
    return all(op is store or _same_place(op.indices, store.indices) for op in own)


def _join(
    rewriter: PatternRewriter,
    row: _Row,
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


def _forward(rewriter: PatternRewriter, block: Block) -> None:
    """Loads of places the row body stored read the stored value instead; a top-level
    load of a buffer the body never writes, at a place loaded before, reuses that load
    (a joined softmax's bias, read by its statistics and again by its normalisation,
    whose `exp(x + b - max)` then are one value each)."""
    written = {op.memref for op in block.walk() if isinstance(op, memref.StoreOp)}
    nested = {
        op.memref
        for top in block.ops
        if top.regions
        for op in top.walk()
        if isinstance(op, memref.StoreOp)
    }
    places = _Row(())  # what the top level has stored so far, in program order
    loaded = _Row(())  # top-level loads of buffers never written, in program order
    for top in list(block.ops):
        for op in list(top.walk()):
            if isinstance(op, memref.StoreOp) and op is top:
                places.store(op.memref, list(op.indices), op.value)
            elif isinstance(op, memref.LoadOp) and op.memref not in nested:
                value = places.value_at(op.memref, list(op.indices))
                if value is None and op is top and op.memref not in written:
                    value = loaded.value_at(op.memref, list(op.indices))
                    if value is None:
                        loaded.store(op.memref, list(op.indices), op.res)
                        continue
                if value is not None:
                    rewriter.replace(op, [], [value])


def _drop_overwritten(rewriter: PatternRewriter, block: Block) -> None:
    """Erase top-level stores that a later one at the same place overwrites with no
    access to their buffer between (a row's outputs that its joined softmax rewrites)."""
    pending: dict[SSAValue, list[memref.StoreOp]] = {}  # buffer -> stores not yet read
    for top in list(block.ops):
        if isinstance(top, memref.StoreOp):
            earlier = pending.setdefault(top.memref, [])
            for store in [s for s in earlier if _same_place(s.indices, top.indices)]:
                earlier.remove(store)
                rewriter.erase(store)
            earlier.append(top)
            continue
        for inner in top.walk():
            if isinstance(inner, memref.LoadOp | memref.StoreOp):
                pending.pop(inner.memref, None)


@dataclass(frozen=True)
class FuseRowEpilogues(RewritePattern):
    """A warp-shareable row reduction takes in the loops after it that consume it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter) -> None:
        if not is_outermost(op) or warp_reduction(op) is None:
            return
        row = _row_of(op)
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
            _forward(rewriter, op.body.block)
            _drop_overwritten(rewriter, op.body.block)
            for buffer in row.written:
                _drop_if_unread(rewriter, buffer)


def _joining(
    rewriter: PatternRewriter, row: _Row, reduction: scf.ParallelOp, loop: scf.ParallelOp
) -> tuple[scf.ParallelOp, _Plan] | None:
    """`loop`, or in its place its form with short column loops unrolled, and how it
    joins the row body; None if neither joins."""
    if (plan := _plan(reduction, loop)) is not None and _joins(row, loop, plan):
        return loop, plan
    unrolled = _unroll_columns(row, len(reduction.lowerBound), loop)
    if unrolled is None:
        return None
    if (plan := _plan(reduction, unrolled)) is None or not _joins(row, unrolled, plan):
        unrolled.erase()
        return None
    rewriter.insert(unrolled, InsertPoint.before(loop))
    rewriter.erase(loop)
    return unrolled, plan


def _reads_row_columns(row: _Row, ops: Sequence[Operation], column: SSAValue) -> bool:
    """Whether `ops` load something the row stored, at an index that is `column`."""
    return any(
        isinstance(op, memref.LoadOp) and op.memref in row.written and column in op.indices
        for op in ops
    )


def _unroll_columns(row: _Row, rows: int, loop: scf.ParallelOp) -> scf.ParallelOp | None:
    """
    A copy of `loop` (not inserted) with its short static column loops that read the
    row's stored columns unrolled: a trailing parallel dim, and `scf.for`s at the top of
    its body. None if there are none.
    """
    body = loop.body.block
    dims = len(loop.lowerBound)
    trailing = _short(loop.lowerBound[-1], loop.upperBound[-1], loop.step[-1])
    unroll_dim = (
        dims == rows + 1
        and trailing is not None
        and _reads_row_columns(row, list(body.walk()), body.args[-1])
    )
    inner = [
        op
        for op in body.ops
        if isinstance(op, scf.ForOp)
        and _short(op.lb, op.ub, op.step) is not None
        and not any(o.regions for o in op.body.block.ops)
        and _reads_row_columns(row, list(op.body.block.ops), op.body.block.args[0])
    ]
    if not unroll_dim and not inner:
        return None
    copy = loop.clone()
    positions = [n for n, op in enumerate(loop.body.block.ops) if op in inner]
    copied = list(copy.body.block.ops)
    for position in positions:
        _unroll_for(copied[position])  # pyright: ignore[reportArgumentType]
    if unroll_dim:
        copy = _unroll_last_dim(copy)
    return copy


def _short(lb: SSAValue, ub: SSAValue, step: SSAValue) -> list[int] | None:
    """The iterations of a loop of at most `UNROLLED_COLUMNS` static ones, else None."""
    bounds = [constant_index(v) for v in (lb, ub, step)]
    if any(b is None for b in bounds) or bounds[2] <= 0:  # pyright: ignore[reportOptionalOperand]
        return None
    values = list(range(*bounds))  # pyright: ignore[reportArgumentType]
    return values if len(values) <= UNROLLED_COLUMNS else None


def _unroll_for(loop: scf.ForOp) -> None:
    """
    Replace `loop` with its iterations in sequence, its `iter_args` threaded through;
    softmax's online (max, sum) pair from its identity becomes the two-pass form (a max
    over the row's elements, then the sum of their `exp(x - max)`, trees both), which
    the unrolled row allows: no chain of ten dependent rescaling steps.
    """
    iterations = _short(loop.lb, loop.ub, loop.step)
    assert iterations is not None
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    online = len(body.args) == 3 and online_softmax.is_step(*body.args[1:], *yielded.operands)
    online = (
        online
        and bool(iterations)
        and all(map(online_softmax.is_constant, loop.iter_args, online_softmax.IDENTITY))
    )
    carried = list(loop.iter_args)
    elements: list[SSAValue] = []  # each iteration's x, where the pair is online
    before = InsertPoint.before(loop)
    for value in iterations:
        index = arith.ConstantOp(IntegerAttr.from_index_int_value(value))
        Rewriter.insert_op(index, before)
        mapping: dict[SSAValue, SSAValue] = {body.args[0]: index.result}
        mapping.update(zip(body.args[1:], carried, strict=True))
        for op in list(body.ops)[:-1]:
            Rewriter.insert_op(op.clone(mapping), before)
        if online:  # the step's own element; the step itself is left unused
            step_max = yielded.operands[0].owner
            elements.append(mapping[step_max.operands[1]])  # pyright: ignore[reportAttributeAccessIssue]
        else:
            carried = [mapping.get(v, v) for v in yielded.operands]
    if online:
        with ImplicitBuilder(Builder(before)):
            carried = _two_pass(elements)
    for result, value in zip(loop.results, carried, strict=True):
        result.replace_all_uses_with(value)
    loop.detach()
    loop.erase()


def _two_pass(elements: Sequence[SSAValue]) -> list[SSAValue]:
    """Softmax's (max, sum of exp(x - max)) over `elements`, built under an implicit
    builder. NaN as the online form: a row of -inf only (every `x - max` NaN), or one
    holding +inf or NaN."""
    largest = _tree(arith.MaximumfOp, elements)
    terms = [math.ExpOp(arith.SubfOp(x, largest).result).result for x in elements]
    return [largest, _tree(arith.AddfOp, terms)]


def _tree(kind: type[arith.MaximumfOp | arith.AddfOp], values: Sequence[SSAValue]) -> SSAValue:
    """`values` combined pairwise, level by level: a depth of log2(n), not n."""
    level = list(values)
    while len(level) > 1:
        pairs = [kind(a, b).result for a, b in zip(level[::2], level[1::2], strict=False)]
        level = pairs + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def _unroll_last_dim(loop: scf.ParallelOp) -> scf.ParallelOp:
    """`loop` without its last dim: the body repeated for each of its (static) values."""
    iterations = _short(loop.lowerBound[-1], loop.upperBound[-1], loop.step[-1])
    assert iterations is not None
    body = loop.body.block
    outer = Block(arg_types=[IndexType()] * (len(loop.lowerBound) - 1))
    for value in iterations:
        index = arith.ConstantOp(IntegerAttr.from_index_int_value(value))
        outer.add_op(index)
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, [*outer.args, index.result]))
        for op in body.ops:
            if not isinstance(op, scf.ReduceOp):
                outer.add_op(op.clone(mapping))
    outer.add_op(scf.ReduceOp())
    bounds = (loop.lowerBound[:-1], loop.upperBound[:-1], loop.step[:-1])
    unrolled = scf.ParallelOp(*bounds, Region(outer))
    loop.erase()
    return unrolled


def _drop_if_unread(rewriter: PatternRewriter, buffer: SSAValue) -> None:
    """Erase an allocation that is only stored to (statistics every reader now gets
    forwarded), with its stores and dealloc; xDSL's canonicalization elides an alloc
    only when its one use is the dealloc."""
    if not isinstance(buffer.owner, memref.AllocOp):
        return
    users = [use.operation for use in buffer.uses]
    if not all(
        isinstance(user, memref.DeallocOp)
        or (isinstance(user, memref.StoreOp) and user.memref is buffer)
        for user in users
    ):
        return
    for user in users:
        rewriter.erase(user)
    rewriter.erase(buffer.owner)


@dataclass(frozen=True)
class FuseRowEpiloguesPass(ModulePass):
    """Fuse row reductions with the loops that consume them (see the module docstring)."""

    name = "fuse-row-epilogues"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseRowEpilogues(), apply_recursively=False).rewrite_module(op)

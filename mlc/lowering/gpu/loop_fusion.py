"""
Adjacent elementwise `scf.parallel`s over one iteration space merged into one, so that
they become one kernel: an LSTM step's cell update, its hidden state and the copy of
that state into the output sequence were three launches of 8x256 threads each, which
cost more to launch than to run.

    scf.parallel (%i, %j) = (0, 0) to (8, 256) { ... memref.store %c, %cell[%i, %j] }
    %h = memref.alloc() : memref<8x256xf32>
    scf.parallel (%k, %l) = (0, 0) to (8, 256) {
      %x = memref.load %cell[%k, %l] ... memref.store %y, %h[%k, %l] }
==>
    %h = memref.alloc() : memref<8x256xf32>
    scf.parallel (%i, %j) = (0, 0) to (8, 256) {
      ... memref.store %c, %cell[%i, %j]
      %x = memref.load %cell[%i, %j] ... memref.store %y, %h[%i, %j] }

Two loops merge when they have the same bounds and steps, no reductions, bodies with no
loops of their own (a reduction's row loop keeps its own warp mapping), and every
buffer that one writes and the other reads or writes is reached by both through the
same memref value at the loop's own indices (`[%i, %j]`), so that the fused iteration
reads what the first loop wrote at that element only. Buffers with different roots
(subviews followed to their source, in-place loop-carried buffers to their initial
value) do not alias when one of them is a `memref.alloc`; any other pair is assumed to
alias. What stands between the loops must be movable: allocs, subviews, casts and
scalar arithmetic go before the first loop, deallocs of buffers the second does not use
after the second.
"""

from collections.abc import Iterator

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Pure

from mlc.lowering.support.op_walk import inside

_VIEWS = (memref.SubviewOp, memref.CastOp, memref.ReinterpretCastOp)
_HOISTABLE = (memref.AllocOp, memref.DimOp, *_VIEWS)


def _root(value: SSAValue) -> SSAValue:
    """The buffer `value` views: subviews followed to their source, in-place iter_args of
    an `scf.for` to their initial value."""
    while True:
        owner = value.owner
        if isinstance(owner, _VIEWS):
            value = owner.source
            continue
        if isinstance(value, BlockArgument) and value.index > 0:
            loop = owner.parent_op() if isinstance(owner, Block) else None
            if isinstance(loop, scf.ForOp):
                yielded = loop.body.block.last_op
                position = value.index - 1
                if isinstance(yielded, scf.YieldOp) and yielded.operands[position] is value:
                    value = loop.iter_args[position]
                    continue
        return value


def _may_alias(a: SSAValue, b: SSAValue) -> bool:
    ra, rb = _root(a), _root(b)
    if ra is rb:
        return True
    return not (isinstance(ra.owner, memref.AllocOp) or isinstance(rb.owner, memref.AllocOp))


def _accesses(loop: scf.ParallelOp) -> list[tuple[Operation, SSAValue, bool]] | None:
    """(op, buffer, writes) of every memory access in `loop`'s body; None when it has a
    loop of its own or an op on memory that is not a load or store."""
    found: list[tuple[Operation, SSAValue, bool]] = []
    for op in loop.body.walk():
        if isinstance(op, scf.ForOp | scf.ParallelOp | scf.WhileOp):
            return None
        if isinstance(op, memref.LoadOp):
            found.append((op, op.memref, False))
        elif isinstance(op, memref.StoreOp):
            found.append((op, op.memref, True))
        elif op is not loop and not _is_scalar(op):
            return None
    return found


def _is_scalar(op: Operation) -> bool:
    if isinstance(op, scf.ReduceOp | scf.IfOp | scf.YieldOp):
        return True
    return op.has_trait(Pure) or op.dialect_name() in ("arith", "math")


def _at_own_indices(op: Operation, loop: scf.ParallelOp) -> bool:
    indices = op.indices  # pyright: ignore[reportAttributeAccessIssue]
    return list(indices) == list(loop.body.block.args)


def _same_space(a: scf.ParallelOp, b: scf.ParallelOp) -> bool:
    if a.initVals or b.initVals:
        return False
    pairs = zip((*a.lowerBound, *a.upperBound, *a.step), (*b.lowerBound, *b.upperBound, *b.step))
    return len(a.lowerBound) == len(b.lowerBound) and all(
        x is y or (_constant(x) is not None and _constant(x) == _constant(y)) for x, y in pairs
    )


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _compatible(a: scf.ParallelOp, b: scf.ParallelOp) -> bool:
    first, second = _accesses(a), _accesses(b)
    if first is None or second is None:
        return False
    for op_a, buffer_a, writes_a in first:
        for op_b, buffer_b, writes_b in second:
            if not (writes_a or writes_b) or not _may_alias(buffer_a, buffer_b):
                continue
            if buffer_a is not buffer_b:
                return False
            if not (_at_own_indices(op_a, a) and _at_own_indices(op_b, b)):
                return False
    return True


def _between(a: scf.ParallelOp, b: scf.ParallelOp) -> Iterator[Operation]:
    op = a.next_op
    while op is not None and op is not b:
        yield op
        op = op.next_op


def _movable(a: scf.ParallelOp, b: scf.ParallelOp) -> bool:
    for op in _between(a, b):
        if isinstance(op, memref.DeallocOp):
            if any(_root(v) is _root(op.memref) for _, v, _ in _accesses(b) or []):
                return False
        elif not (isinstance(op, _HOISTABLE) or (op.has_trait(Pure) and not op.regions)):
            return False
    return True


def _fuse(a: scf.ParallelOp, b: scf.ParallelOp) -> None:
    for op in list(_between(a, b)):
        op.detach()
        if isinstance(op, memref.DeallocOp):
            Rewriter.insert_op(op, InsertPoint.after(b))
        else:
            Rewriter.insert_op(op, InsertPoint.before(a))
    target = a.body.block
    reduce = target.last_op
    assert reduce is not None
    source = b.body.block
    for new, old in zip(target.args, source.args, strict=True):
        old.replace_all_uses_with(new)
    for op in list(source.ops)[:-1]:  # all but its scf.reduce
        op.detach()
        target.insert_op_before(op, reduce)
    Rewriter.erase_op(b)


def _next_parallel(loop: scf.ParallelOp) -> scf.ParallelOp | None:
    op = loop.next_op
    while op is not None and not isinstance(op, scf.ParallelOp):
        op = op.next_op
    return op


def fuse_parallel_loops(module: ModuleOp) -> None:
    """Merge every run of adjacent compatible parallel loops of `module` (docstring)."""
    loops = [op for op in module.walk() if isinstance(op, scf.ParallelOp)]
    fused: set[Operation] = set()
    for loop in loops:
        if loop in fused or inside(loop, scf.ParallelOp):
            continue
        while (after := _next_parallel(loop)) is not None:
            if not (_same_space(loop, after) and _compatible(loop, after)):
                break
            if not _movable(loop, after):
                break
            fused.add(after)
            _fuse(loop, after)

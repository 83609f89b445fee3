"""
`promote-accumulators`: a reduction's accumulator kept in a register across its loop.

`convert-linalg-to-loops` lowers a reduction as a loop that loads the output element,
adds to it and stores it back on every iteration:

    scf.for %j = %c0 to %n step %c1 {
      %acc = memref.load %sum[%i, %c0]
      %x = memref.load %x[%i, %j]
      memref.store (%acc + %x), %sum[%i, %c0]
    }

LLVM would keep `%acc` in a register (and vectorise the loop, the adds being
reassociable) only if it could prove that no other access of the loop touches
`%sum[%i, 0]`; inside a parallel chunk every buffer is a pointer loaded from the
chunk's context, so it cannot, and the loop runs scalar with a store-to-load chain per
element (layer norm's statistics ran at a fifth of numpy's speed). Here, where the
buffers are still known, a load and a store of the same element become a loop-carried
value, loaded once before the loop and stored once after it:

    %acc0 = memref.load %sum[%i, %c0]
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %acc0) {
      %x = memref.load %x[%i, %j]
      scf.yield (%acc + %x)
    }
    memref.store %r, %sum[%i, %c0]

A pair qualifies when, in the loop's own block (not nested), a `memref.load` comes
before the only `memref.store` to the same memref value at the same indices, those
indices are defined outside the loop, and the element cannot be reached any other way
in the loop: the buffer it lies in (followed through views to its source) is a
`memref.alloc` or `memref.alloca` of this function; no other op of the loop, nested
ones included, has that buffer as an operand (a `vector.store` to it, say); every
buffer the loop accesses is an allocation, a global or an argument of the function (a
loop-carried memref could be the accumulator's buffer under another name); and every
op of the loop is a load, a store, an `arith`/`math`/`vector` op or an `scf` loop,
branch or yield (anything else, a call for one, may touch memory unseen). If the loop
runs no iteration the element is loaded and stored back unchanged. Loops are visited
innermost first, so an accumulator promoted out of one loop can climb out of the next.

xDSL's `loop-hoist-memref` makes the same rewrite without the aliasing conditions (and
drops a loop's existing `iter_args`), so it is not used.
"""

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.support.buffer_views import ALLOCATIONS, viewed_buffer

SAFE_DIALECTS = ("arith", "math", "vector")
SAFE_OPS = (memref.LoadOp, memref.StoreOp, scf.ForOp, scf.IfOp, scf.YieldOp)


def _pairs(loop: scf.ForOp) -> list[tuple[memref.LoadOp, memref.StoreOp]]:
    """The load/store pairs of `loop` that become loop-carried (module docstring)."""
    inside = list(loop.body.walk())
    if not all(isinstance(op, SAFE_OPS) or op.dialect_name() in SAFE_DIALECTS for op in inside):
        return []
    by_buffer: dict[SSAValue, list[Operation]] = {}
    for op in inside:  # any memref operand counts as an access (`vector.load`, ...)
        for value in op.operands:
            if isinstance(value.type, MemRefType):
                by_buffer.setdefault(viewed_buffer(value), []).append(op)
    if not all(_known(buffer) for buffer in by_buffer):
        return []  # a buffer of unknown origin may be any of the others
    pairs: list[tuple[memref.LoadOp, memref.StoreOp]] = []
    for buffer, accesses in by_buffer.items():
        if isinstance(buffer.owner, ALLOCATIONS) and (pair := _pair(loop, accesses)):
            pairs.append(pair)
    return pairs


def _pair(
    loop: scf.ForOp, accesses: Sequence[Operation]
) -> tuple[memref.LoadOp, memref.StoreOp] | None:
    """The accesses to one buffer as a load then a store of the same loop-invariant
    element, both in the loop's own block; None if they are anything else."""
    if len(accesses) != 2:
        return None
    load, store = accesses
    if not isinstance(load, memref.LoadOp) or not isinstance(store, memref.StoreOp):
        return None
    block = loop.body.block
    if load.parent_block() is not block or store.parent_block() is not block:
        return None
    if load.memref is not store.memref or list(load.indices) != list(store.indices):
        return None
    if not all(_defined_outside(index, loop) for index in [load.memref, *load.indices]):
        return None
    return load, store


def _known(buffer: SSAValue) -> bool:
    """Whether `buffer` is an allocation, a global or an argument of its function (of
    its entry block): such buffers are told apart by identity (an allocation is no
    other buffer)."""
    owner = buffer.owner
    if isinstance(owner, Block):
        function = owner.parent_op()
        return isinstance(function, func.FuncOp) and owner is function.body.blocks.first
    return isinstance(owner, (*ALLOCATIONS, memref.GetGlobalOp))


def _defined_outside(value: SSAValue, loop: Operation) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    return op is None or not (op is loop or loop.is_ancestor(op))


def _promote(loop: scf.ForOp, pairs: list[tuple[memref.LoadOp, memref.StoreOp]]) -> None:
    block = loop.body.block
    initial = [load.clone() for load, _ in pairs]
    Rewriter.insert_op(initial, InsertPoint.before(loop))
    carried = [block.insert_arg(load.res.type, len(block.args)) for load, _ in pairs]
    yield_op = block.last_op
    assert isinstance(yield_op, scf.YieldOp)
    values = [*yield_op.arguments, *(store.value for _, store in pairs)]
    locations = [store.location for _, store in pairs]
    for (load, store), arg in zip(pairs, carried, strict=True):
        load.res.replace_all_uses_with(arg)
        for op in (load, store):
            op.detach()
            op.erase()
    new_yield = scf.YieldOp(*values)
    Rewriter.replace_op(yield_op, new_yield)
    region = loop.detach_region(loop.body)
    inits = [*loop.iter_args, *(load.res for load in initial)]
    new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, inits, region)
    new_loop.location = loop.location
    count = len(loop.results)
    stores: list[Operation] = []
    for k, (first, location) in enumerate(zip(initial, locations, strict=True)):
        stores.append(memref.StoreOp.get(new_loop.results[count + k], first.memref, first.indices))
        stores[-1].location = location
    Rewriter.insert_op([new_loop, *stores], InsertPoint.before(loop))
    for old, new in zip(loop.results, new_loop.results, strict=False):
        old.replace_all_uses_with(new)
    Rewriter.erase_op(loop)


class PromoteAccumulatorsPass(ModulePass):
    """Keep reductions' accumulators in registers across their loops (module docstring)."""

    name = "promote-accumulators"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [inner for inner in op.walk() if isinstance(inner, scf.ForOp)]
        for loop in reversed(loops):  # innermost first: a nested loop comes after its parent
            if pairs := _pairs(loop):
                _promote(loop, pairs)

"""
What `fuse-row-epilogues` does once loops have joined a row body: loads of what the
body stored read the stored value, stores that a later one overwrites unread go, and
statistics no one reads any more are not stored at all.
"""

from xdsl.dialects import memref
from xdsl.ir import Block, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from mlc.lowering.gpu.row_fusion.row_places import Row, same_place


def forward(rewriter: PatternRewriter, block: Block) -> None:
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
    places = Row(())  # what the top level has stored so far, in program order
    loaded = Row(())  # top-level loads of buffers never written, in program order
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


def drop_overwritten(rewriter: PatternRewriter, block: Block) -> None:
    """Erase top-level stores that a later one at the same place overwrites with no
    access to their buffer between (a row's outputs that its joined softmax rewrites)."""
    pending: dict[SSAValue, list[memref.StoreOp]] = {}  # buffer -> stores not yet read
    for top in list(block.ops):
        if isinstance(top, memref.StoreOp):
            earlier = pending.setdefault(top.memref, [])
            for store in [s for s in earlier if same_place(s.indices, top.indices)]:
                earlier.remove(store)
                rewriter.erase(store)
            earlier.append(top)
            continue
        for inner in top.walk():
            if isinstance(inner, memref.LoadOp | memref.StoreOp):
                pending.pop(inner.memref, None)


def drop_if_unread(rewriter: PatternRewriter, buffer: SSAValue) -> None:
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

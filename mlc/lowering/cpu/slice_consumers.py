"""
The elementwise generic that reads a matmul's result as column slices of one width, run
in the matmul's own parallel tasks.

An LSTM step is `Z = h @ R^T + x_t W^T` (M x N, N = G H: G gates of H hidden units
side by side, as ONNX orders R's rows) and then one generic E over M x H that reads
gate g as the view `Z[:, g H : (g + 1) H]`. E's unit `u` needs column `u` of every
slice, so where the matmul's tasks split the columns, a task that takes the same range
of units in every slice, `g H + [u0, u1)` for each g, has all E needs for `[u0, u1)`
once its panels are final: it runs E on those units right after them (`matmul_nest`'s
`tail`, E restricted by `parallel_generic.block_of`). A step is then one parallel
region instead of two, the gates run on every thread (alone they are too little work
for the thread pool to share them), and each thread reads its columns of Z from its
own cache. The GRU's step (G = 3) is the same. No weight is permuted, so nothing
changes for other targets.

E must be all-parallel on memrefs without `linalg.index`; every read of C is an input
through a subview of all of C's rows and W columns at a static offset, a multiple of W
(W divides N), indexed by the same loop `u` of E; every operand indexes `u` at most
plainly once, every output indexes it; no output shares a buffer with any operand of
the matmul (A, B, C, an epilogue's inputs: another task may still be reading them), and
an input shares one with an output only as that same view and map (an in-place update).
The ops between the matmul and E may only be views, allocations, frees of buffers E
does not touch and constants; those E's operands need are moved before the matmul.
Anything else keeps E as it is, its own parallel loop after the matmul.

Generics right after E that only carry E's outputs on, unit by unit, run in the tasks
too (`followers`): the LSTM step's copy of h' into its rows of Y would otherwise be a
loop on the calling thread after every step, reading half of h' from the other core's
cache. A follower reads only E's outputs, through the same views and map as E writes
them, and writes through that map buffers of that shape that neither the matmul, E nor
its own inputs use; the ops before it obey E's rule.
"""

from dataclasses import dataclass, field

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from mlc.lowering.cpu.parallel_generic import block_of, row_position
from mlc.lowering.support.loop_builder import Ops

VIEWS = (memref.SubviewOp, memref.ExpandShapeOp, memref.CollapseShapeOp, memref.CastOp)
BETWEEN = (*VIEWS, memref.AllocOp, memref.DeallocOp, arith.ConstantOp)


def root(value: SSAValue) -> SSAValue:
    """The buffer a view is of (through subviews, reshapes and casts)."""
    while isinstance(value.owner, VIEWS):
        value = value.owner.operands[0]
    return value


@dataclass
class SliceConsumer:
    """E, its loop `u` over a slice's columns, the slice width W, the slices in C
    (N / W), the ops to move before the matmul, and E's followers."""

    op: GenericOp
    loop: int
    width: int
    slices: int
    moved: list[Operation]
    followers: list[GenericOp] = field(default_factory=list)

    def generics(self) -> list[GenericOp]:
        """E and its followers, in order: what the tasks run, and no longer after them."""
        return [self.op, *self.followers]

    def tail(self, b: Ops, first: SSAValue, size: int) -> None:
        """E and its followers on the units `[first, first + size)` of every slice."""
        for op in self.generics():
            b.ops.append(block_of(b, op, self.loop, first, size))


def slice_consumer(matmul: GenericOp, c: SSAValue) -> SliceConsumer | None:
    """The generic after `matmul` (C = `c`, `[M, N]`) that reads it by column slices."""
    c_type = c.type
    if not isinstance(c_type, MemRefType) or not isinstance(c_type.layout, NoneAttr):
        return None
    shape = c_type.get_shape()
    if len(shape) != 2 or min(shape) < 1:
        return None
    if (found := _next_generic(matmul)) is None:
        return None
    op, between = found
    roots = [root(v) for v in op.operands]
    sliced = _slices(op, roots, c, shape)
    read = {root(v) for v in matmul.operands}  # A, B, C and an epilogue's inputs
    if sliced is None or not _no_conflicts(op, roots, read):
        return None
    loop, width = sliced
    for k in range(len(op.operands)):
        position = row_position(op, k, loop)
        if position is False or (k >= len(op.inputs) and position is None):
            return None
    moved = _needed(op, between, matmul)
    if moved is None:
        return None
    consumer = SliceConsumer(op, loop, width, shape[1] // width, moved)
    _add_followers(consumer, matmul, between, read)
    return consumer


def _add_followers(
    consumer: SliceConsumer, matmul: GenericOp, between: list[Operation], read: set[SSAValue]
) -> None:
    """Append to `consumer` each generic after E (then after the last follower) that
    carries E's outputs on unit by unit (module docstring), with the ops it needs."""
    e = consumer.op
    maps = [m.data for m in e.indexing_maps.data]
    written = {v: maps[len(e.inputs) + k] for k, v in enumerate(e.outputs)}
    used = {root(v) for v in e.operands} | read
    last = e
    while (found := _next_generic(last)) is not None:
        op, after = found
        if not _carries(op, written, used):
            return
        moved = _needed(op, between + after, matmul)
        if moved is None:
            return
        consumer.moved += [o for o in moved if o not in consumer.moved]
        consumer.followers.append(op)
        between, last = between + after, op


def _carries(op: GenericOp, written: dict[SSAValue, AffineMap], used: set[SSAValue]) -> bool:
    """Whether `op` reads only E's outputs (`written`: each with E's map for it) and
    writes, through that one map, buffers of their shape that nothing in `used` is."""
    maps = [m.data for m in op.indexing_maps.data]
    if not op.inputs or any(v not in written for v in op.inputs):
        return False
    map_ = written[op.inputs[0]]
    shape = op.inputs[0].type.get_shape()
    if any(m != map_ for m in maps) or any(written[v] != map_ for v in op.inputs):
        return False
    sources = {root(v) for v in op.inputs}
    for out in op.outputs:
        if out.type.get_shape() != shape or root(out) in used | sources:
            return False
    return len(op.iterator_types.data) == len(map_.results) == map_.num_dims


def _next_generic(matmul: GenericOp) -> tuple[GenericOp, list[Operation]] | None:
    """The next generic after `matmul`, elementwise on buffers, and the ops between."""
    between: list[Operation] = []
    op = matmul.next_op
    while op is not None and not isinstance(op, GenericOp):
        if not isinstance(op, BETWEEN):
            return None
        between.append(op)
        op = op.next_op
    if op is None or not _elementwise_on_buffers(op):
        return None
    return op, between


def _elementwise_on_buffers(op: GenericOp) -> bool:
    if op.res or any(it.data.value != "parallel" for it in op.iterator_types.data):
        return False
    if any(isinstance(inner, IndexOp) for inner in op.body.walk()):
        return False
    return all(isinstance(v.type, MemRefType) for v in op.operands)


def _slice_of(value: SSAValue, c: SSAValue, shape: tuple[int, ...]) -> tuple[int, int] | None:
    """(offset, width) of `value`, a unit-stride subview of all rows of `c`, or None."""
    view = value.owner
    if not isinstance(view, memref.SubviewOp) or view.source is not c:
        return None
    if view.offsets or view.sizes or view.strides:
        return None  # dynamic
    offsets = view.static_offsets.get_values()
    sizes = view.static_sizes.get_values()
    strides = view.static_strides.get_values()
    if tuple(strides) != (1, 1) or offsets[0] != 0 or sizes[0] != shape[0]:
        return None
    return offsets[1], sizes[1]


def _slices(
    op: GenericOp, roots: list[SSAValue], c: SSAValue, shape: tuple[int, ...]
) -> tuple[int, int] | None:
    """E's loop `u` and the width W of its reads of `c`: inputs, slices of one width at
    multiples of it, their columns indexed by the same plain loop."""
    maps = [m.data for m in op.indexing_maps.data]
    found: set[tuple[int, int]] = set()
    for k, (value, map_) in enumerate(zip(op.operands, maps)):
        if roots[k] is not c:
            continue
        sliced = _slice_of(value, c, shape) if k < len(op.inputs) else None
        if sliced is None or len(map_.results) != 2:
            return None
        offset, width = sliced
        column = map_.results[1]
        if not isinstance(column, AffineDimExpr) or offset % width or shape[1] % width:
            return None
        found.add((column.position, width))
    return found.pop() if len(found) == 1 else None


def _no_conflicts(op: GenericOp, roots: list[SSAValue], matmul_buffers: set[SSAValue]) -> bool:
    """No output in the matmul's operands; an input in an output's buffer only as that
    same operand."""
    n_in = len(op.inputs)
    maps = [m.data for m in op.indexing_maps.data]
    for k in range(n_in, len(op.operands)):
        if roots[k] in matmul_buffers:
            return False
        for i in range(n_in):
            same = op.operands[i] is op.operands[k] and maps[i] == maps[k]
            if roots[i] is roots[k] and not same:
                return False
    return True


def _needed(op: GenericOp, between: list[Operation], matmul: GenericOp) -> list[Operation] | None:
    """The ops of `between` that E's operands come from (to define before the matmul);
    None if E touches a buffer freed there or one needs a value made after the matmul."""
    inside = set(between)
    needed: list[Operation] = []
    pending = [v.owner for v in op.operands]
    while pending:
        owner = pending.pop()
        if owner in inside and owner not in needed:
            needed.append(owner)
            pending += [v.owner for v in owner.operands]
    freed = {root(o.operands[0]) for o in between if isinstance(o, memref.DeallocOp)}
    if freed & {root(v) for v in op.operands} or any(
        isinstance(o, memref.DeallocOp) for o in needed
    ):
        return None
    if any(v.owner is matmul for o in needed for v in o.operands):
        return None
    return [o for o in between if o in needed]  # in their order

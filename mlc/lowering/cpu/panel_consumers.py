"""
The elementwise generic that reads a matmul's result in blocks of columns, run in the
matmul's own parallel tasks.

After `C = A @ B (+ epilogue)` on buffers, a generic E whose reads of C all go through
views in which one of its loops, `p`, walks blocks of W columns,

    C[i, p * W + w]      (w < W: the view's other dims stay inside one block)

needs, for a range of `p`, only the columns of those blocks. That is how an LSTM step's
gates read the step's product once its weight rows are in blocks of hidden units
(`mlc.frontends.onnx.ops.gate_blocks`): W = 32 columns hold the four gates of 8 units.
Where the matmul's tasks take every row of C and groups of whole column panels whose
width is a multiple of W, each task runs E on its own blocks right after its panels are
final (`matmul_nest`'s `tail`, E restricted by `parallel_generic.block_of`): one parallel
region instead of two, and each thread reads the product from its own cache.

E must be all-parallel on memrefs without `linalg.index`; every operand indexes `p` at
most plainly once, every output indexes it; C's views are inputs only, at static offsets
and strides; no output shares a buffer with A, B or C, and an input shares one with an
output only as that same view and map (an in-place update, element for element). The
ops between the matmul and E may only be views, allocations, frees of buffers E does
not touch and constants; those E's operands need are moved before the matmul. Anything
else keeps E as it is, its own parallel loop after the matmul.
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, NoneAttr, StridedLayoutAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.cpu.parallel_generic import block_of, row_position
from mlc.lowering.support.loop_builder import Ops

VIEWS = (memref.SubviewOp, memref.ExpandShapeOp, memref.CollapseShapeOp, memref.CastOp)
BETWEEN = (*VIEWS, memref.AllocOp, memref.DeallocOp, arith.ConstantOp)

# (task's ops, first column, end column) -> the consumer's ops for those columns
Tail = Callable[[Ops, SSAValue, SSAValue], None]


def root(value: SSAValue) -> SSAValue:
    """The buffer a view is of (through subviews, reshapes and casts)."""
    while isinstance(value.owner, VIEWS):
        value = value.owner.operands[0]
    return value


def _layout(type_: MemRefType) -> tuple[list[int], int] | None:
    """Static strides and offset, or None."""
    layout = type_.layout
    if isinstance(layout, NoneAttr):
        return list(MemRefType.strides_for_shape(type_.get_shape())), 0
    if not isinstance(layout, StridedLayoutAttr):
        return None
    strides, offset = layout.get_strides(), layout.get_offset()
    if offset is None or any(s is None for s in strides):
        return None
    return [s for s in strides if s is not None], offset


def _block_loop(view: SSAValue, map_, columns: int) -> tuple[int, int] | None:
    """(p, W) for a view of a contiguous `[M, columns]` buffer read through `map_`."""
    type_ = view.type
    if not isinstance(type_, MemRefType) or (layout := _layout(type_)) is None:
        return None
    strides, offset = layout
    shape = type_.get_shape()
    if any(s < 0 for s in shape) or len(map_.results) != len(shape):
        return None
    inner = [r for r, (s, z) in enumerate(zip(strides, shape)) if z > 1 and s < columns]
    rows = [r for r, z in enumerate(shape) if z > 1 and r not in inner]
    if not inner or any(strides[r] % columns for r in rows):
        return None
    p = max(inner, key=lambda r: strides[r])
    width = strides[p]
    spread = offset % columns + sum(strides[r] * (shape[r] - 1) for r in inner if r != p)
    expr = map_.results[p]
    if not isinstance(expr, AffineDimExpr) or columns % width or spread >= width:
        return None
    if width * shape[p] > columns:
        return None
    return expr.position, width


@dataclass
class PanelConsumer:
    """E, its block loop `p`, the block width W, and the ops to move before the matmul."""

    op: GenericOp
    loop: int
    width: int
    moved: list[Operation]

    def tail(self, b: Ops, first: SSAValue, end: SSAValue) -> None:
        """E on the blocks of columns `[first, end)` (both multiples of W, or end = N)."""
        width = b.index(self.width)
        start = b(arith.DivSIOp(first, width))
        size = b(arith.SubiOp(b.ceildiv(end, width), start))
        b.ops.append(block_of(b, self.op, self.loop, start, size))


def panel_consumer(
    matmul: GenericOp, a: SSAValue, bm: SSAValue, c: SSAValue
) -> PanelConsumer | None:
    """The generic after `matmul` (C = `c`, `[M, N]`) that reads it by blocks of columns."""
    c_type = c.type
    if not isinstance(c_type, MemRefType) or not isinstance(c_type.layout, NoneAttr):
        return None
    if len(c_type.get_shape()) != 2 or c_type.get_shape()[1] < 0:
        return None
    if (found := _next_generic(matmul)) is None:
        return None
    op, between = found
    roots = [root(v) for v in op.operands]
    block = _reads_of(op, roots, c, c_type.get_shape()[1])
    if block is None or not _no_conflicts(op, roots, {root(a), root(bm), c}):
        return None
    loop, width = block
    for k in range(len(op.operands)):
        position = row_position(op, k, loop)
        if position is False or (k >= len(op.inputs) and position is None):
            return None
    moved = _needed(op, between, matmul)
    return None if moved is None else PanelConsumer(op, loop, width, moved)


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


def _reads_of(
    op: GenericOp, roots: list[SSAValue], c: SSAValue, columns: int
) -> tuple[int, int] | None:
    """The loop and width (p, W) of every read of `c` by `op`: inputs, all agreeing."""
    maps = [m.data for m in op.indexing_maps.data]
    found: set[tuple[int, int] | None] = set()
    for k, (value, map_) in enumerate(zip(op.operands, maps)):
        if roots[k] is c:
            found.add(_block_loop(value, map_, columns) if k < len(op.inputs) else None)
    return found.pop() if len(found) == 1 else None


def _elementwise_on_buffers(op: GenericOp) -> bool:
    if op.res or any(it.data.value != "parallel" for it in op.iterator_types.data):
        return False
    if any(isinstance(inner, IndexOp) for inner in op.body.walk()):
        return False
    return all(isinstance(v.type, MemRefType) for v in op.operands)


def _no_conflicts(op: GenericOp, roots: list[SSAValue], matmul_buffers: set[SSAValue]) -> bool:
    """No output in A, B or C; an input in an output's buffer only as that same operand."""
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

"""
An `scf.parallel` over blocks of one loop of a `linalg.generic` on memrefs.

`linalg-tile` uses this for the generics that have no kernel of their own
(elementwise ops, reductions over inner dimensions, convolutions, pooling, batched or
integer matmuls): one parallel loop `d` is split into as many blocks as there are
threads, and each block runs the same generic on views of its operands:

    linalg.generic ins(%x : memref<4096x512xf32>) outs(%y : memref<4096x512xf32>)
==>
    %block = ceil(4096 / threads)
    scf.parallel (%t) = (0) to (4096) step (%block) {
      %size = min(%block, 4096 - %t)
      %xv = memref.subview %x[%t, 0] [%size, 512] [1, 1]
      %yv = memref.subview %y[%t, 0] [%size, 512] [1, 1]
      linalg.generic ins(%xv ...) outs(%yv ...)     // same maps, same body
    }

When the extent of `d` is static and divides among the threads, the block size is a
constant and the views have static sizes: the loops inside then have constant bounds,
so `convert-to-llvm`, which weighs a parallel loop by its trip count times the work of
one iteration, sees the blocks' real work (a dynamic bound counts as 1024 iterations
there, and two such blocks of a small body fell under `PARALLEL_THRESHOLD`: the loop ran
on one thread). A static extent that does not divide still has a constant block size,
bounding the `min`; `convert-to-llvm` reads a block's rows through the `min` and the
subview (a dynamic block size as the loop's step, when it runs). A dynamic extent of
one block (a batch of 1) runs as one iteration on the caller, in the same outlined body
as the blocks, whose output LLVM knows to be distinct from the inputs
(`convert_to_llvm.distinct_buffers`), so it vectorises as the generic would unsplit.

`d` must appear in every operand's map either not at all or as one plain result
(`d` alone), so that a block of `d` is a block of rows of those operands. A body that
reads `linalg.index` (a broadcast whose sizes are known only at run time, a gather's
positions) gets the block's start added to index `d`, so it sees the same positions as
the whole generic; such a body may only compute and load (`_PURE`), never store: its
indices could name any element. Inner loops keep their order, so the innermost,
contiguous loop still vectorises.
"""

from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    DenseArrayBase,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    i64,
)
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from mlc.lowering.support.loop_builder import Ops

# What a body that reads `linalg.index` may hold besides `arith` and `math` ops.
_PURE = (IndexOp, YieldOp, memref.LoadOp, memref.DimOp, scf.IfOp, scf.YieldOp)


def _dim_position(affine_map: AffineMap, d: int) -> int | bool | None:
    """The result position holding plain `d`; None if `d` is absent; False if it is mixed."""
    position: int | None = None
    for r, expr in enumerate(affine_map.results):
        if isinstance(expr, AffineDimExpr) and expr.position == d:
            if position is not None:
                return False
            position = r
        elif d in expr.used_dims():
            return False  # d inside a compound expression (a convolution window, ...)
    return position


def loop_extents(op: GenericOp) -> dict[int, int]:
    """The extent of each loop that some operand indexes plainly (dynamic: negative)."""
    extents: dict[int, int] = {}
    for value, attr in zip(op.operands, op.indexing_maps.data, strict=True):
        type_ = value.type
        if not isinstance(type_, MemRefType):
            continue  # a scalar operand (an empty map)
        for size, expr in zip(type_.get_shape(), attr.data.results, strict=True):
            if isinstance(expr, AffineDimExpr) and extents.get(expr.position, -1) < 0:
                extents[expr.position] = size
    return extents


def _pure(op: Operation) -> bool:
    """An op of a generic's body that only computes or loads."""
    return isinstance(op, _PURE) or op.dialect_name() in ("arith", "math")


def splittable_loop(op: GenericOp) -> int | None:
    """The outermost parallel loop of `op` longer than 1 that splits into blocks, or None."""
    body = list(op.body.walk())
    if any(isinstance(inner, IndexOp) for inner in body) and not all(map(_pure, body)):
        return None
    scalar = AnyFloat | IntegerType | IndexType
    if op.res or not all(isinstance(v.type, MemRefType | scalar) for v in op.operands):
        return None  # on tensors
    maps = [m.data for m in op.indexing_maps.data]
    extents = loop_extents(op)
    for d, iterator in enumerate(op.iterator_types.data):
        if iterator.data.value != "parallel" or extents.get(d, -1) in (0, 1):
            continue
        positions = [_dim_position(m, d) for m in maps]
        if any(p is False for p in positions):
            continue
        if any(p is None for p in positions[len(op.inputs) :]):
            continue  # every block must write its own part of each output
        if any(p is not None for p in positions):
            return d
    return None


def _strides(type_: MemRefType) -> list[int | None]:
    """Element strides of a memref (None where dynamic)."""
    layout = type_.layout
    if isinstance(layout, StridedLayoutAttr):
        return list(layout.get_strides())
    assert isinstance(layout, NoneAttr)
    return list(MemRefType.strides_for_shape(type_.get_shape()))


def _block_view(
    b: Ops, value: SSAValue, position: int, start: SSAValue, size: SSAValue | int
) -> SSAValue:
    """`value[..., start : start + size, ...]` along dimension `position`, as a strided view
    (of static size there when `size` is an int)."""
    type_ = value.type
    assert isinstance(type_, MemRefType)
    shape = list(type_.get_shape())
    strides = _strides(type_)
    static_size = size if isinstance(size, int) else DYNAMIC_INDEX
    sizes = [b.dim(value, r) for r, s in enumerate(shape) if s == DYNAMIC_INDEX and r != position]
    if isinstance(size, SSAValue):
        sizes.insert(sum(1 for r in range(position) if shape[r] == DYNAMIC_INDEX), size)
    static_sizes = [static_size if r == position else s for r, s in enumerate(shape)]
    static_offsets = [DYNAMIC_INDEX if r == position else 0 for r in range(len(shape))]
    result_type = MemRefType(type_.element_type, static_sizes, StridedLayoutAttr(strides, None))
    return b(
        memref.SubviewOp(
            value,
            [start],
            sizes,
            [],
            DenseArrayBase.from_list(i64, static_offsets),
            DenseArrayBase.from_list(i64, static_sizes),
            DenseArrayBase.from_list(i64, [1] * len(shape)),
            result_type,
        )
    )


def loop_extent(b: Ops, op: GenericOp, d: int) -> SSAValue:
    """The extent of loop `d` (the size of an operand dimension it indexes plainly)."""
    for value, attr in zip(op.operands, op.indexing_maps.data, strict=True):
        position = _dim_position(attr.data, d)
        if position is not None and position is not False:
            return b.dim(value, position)
    raise AssertionError("splittable_loop guarantees an operand with a plain d")


def block_of(b: Ops, op: GenericOp, d: int, start: SSAValue, size: SSAValue | int) -> GenericOp:
    """`op` on rows `[start, start + size)` of loop `d` (views of its operands); `op`'s
    body moves into it."""
    views: list[SSAValue] = []
    for value, attr in zip(op.operands, op.indexing_maps.data, strict=True):
        position = _dim_position(attr.data, d)
        views.append(value if position is None else _block_view(b, value, position, start, size))
    n_in = len(op.inputs)
    region = op.detach_region(op.body)
    for index in [i for i in region.walk() if isinstance(i, IndexOp) and i.dim.value.data == d]:
        shifted = arith.AddiOp(index.result, start)
        index.result.replace_uses_with_if(shifted.result, lambda use: use.operation is not shifted)
        block = index.parent_block()
        assert block is not None
        block.insert_op_after(shifted, index)
    return GenericOp(
        views[:n_in],
        views[n_in:],
        region,
        op.indexing_maps,
        op.iterator_types,
        [],
        op.doc,
        op.library_call,
    )


def row_position(op: GenericOp, k: int, d: int) -> int | bool | None:
    """The dimension of operand `k` that loop `d` indexes (None: none; False: mixed)."""
    return _dim_position(op.indexing_maps.data[k].data, d)


def split_generic(op: GenericOp, d: int, threads: int) -> list[Operation]:
    """The `scf.parallel` over blocks of loop `d` (module docstring); `op` is moved into it."""
    b = Ops()
    extent = loop_extent(b, op, d)
    zero, one = b.index(0), b.index(1)
    static = loop_extents(op).get(d, -1)
    body = Block(arg_types=[IndexType()])
    inner = Ops()
    start = body.args[0]
    if static > 0 and static % threads == 0:
        # Blocks of one static size: the loops inside have constant bounds, so
        # `convert-to-llvm` sees the work of a block when it weighs the thread pool.
        block_size = b.index(static // threads)
        size: SSAValue | int = static // threads
    elif static > 0:
        block_size = b.index(-(-static // threads))
        size = inner.min(block_size, inner(arith.SubiOp(extent, start)))
    else:
        block_size = b(arith.MaxSIOp(b.ceildiv(extent, b.index(threads)), one))
        size = inner.min(block_size, inner(arith.SubiOp(extent, start)))
    blocked = block_of(inner, op, d, start, size)
    body.add_ops([*inner.ops, blocked, scf.ReduceOp()])
    b.ops.append(scf.ParallelOp([zero], [extent], [block_size], Region(body)))
    return b.ops


def total_iterations(op: GenericOp) -> int | None:
    """The product of the loop extents of `op`, or None if one of them is dynamic."""
    extents = loop_extents(op)
    if len(extents) != len(op.iterator_types.data) or any(e < 0 for e in extents.values()):
        return None
    return prod(extents.values())

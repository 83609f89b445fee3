"""
The packed operands of the matmul kernel (`mlc.lowering.cpu.matmul_nest`): B in NR-wide
panels, A in MR-row micro-panels, each laid out so that the micro-kernel
(`mlc.lowering.cpu.matmul_micro_kernel`) reads it as one contiguous stream.

    Bp[t, p, k, jj] = B[batch(t), k, p*NR + jj]     0 past N; all of B, once per kernel
    Ap[q, kk, r]    = A[i0 + q*MR + r, k0 + kk]     a task's block of A, per K block

B is packed a group of adjacent panels per parallel iteration (`pack_b`), narrow floats
(f16) widened to the f32 accumulator as they are copied; a convolution's B is packed
from its image into the same layout (`mlc.lowering.cpu.conv_packing`). Each task packs
its block of A into a buffer of its own (`a_block_buffer`, `pack_a_block`).
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IntegerAttr,
    MemRefType,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mlc.lowering.linalg.contraction import Matmul, indices
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import (
    Ops,
    as_float,
    for_loop,
    if_then,
    less,
    parallel_loop,
    zero,
)
from mlc.tiling_model import MatmulTiles

ALIGNMENT = 64

# Adjacent panels `pack_b` packs per parallel iteration: 128 floats, 512 bytes of each
# row of B at a time.
PACK_GROUP = 8

Pair = tuple[SSAValue, SSAValue]
# A call packing panels (first, end) of a batch (B's batch loop values) into the panels'
# buffer at a batch number, for sizes (K, N): `shared_packing.PanelCalls.call`.
PackCall = Callable[[Ops, Sequence[SSAValue], Pair, Pair, Pair], None]


def batch_indices(b: Ops, flat: SSAValue, extents: Sequence[SSAValue]) -> list[SSAValue]:
    """The batch loop values of a flat batch number (row-major over `extents`)."""
    values: list[SSAValue] = []
    for extent in reversed(extents):
        values.append(b(arith.RemSIOp(flat, extent)))
        flat = b(arith.DivSIOp(flat, extent))
    return values[::-1]


def ends_inside_panel(mm: Matmul, tiles: MatmulTiles) -> bool:
    """Whether N may end inside a column panel (it is dynamic or not a multiple of NR)."""
    n = mm.sizes[1]
    return n is None or n % tiles.nr != 0


def pack_b(
    b: Ops,
    mm: Matmul,
    sizes: tuple[SSAValue, SSAValue],
    batch: tuple[SSAValue, Sequence[SSAValue]],
    tiles: MatmulTiles,
    threads: int = 1,
    parallel: bool = True,
    shared: PackCall | None = None,
) -> SSAValue:
    """
    `Bp[t, p, k, jj] = B[batch(t), k, p*NR + jj]` (0 past N), a group of up to
    `PACK_GROUP` adjacent panels of one batch per parallel iteration (fewer where that
    leaves the `threads` fewer groups than threads), a vector at a time. Each row
    of B is read along the group's whole width before the next (a panel at a time,
    each row gave one cache line, and B's rows a 4 KiB multiple apart evicted each
    other before the next panel came back for the rest of them: 64 x 784 x 1024 spent
    most of its time there). The last, partial panel is read with masked loads.
    `batch` is the number of batches packed and their extents.
    Without `parallel`, the panels are packed on the calling thread (`each_panel`).
    With `shared`, each group is that call instead: of the program's packing function
    of its kind (`mlc.lowering.cpu.shared_packing`).
    """
    source, map_ = mm.b, mm.maps[1]
    k, n = sizes
    count, extents = batch
    nr = tiles.nr
    zero_i, one, nr_v = b.index(0), b.index(1), b.index(nr)
    panels = b.ceildiv(n, nr_v)
    packed_type = MemRefType(mm.accumulator, [DYNAMIC_INDEX, DYNAMIC_INDEX, DYNAMIC_INDEX, nr])
    packed = b(memref.AllocOp([count, panels, k], [], packed_type, IntegerAttr(ALIGNMENT, i64)))
    share = b.ceildiv(panels, b.index(threads))
    group = b(arith.MaxSIOp(b.min(share, b.index(PACK_GROUP)), one))
    groups = b.ceildiv(panels, group)
    full_panels = b(arith.DivSIOp(n, nr_v))

    def panel_group(pb: Ops, t: SSAValue) -> None:
        flat, g = pb(arith.DivSIOp(t, groups)), pb(arith.RemSIOp(t, groups))
        # B indexed by no batch loop: any value for them reads the same panel
        batch_ivs = batch_indices(pb, flat, extents) if extents else [zero_i] * mm.batch
        p0 = pb.mul(g, group)
        p_end = pb.min(pb.add(p0, group), panels)
        if shared is not None:
            shared(pb, batch_ivs, (packed, flat), (p0, p_end), sizes)
            return

        def source_at(rb: Ops, kk: SSAValue, j: SSAValue) -> list[SSAValue]:
            return indices(rb, map_, [*batch_ivs, zero_i, kk, j])

        reader, writer = (source, source_at), (packed, flat)
        if mm.transposed_b:  # B[.., j, k]: read each column of each panel along k

            def columns(cb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                at = (cb.mul(p, nr_v), sizes)
                pack_columns(cb, reader, (packed, [flat, p]), at, nr)
                return []

            for_loop(pb, p0, p_end, one, columns)
            return
        pack_rows(pb, reader, writer, (p0, pb.min(p_end, full_panels), k), tiles)
        if ends_inside_panel(mm, tiles):
            partial = partial_panel(reader, writer, (full_panels, sizes), tiles)
            if_then(pb, less(pb, full_panels, p_end), partial)

    each_panel(b, b.mul(count, groups), panel_group, parallel)
    return packed


SourceAt = Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]


def pack_rows(
    b: Ops,
    source: tuple[SSAValue, SourceAt],
    packed: tuple[SSAValue, SSAValue],
    bounds: tuple[SSAValue, SSAValue, SSAValue],
    tiles: MatmulTiles,
) -> None:
    """`Bp[t, p, k, :] = B[k, p*NR : p*NR+NR]` for full panels `p` in [p0, p_end), row by
    row of B (k outer), a vector at a time."""
    (values, source_at), (target, t), (p0, p_end, k) = source, packed, bounds
    vector_type = VectorType(element_of(values), [tiles.vector])
    packed_type = VectorType(element_of(target), [tiles.vector])
    offsets = [b.index(offset) for offset in range(0, tiles.nr, tiles.vector)]
    nr = b.index(tiles.nr)

    def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        def panel(qb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            j0 = qb.mul(p, nr)
            for o in offsets:
                piece = qb(
                    quick_ops.vector_load(values, source_at(qb, kk, qb.add(j0, o)), vector_type)
                )
                piece = as_float(qb, piece, packed_type)
                qb.ops.append(quick_ops.store(piece, target, [t, p, kk, o]))
            return []

        for_loop(rb, p0, p_end, rb.index(1), panel)
        return []

    for_loop(b, b.index(0), k, b.index(1), row)


def partial_panel(
    source: tuple[SSAValue, SourceAt],
    packed: tuple[SSAValue, SSAValue],
    at: tuple[SSAValue, tuple[SSAValue, SSAValue]],
    tiles: MatmulTiles,
) -> Callable[[Ops], None]:
    """
    A builder of the last panel `p`, which ends past N: `Bp[t, p, k, jj] = B[k, p*NR +
    jj]` below N, 0 past it, each vector a masked load (a vector wholly past N loads
    nothing, so no address past the row is formed).
    """
    (values, source_at), (target, t), (p, (k, n)) = source, packed, at

    def build(b: Ops) -> None:
        vector_type = VectorType(element_of(values), [tiles.vector])
        packed_type = VectorType(element_of(target), [tiles.vector])
        mask_type = VectorType(i1, [tiles.vector])
        offsets = [b.index(offset) for offset in range(0, tiles.nr, tiles.vector)]
        j0 = b.mul(p, b.index(tiles.nr))
        starts = [b.add(j0, o) for o in offsets]
        masks = [b(vector.CreateMaskOp([b(arith.SubiOp(n, s))], mask_type)) for s in starts]
        nothing, packed_zero = zero(b, vector_type), zero(b, packed_type)

        def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            for o, start, mask in zip(offsets, starts, masks, strict=True):
                to = [t, p, kk, o]

                def load(lb: Ops, start: SSAValue = start, mask: SSAValue = mask) -> None:
                    at = source_at(lb, kk, start)
                    piece = lb(vector.MaskedLoadOp(values, at, mask, nothing))
                    piece = as_float(lb, piece, packed_type)
                    lb.ops.append(quick_ops.store(piece, target, to))

                def clear(cb: Ops, to: list[SSAValue] = to) -> None:
                    cb.ops.append(quick_ops.store(packed_zero, target, to))

                if_then(rb, less(rb, start, n), load, clear)
            return []

        for_loop(b, b.index(0), k, b.index(1), row)

    return build


def element_of(buffer: SSAValue) -> AnyFloat:
    """The float element type of a memref."""
    type_ = buffer.type
    assert isinstance(type_, MemRefType) and isinstance(type_.element_type, AnyFloat)
    return type_.element_type


def each_panel(
    b: Ops, count: SSAValue, panel: Callable[[Ops, SSAValue], None], parallel: bool
) -> None:
    """
    `panel(t)` for `t` in `[0, count)`: in an `scf.parallel`, or, for a kernel that runs
    as one task, in a loop on the calling thread, which then finds the panels in its
    own caches (and makes no call into the thread pool for them).
    """
    zero_i, one = b.index(0), b.index(1)
    if parallel:
        parallel_loop(b, zero_i, count, one, panel)
        return

    def serial(sb: Ops, t: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        panel(sb, t)
        return []

    for_loop(b, zero_i, count, one, serial)


# Depth of the k blocks `pack_columns` copies a column at a time: one 64-byte line of
# each row of B read, the NR-wide rows of the panel written (16 x 128 bytes at NR = 32)
# staying in L1 while every column of the panel fills them.
COLUMN_BLOCK = 16


def pack_columns(
    b: Ops,
    source: tuple[SSAValue, Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]],
    panel: tuple[SSAValue, list[SSAValue]],
    at: tuple[SSAValue, tuple[SSAValue, SSAValue]],
    nr: int,
) -> None:
    """
    `Bp[panel, kk, jj] = B[kk, j0 + jj]` (0 past N) from a B read along k (its last
    dim): a block of `COLUMN_BLOCK` k at a time, and in it column by column, each a
    contiguous run of B, written NR elements apart into rows of the panel that stay in
    L1 (column by column over all of K, the panel's K x NR rows went through L2 once per
    column: 64 x 1024 x 1024 with B transposed took twice the plain matmul's time). A
    column past N is a run of zeros, decided once per column.
    """
    (values, source_at), (packed, prefix), (j0, (k, n)) = source, panel, at
    zero_i, one = b.index(0), b.index(1)
    type_ = packed.type
    assert isinstance(type_, MemRefType) and isinstance(type_.element_type, AnyFloat)
    element = type_.element_type

    def block(kb: Ops, k0: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        k_end = kb.min(kb.add(k0, kb.index(COLUMN_BLOCK)), k)

        def column(cb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            j = cb.add(j0, jj)

            def copy(rb: Ops) -> None:
                def row(eb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    value = eb(quick_ops.load(values, source_at(eb, kk, j)))
                    value = as_float(eb, value, element)
                    eb.ops.append(quick_ops.store(value, packed, [*prefix, kk, jj]))
                    return []

                for_loop(rb, k0, k_end, one, row)

            def clear(rb: Ops) -> None:
                nothing = zero(rb, element)

                def row(eb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    eb.ops.append(quick_ops.store(nothing, packed, [*prefix, kk, jj]))
                    return []

                for_loop(rb, k0, k_end, one, row)

            if_then(cb, less(cb, j, n), copy, clear)
            return []

        for_loop(kb, zero_i, kb.index(nr), one, column)
        return []

    for_loop(b, zero_i, k, b.index(COLUMN_BLOCK), block)


AAt = Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]


def a_block_buffer(
    b: Ops, element: Attribute, rows: int, tiles: MatmulTiles, pack_a: bool
) -> tuple[SSAValue | None, list[Operation]]:
    """A task's buffer for its packed A block (`pack_a_block`), if it packs one, and its free."""
    if not pack_a:
        return None, []
    type_ = MemRefType(element, [-(-rows // tiles.mr), tiles.kc, tiles.mr])
    buffer = b(memref.AllocOp([], [], type_, IntegerAttr(ALIGNMENT, i64)))
    return buffer, [memref.DeallocOp.get(buffer)]


def pack_a_block(
    b: Ops,
    a: tuple[SSAValue, AAt],
    block: tuple[SSAValue | None, SSAValue, SSAValue],
    k_range: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
) -> SSAValue | None:
    """
    `Ap[q, k - k0, r] = A[min(i0 + q*MR + r, i_end - 1), k]` for the task's rows
    [i0, i_end) and `k` in `k_range`: each MR-row micro-panel of the A block contiguous
    along k, so the micro-kernel reads one stream instead of MR rows a K-stride apart.
    Nothing (None) for a task without a buffer for it.
    """
    (source, a_at), (packed, i0, i_end), (k0, k_end) = a, block, k_range
    if packed is None:
        return None
    zero_i, one, mr = b.index(0), b.index(1), b.index(tiles.mr)
    last_row = b(arith.SubiOp(i_end, one))

    def panel(pb: Ops, q: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        first = pb.add(i0, pb.mul(q, mr))
        rows = [pb.min(pb.add(first, pb.index(r)), last_row) for r in range(tiles.mr)]

        def column(cb: Ops, k: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            kk = cb(arith.SubiOp(k, k0))
            for r, row in enumerate(rows):
                value = cb(quick_ops.load(source, a_at(cb, row, k)))
                cb.ops.append(quick_ops.store(value, packed, [q, kk, cb.index(r)]))
            return []

        for_loop(pb, k0, k_end, one, column)
        return []

    for_loop(b, zero_i, b.ceildiv(b(arith.SubiOp(i_end, i0)), mr), one, panel)
    return packed

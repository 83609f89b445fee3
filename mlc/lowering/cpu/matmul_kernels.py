"""
The loop nests `linalg-tile` puts in place of a matmul generic on memrefs.

The kernel for `C += A @ B` (A: M x K, B: K x N, C: M x N, floats, row-major):

`matmul_nest`: the BLIS/GotoBLAS blocking with packed B and a register-blocked
micro-kernel (MR x NR accumulators live in vector registers across the k loop;
each step broadcasts one A value per row, loads NR/VL vectors of packed B and does
MR * NR/VL FMAs), for every batch of a batched matmul (`mlc.lowering.linalg.contraction`):

    Bp = alloc(T, P, K, NR)                       P = ceil(N / NR), zero-padded;
    scf.parallel (t, q) in [0, T) x [0, P) step Q: T = batches of B (1 if B is shared)
      for k, p in [0, K) x [q, q+Q):              Q <= 8 panels: 512 bytes of a row of B
        Bp[t, p, k, :] = B[t, k, p*NR : p*NR+NR]
    scf.parallel (t, i0, g) in [0, batches) x [0, M) step MCb x [0, G):  one flat loop
      Ap = alloc(MCb/MR, KC, MR)                  (when A is packed)
      for k0 in [0, K) step KC:                   Bp[t, p, k0:k0+KC] stays in L1
        Ap[q, kk, r] = A[t, i0 + q*MR + r, k0 + kk]     the task's A block, in L2
        for p in [g*P/G, (g+1)*P/G):              the task's group of panels
          for i in [i0, min(i0+MCb, M)) step MR:
            acc = micro_kernel(Ap[(i-i0)/MR], Bp[t, p, k0:k0+KC])
            C[t, i:i+MR, p*NR : p*NR+NR] += acc   (rows < M, columns < N; `=` on the
                                                   first K block when C held zeros)
            if k0 + KC >= K: C[t, tile] = epilogue(C[t, tile])   (if the generic has one)

A's block is packed into MR-row micro-panels, contiguous along k, when B has enough
panels and A long enough rows to repay the copy (`tiling_model.packs_a`): unpacked,
the micro-kernel reads MR rows a K-stride apart, which share cache sets when that
stride is a multiple of 4 KiB (1024 x 1024 ran at 0.86x the packed speed); otherwise
the kernel reads A in place. A rows past M are read as row M-1 (the results are
dropped), so A needs no padding; in a column tile past N only the lanes below N are
loaded and stored (masked vector loads and stores, `vmaskmovps` on AVX2). The tasks
are blocks of MCb rows (`tiling_model.matmul_split`; for a dynamic M computed when
the kernel runs), and, where M fits one block but its row tiles split unevenly among
the threads, groups of G adjacent panels instead. A and B are read through their
maps, so a transposed A (`A[k, i]`) needs nothing more, and a transposed B (`B[j, k]`)
is packed a column at a time along k.
Narrow floats (f16) are summed in f32 (`Matmul.accumulator`), as numpy sums an f16
matmul: B is packed widened to f32 (`vcvtph2ps` with F16C), each A value is widened as
it is broadcast, and C is widened to add to and rounded once as it is stored. So that
the sums are rounded only once, the K loop makes one block of all of K (the f32 panel,
K x NR, then lives in L2 rather than L1), and A is read in place, not packed.
When B is a constant weight, `Bp` is a global packed at compile time
(`mlc.lowering.cpu.constant_panels`). The epilogue runs on each MR x NR tile right after
its last K block, while it is in L1.

It is a pure IR builder: it returns the ops, and the pattern inserts them.
"""

from collections.abc import Callable, Sequence
from functools import partial

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
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.cpu.constant_panels import get_panels
from mlc.lowering.linalg.contraction import Image
from mlc.lowering.linalg.contraction import Epilogue, Matmul, indices
from mlc.lowering.support.loop_builder import (
    Ops,
    affine_index,
    as_float,
    collapse_trailing,
    for_loop,
    if_then,
    less,
    parallel_loop,
    zero,
)
from mlc.tiling_model import TASK_FLOPS, MatmulTiles, TaskSplit

__all__ = ["Ops", "matmul_nest", "pack_b"]

ALIGNMENT = 64

# Adjacent panels `pack_b` packs per parallel iteration: 128 floats, 512 bytes of each
# row of B at a time.
PACK_GROUP = 8


def _batch_indices(b: Ops, flat: SSAValue, extents: Sequence[SSAValue]) -> list[SSAValue]:
    """The batch loop values of a flat batch number (row-major over `extents`)."""
    values: list[SSAValue] = []
    for extent in reversed(extents):
        values.append(b(arith.RemSIOp(flat, extent)))
        flat = b(arith.DivSIOp(flat, extent))
    return values[::-1]


def _b_is_batched(mm: Matmul) -> bool:
    if mm.image is not None:
        return True  # every batch convolves its own image
    return any(isinstance(e, AffineDimExpr) and e.position < mm.batch for e in mm.maps[1].results)


def pack_b(
    b: Ops,
    mm: Matmul,
    sizes: tuple[SSAValue, SSAValue],
    batch: tuple[SSAValue, Sequence[SSAValue]],
    tiles: MatmulTiles,
    threads: int = 1,
    parallel: bool = True,
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
    Without `parallel`, the panels are packed on the calling thread (`_each_panel`).
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
        batch_ivs = _batch_indices(pb, flat, extents) if extents else [zero_i] * mm.batch
        p0 = pb.mul(g, group)
        p_end = pb.min(pb.add(p0, group), panels)

        def source_at(rb: Ops, kk: SSAValue, j: SSAValue) -> list[SSAValue]:
            return indices(rb, map_, [*batch_ivs, zero_i, kk, j])

        reader, writer = (source, source_at), (packed, flat)
        if mm.transposed_b:  # B[.., j, k]: read each column of each panel along k

            def columns(cb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                at = (cb.mul(p, nr_v), sizes)
                _pack_columns(cb, reader, (packed, [flat, p]), at, nr)
                return []

            for_loop(pb, p0, p_end, one, columns)
            return
        _pack_rows(pb, reader, writer, (p0, pb.min(p_end, full_panels), k), tiles)
        if _ragged(mm, tiles):
            partial = _partial_panel(reader, writer, (full_panels, sizes), tiles)
            if_then(pb, less(pb, full_panels, p_end), partial)

    _each_panel(b, b.mul(count, groups), panel_group, parallel)
    return packed


SourceAt = Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]


def _pack_rows(
    b: Ops,
    source: tuple[SSAValue, SourceAt],
    packed: tuple[SSAValue, SSAValue],
    bounds: tuple[SSAValue, SSAValue, SSAValue],
    tiles: MatmulTiles,
) -> None:
    """`Bp[t, p, k, :] = B[k, p*NR : p*NR+NR]` for full panels `p` in [p0, p_end), row by
    row of B (k outer), a vector at a time."""
    (values, source_at), (target, t), (p0, p_end, k) = source, packed, bounds
    vector_type = VectorType(_element_of(values), [tiles.vector])
    packed_type = VectorType(_element_of(target), [tiles.vector])
    offsets = [b.index(offset) for offset in range(0, tiles.nr, tiles.vector)]
    nr = b.index(tiles.nr)

    def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        def panel(qb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            j0 = qb.mul(p, nr)
            for o in offsets:
                piece = qb(vector.LoadOp(values, source_at(qb, kk, qb.add(j0, o)), vector_type))
                piece = as_float(qb, piece, packed_type)
                qb.ops.append(vector.StoreOp(piece, target, [t, p, kk, o]))
            return []

        for_loop(rb, p0, p_end, rb.index(1), panel)
        return []

    for_loop(b, b.index(0), k, b.index(1), row)


def _partial_panel(
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
        vector_type = VectorType(_element_of(values), [tiles.vector])
        packed_type = VectorType(_element_of(target), [tiles.vector])
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
                    lb.ops.append(vector.StoreOp(piece, target, to))

                def clear(cb: Ops, to: list[SSAValue] = to) -> None:
                    cb.ops.append(vector.StoreOp(packed_zero, target, to))

                if_then(rb, less(rb, start, n), load, clear)
            return []

        for_loop(b, b.index(0), k, b.index(1), row)

    return build


def _element_of(buffer: SSAValue) -> AnyFloat:
    """The float element type of a memref."""
    type_ = buffer.type
    assert isinstance(type_, MemRefType) and isinstance(type_.element_type, AnyFloat)
    return type_.element_type


def _each_panel(
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


def _pack_columns(
    b: Ops,
    source: tuple[SSAValue, Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]],
    panel: tuple[SSAValue, list[SSAValue]],
    at: tuple[SSAValue, tuple[SSAValue, SSAValue]],
    nr: int,
) -> None:
    """
    `Bp[panel, kk, jj] = B[kk, j0 + jj]` (0 past N) from a B read along k (its last
    dim): column by column, each a contiguous run of B, written NR elements apart.
    """
    (values, source_at), (packed, prefix), (j0, (k, n)) = source, panel, at
    zero_i, one = b.index(0), b.index(1)
    last = b(arith.SubiOp(n, one))
    type_ = packed.type
    assert isinstance(type_, MemRefType) and isinstance(type_.element_type, AnyFloat)
    element = type_.element_type

    def column(cb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        j = cb.add(j0, jj)
        inside, clamped = less(cb, j, n), cb.min(j, last)

        def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            value = rb(memref.LoadOp.get(values, source_at(rb, kk, clamped)))
            value = as_float(rb, value, element)
            value = rb(arith.SelectOp(inside, value, zero(rb, element)))
            rb.ops.append(memref.StoreOp.get(value, packed, [*prefix, kk, jj]))
            return []

        for_loop(cb, zero_i, k, one, row)
        return []

    for_loop(b, zero_i, b.index(nr), one, column)


def pack_image(
    b: Ops,
    mm: Matmul,
    sizes: tuple[SSAValue, SSAValue],
    batch: tuple[SSAValue, Sequence[SSAValue]],
    tiles: MatmulTiles,
    parallel: bool = True,
) -> SSAValue:
    """
    `Bp[t, p, k, jj] = X'[t, k, p*NR + jj]` (0 past N) for a convolution: each element
    read from the image through its map, the convolution's loops rebuilt from the batch,
    the column (its spatial loops) and the reduction loops (`mlc.lowering.cpu.conv_gemm`).
    """
    image = mm.image
    assert image is not None
    k, n = sizes
    count, extents = batch
    nr = tiles.nr
    zero_i, one, nr_v = b.index(0), b.index(1), b.index(nr)
    panels = b.ceildiv(n, nr_v)
    packed_type = MemRefType(mm.accumulator, [DYNAMIC_INDEX, DYNAMIC_INDEX, DYNAMIC_INDEX, nr])
    packed = b(memref.AllocOp([count, panels, k], [], packed_type, IntegerAttr(ALIGNMENT, i64)))
    last = b(arith.SubiOp(n, one))
    loop_count = image.map.num_dims
    rank_w, rank_y = len(_shape(image.weight)), len(_shape(image.output))
    reduction_sizes = [
        b.dim(image.weight, d) for d in range(rank_w - len(image.reductions), rank_w)
    ]
    spatial_sizes = [b.dim(image.output, d) for d in range(rank_y - len(image.spatial), rank_y)]

    vector_type = VectorType(mm.element, [tiles.vector])

    def panel(pb: Ops, t: SSAValue) -> None:
        flat, p = pb(arith.DivSIOp(t, panels)), pb(arith.RemSIOp(t, panels))
        loops: list[SSAValue] = [zero_i] * loop_count
        for d, value in zip(image.prefix, _batch_indices(pb, flat, extents), strict=True):
            loops[d] = value
        j0 = pb.mul(p, nr_v)

        def column(cb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            j = cb.add(j0, jj)
            inside = less(cb, j, n)
            at = _at_column(cb, image, loops, cb.min(j, last), spatial_sizes)

            def element(rb: Ops, kk: SSAValue) -> None:
                index = [affine_index(rb, e, at) for e in image.map.results]
                value = as_float(rb, rb(memref.LoadOp.get(image.source, index)), mm.accumulator)
                value = rb(arith.SelectOp(inside, value, zero(rb, mm.accumulator)))
                rb.ops.append(memref.StoreOp.get(value, packed, [flat, p, kk, jj]))

            _over_reductions(cb, image, reduction_sizes, at, element)
            return []

        def by_columns(cb: Ops) -> None:
            for_loop(cb, zero_i, nr_v, one, column)

        if not image.rows_contiguous():
            by_columns(pb)
            return

        # Each vector of the panel in one output row (the panel may span rows, as
        # with 8-wide rows): each k reads VL contiguous image elements per vector.
        fits, starts = _row_vectors(pb, image, loops, (j0, n), spatial_sizes, tiles)

        def vectors(vb: Ops) -> None:
            def piece(rb: Ops, kk: SSAValue) -> None:
                for o, at in starts:
                    value = rb(
                        vector.LoadOp(
                            image.source, _vector_start(rb, image, at, starts[0][1]), vector_type
                        )
                    )
                    value = as_float(rb, value, VectorType(mm.accumulator, [tiles.vector]))
                    rb.ops.append(vector.StoreOp(value, packed, [flat, p, kk, o]))

            _over_reductions(vb, image, reduction_sizes, starts[0][1], piece)

        if_then(pb, fits, vectors, by_columns)

    _each_panel(b, b.mul(count, panels), panel, parallel)
    return packed


def _row_vectors(
    b: Ops,
    image: Image,
    loops: Sequence[SSAValue],
    columns: tuple[SSAValue, SSAValue],
    sizes: Sequence[SSAValue],
    tiles: MatmulTiles,
) -> tuple[SSAValue, list[tuple[SSAValue, list[SSAValue]]]]:
    """
    Each VL-wide vector of the panel from column `j0` of X' (N columns): its offset in
    the panel and the convolution's loops at its first column; and whether the panel
    lies below N and each of its vectors within one output row (`sizes[-1]` wide).
    """
    (j0, n), last = columns, b(arith.SubiOp(columns[1], b.index(1)))
    vl = b.index(tiles.vector)
    fits = b(arith.CmpiOp(b.add(j0, b.index(tiles.nr)), n, "sle"))
    starts: list[tuple[SSAValue, list[SSAValue]]] = []
    for offset in range(0, tiles.nr, tiles.vector):
        o = b.index(offset)
        at = _at_column(b, image, loops, b.min(b.add(j0, o), last), sizes)
        in_row = b(arith.CmpiOp(b.add(at[image.spatial[-1]], vl), sizes[-1], "sle"))
        fits = b(arith.AndIOp(fits, in_row))
        starts.append((o, at))
    return fits, starts


def _vector_start(
    b: Ops, image: Image, at: list[SSAValue], first: Sequence[SSAValue]
) -> list[SSAValue]:
    """The image index of a vector at loops `at`, its reduction loops those of `first`."""
    for d in image.reductions:
        at[d] = first[d]
    return [affine_index(b, e, at) for e in image.map.results]


def _at_column(
    b: Ops, image: Image, loops: Sequence[SSAValue], j: SSAValue, sizes: Sequence[SSAValue]
) -> list[SSAValue]:
    """`loops` with the spatial loops set to those of column `j` of X'."""
    at = list(loops)
    for d, value in zip(image.spatial, _batch_indices(b, j, sizes), strict=True):
        at[d] = value
    return at


def _over_reductions(
    b: Ops,
    image: Image,
    sizes: Sequence[SSAValue],
    at: list[SSAValue],
    body: Callable[[Ops, SSAValue], None],
) -> None:
    """`body(kk)` in loops over the convolution's reduction loops (set in `at`), with
    `kk` their row-major flat number: the row of X' they make."""

    def nest(level: int, rb: Ops, kk: SSAValue) -> None:
        if level == len(image.reductions):
            body(rb, kk)
            return

        def step(sb: Ops, r: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            at[image.reductions[level]] = r
            nest(level + 1, sb, sb.add(sb.mul(kk, sizes[level]), r))
            return []

        for_loop(rb, rb.index(0), sizes[level], rb.index(1), step)

    nest(0, b, b.index(0))


AAt = Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]
RowAt = Callable[[Ops, int, SSAValue], list[SSAValue]]


def _micro_kernel(
    b: Ops,
    a: tuple[SSAValue, RowAt],
    panel: tuple[SSAValue, SSAValue, SSAValue],
    k_range: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    vector_type: VectorType,
) -> Sequence[SSAValue]:
    """MR x NR/VL vector accumulators over `k` in `k_range`: the FMA loop. `a` is A (or
    its packed block) and the indices of row `r` (0 <= r < MR) of the tile at `k`."""
    source, a_at = a
    packed, t, p = panel
    lanes = tiles.nr // tiles.vector
    start = zero(b, vector_type)
    offsets = [b.index(v * tiles.vector) for v in range(lanes)]

    def step(kb: Ops, k: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
        loaded = [kb(vector.LoadOp(packed, [t, p, k, o], vector_type)) for o in offsets]
        out: list[SSAValue] = []
        for r in range(tiles.mr):
            value = kb(memref.LoadOp.get(source, a_at(kb, r, k)))
            value = as_float(kb, value, vector_type.element_type)
            value = kb(vector.BroadcastOp(value, vector_type))
            out += [kb(vector.FMAOp(value, loaded[v], acc[r * lanes + v])) for v in range(lanes)]
        return out

    return for_loop(b, *k_range, b.index(1), step, [start] * (tiles.mr * lanes))


def _a_buffer(
    b: Ops, element: Attribute, rows: int, tiles: MatmulTiles, pack_a: bool
) -> tuple[SSAValue | None, list[Operation]]:
    """A task's buffer for its packed A block (`_pack_a`), if it packs one, and its free."""
    if not pack_a:
        return None, []
    type_ = MemRefType(element, [-(-rows // tiles.mr), tiles.kc, tiles.mr])
    buffer = b(memref.AllocOp([], [], type_, IntegerAttr(ALIGNMENT, i64)))
    return buffer, [memref.DeallocOp.get(buffer)]


def _pack_a(
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
                value = cb(memref.LoadOp.get(source, a_at(cb, row, k)))
                cb.ops.append(memref.StoreOp.get(value, packed, [q, kk, cb.index(r)]))
            return []

        for_loop(pb, k0, k_end, one, column)
        return []

    for_loop(b, zero_i, b.ceildiv(b(arith.SubiOp(i_end, i0)), mr), one, panel)
    return packed


def _a_reader(
    b: Ops,
    a: tuple[SSAValue, AAt],
    a_block: SSAValue | None,
    tile: tuple[SSAValue, SSAValue],
    task: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
) -> tuple[SSAValue, RowAt]:
    """
    Where the micro-kernel reads row `r` of the MR-row tile at row `i`, for `k` in the K
    block from `k0`: micro-panel `(i - i0) / MR` of the packed block, or A itself (rows
    past M read as the task's last row, `last_row`).
    """
    (source, a_at), (i, k0), (i0, last_row) = a, tile, task
    if a_block is not None:
        q = b(arith.DivSIOp(b(arith.SubiOp(i, i0)), b.index(tiles.mr)))
        return a_block, lambda rb, r, k: [q, rb(arith.SubiOp(k, k0)), rb.index(r)]
    rows = [b.min(b.add(i, b.index(r)), last_row) for r in range(tiles.mr)]
    return source, lambda rb, r, k: a_at(rb, rows[r], k)


CAt = Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]


def _write_back(
    b: Ops,
    c: tuple[SSAValue, CAt],
    acc: Sequence[SSAValue],
    tile: tuple[SSAValue, SSAValue],
    sizes: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    accumulate: bool,
    ragged: bool = True,
) -> None:
    """
    `C[i + r, j0 + jj] (+)= acc` for the rows below M and the columns below N (all
    of the tile's columns unless `ragged`: N may end inside a panel).
    """
    i, j0 = tile
    m, n = sizes
    vector_type = acc[0].type
    assert isinstance(vector_type, VectorType)
    lanes = tiles.nr // tiles.vector
    offsets = [b.index(v * tiles.vector) for v in range(lanes)]
    row_ids = [b.add(i, b.index(r)) for r in range(tiles.mr)]
    full = b(arith.CmpiOp(b.add(j0, b.index(tiles.nr)), n, "sle"))

    def vectors(vb: Ops) -> None:
        for r, row in enumerate(row_ids):
            columns = [(acc[r * lanes + v], offsets[v]) for v in range(lanes)]
            store = _store_row(c, row, j0, columns, accumulate)
            if_then(vb, less(vb, row, m), store)

    def masked(mb: Ops) -> None:
        # The last panel, past N: each vector stores the lanes below N (a masked store);
        # a vector wholly past N is skipped, so no address beyond the row is formed.
        starts = [mb.add(j0, offset) for offset in offsets]
        masks = [mb(vector.CreateMaskOp([mb(arith.SubiOp(n, s))], mask_type)) for s in starts]
        for r, row in enumerate(row_ids):

            def store(ub: Ops, r: int = r, row: SSAValue = row) -> None:
                for v in range(lanes):
                    put = _masked_store(c, row, starts[v], masks[v], acc[r * lanes + v], accumulate)
                    if v == 0:
                        put(ub)
                    else:
                        if_then(ub, less(ub, starts[v], n), put)

            if_then(mb, less(mb, row, m), store)

    mask_type = VectorType(i1, [tiles.vector])
    if ragged:
        if_then(b, full, vectors, masked)
    else:
        vectors(b)


def _store_row(
    c: tuple[SSAValue, CAt],
    row: SSAValue,
    j0: SSAValue,
    columns: Sequence[tuple[SSAValue, SSAValue]],
    accumulate: bool,
) -> Callable[[Ops], None]:
    """A builder of `C[row, j0 + offset : +VL] (+)= value` for each (value, offset)."""
    target, c_at = c

    def build(ub: Ops) -> None:
        for value, offset in columns:
            at = c_at(ub, row, ub.add(j0, offset))
            stored = _c_vector(target, value)
            if accumulate:
                old = ub(vector.LoadOp(target, at, stored))
                value = ub(arith.AddfOp(as_float(ub, old, value.type), value))
            ub.ops.append(vector.StoreOp(as_float(ub, value, stored), target, at))

    return build


def _masked_store(
    c: tuple[SSAValue, CAt],
    row: SSAValue,
    column: SSAValue,
    mask: SSAValue,
    value: SSAValue,
    accumulate: bool,
) -> Callable[[Ops], None]:
    """A builder of `C[row, column : +VL] (+)= value` in the lanes `mask` sets."""
    target, c_at = c

    def build(ub: Ops) -> None:
        at = c_at(ub, row, column)
        stored = _c_vector(target, value)
        result = value
        if accumulate:
            old = ub(vector.MaskedLoadOp(target, at, mask, zero(ub, stored)))
            result = ub(arith.AddfOp(as_float(ub, old, value.type), value))
        ub.ops.append(vector.MaskedStoreOp(target, at, mask, as_float(ub, result, stored)))

    return build


def _c_vector(target: SSAValue, acc: SSAValue) -> VectorType:
    """The vector of C's elements as wide as the accumulator vector `acc`."""
    type_ = acc.type
    assert isinstance(type_, VectorType)
    return VectorType(_element_of(target), type_.get_shape())


def _over_tile(
    b: Ops,
    tile: tuple[SSAValue, SSAValue],
    sizes: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    body: Callable[[Ops, SSAValue, SSAValue], None],
) -> None:
    """`body(r, jj)` over the part of the MR x NR tile at `tile` that lies inside M x N."""
    (i, j0), (m, n) = tile, sizes
    rows = b.min(b(arith.SubiOp(m, i)), b.index(tiles.mr))
    width = b.min(b(arith.SubiOp(n, j0)), b.index(tiles.nr))

    def row(rb: Ops, r: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        def column(cb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            body(cb, r, jj)
            return []

        for_loop(rb, rb.index(0), width, rb.index(1), column)
        return []

    for_loop(b, b.index(0), rows, b.index(1), row)


def _finish(
    epilogue: Epilogue,
    b: Ops,
    c: tuple[SSAValue, CAt],
    batch_ivs: Sequence[SSAValue],
    tile: tuple[SSAValue, SSAValue],
    sizes: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
) -> None:
    """Apply the epilogue to the finished tile of C, in place, while it is in L1."""
    target, c_at = c
    i, j0 = tile

    def element_at(eb: Ops, r: SSAValue, jj: SSAValue) -> None:
        row, column = eb.add(i, r), eb.add(j0, jj)
        at = c_at(eb, row, column)
        value = eb(memref.LoadOp.get(target, at))
        loops = [*batch_ivs, row, eb.index(0), column]
        eb.ops.append(memref.StoreOp.get(epilogue.apply(eb, loops, value), target, at))

    _over_tile(b, tile, sizes, tiles, element_at)


def matmul_nest(
    mm: Matmul,
    tiles: MatmulTiles,
    split: TaskSplit,
    overwrite: bool = False,
    panels: memref.GlobalOp | None = None,
    pack_a: bool = False,
    one_task: bool = False,
) -> list[Operation]:
    """
    The packed, register-blocked `C += A @ B` (see the module docstring), for each batch,
    then `mm`'s epilogue on each finished tile, in the tasks `split` says. With
    `overwrite`, the first K block stores into C instead of adding to it (C held zeros,
    which need not be written). `panels` is B already packed, at compile time
    (`mlc.lowering.cpu.constant_panels`). With `pack_a`, each task packs its block of A for
    each K block (`_pack_a`). With `one_task` (the kernel runs as a single task), B is
    packed on the calling thread.
    """
    b = Ops()
    a, c = _matrices(b, mm)
    ragged = _ragged(mm, tiles)
    epilogue = mm.epilogue.viewed(b) if mm.epilogue is not None else None
    vector_type = VectorType(mm.accumulator, [tiles.vector])
    rank_c = len(_shape(c))
    m, k = b.dim(a, mm.dim_of(0, "i")), b.dim(a, mm.dim_of(0, "k"))
    n = b.dim(c, rank_c - 1)
    extents = [b.dim(c, d) for d in range(mm.batch)]
    batches = _product(b, extents)
    packed_batches = (batches, extents) if _b_is_batched(mm) else (b.index(1), [])
    blocking = (tiles, split.threads)
    packed, free = _packed(b, mm, (k, n), packed_batches, blocking, panels, not one_task)
    zero_i, one = b.index(0), b.index(1)
    # Narrow elements are summed over all of K in one block: rounded once (module docstring).
    depth = b(arith.MaxSIOp(k, one)) if mm.narrow else b.index(tiles.kc)
    panels = b.ceildiv(n, b.index(tiles.nr))
    last_row = b(arith.SubiOp(m, one))
    rows_per_task = _rows_per_task(b, m, split, tiles)
    groups = b.index(split.column_groups)
    group_panels = b.ceildiv(panels, groups)
    blocks = b.ceildiv(m, rows_per_task)
    per_batch = b.mul(blocks, groups)

    def task(tb: Ops, t: SSAValue) -> None:
        flat, rest = tb(arith.DivSIOp(t, per_batch)), tb(arith.RemSIOp(t, per_batch))
        batch_ivs = _batch_indices(tb, flat, extents)
        packed_t = flat if _b_is_batched(mm) else zero_i
        i0 = tb.mul(tb(arith.DivSIOp(rest, groups)), rows_per_task)
        i_end = tb.min(tb.add(i0, rows_per_task), m)
        p0 = tb.mul(tb(arith.RemSIOp(rest, groups)), group_panels)
        p_end = tb.min(tb.add(p0, group_panels), panels)

        def a_at(ab: Ops, row: SSAValue, kk: SSAValue) -> list[SSAValue]:
            return indices(ab, mm.maps[0], [*batch_ivs, row, kk, zero_i])

        def c_at(cb: Ops, row: SSAValue, column: SSAValue) -> list[SSAValue]:
            return indices(cb, mm.maps[2], [*batch_ivs, row, zero_i, column])

        def block_of_k(db: Ops, k0: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            k_end = db.min(db.add(k0, depth), k)
            a_block = _pack_a(db, (a, a_at), (a_buffer, i0, i_end), (k0, k_end), tiles)

            def panel(pb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                j0 = pb.mul(p, pb.index(tiles.nr))

                def block(bb: Ops, i: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    reader = _a_reader(bb, (a, a_at), a_block, (i, k0), (i0, last_row), tiles)
                    panel_at = (packed, packed_t, p)
                    acc = _micro_kernel(bb, reader, panel_at, (k0, k_end), tiles, vector_type)

                    def write(accumulate: bool) -> Callable[[Ops], None]:
                        return lambda wb: _write_back(
                            wb, (c, c_at), acc, (i, j0), (m, n), tiles, accumulate, ragged
                        )

                    if overwrite:  # C holds no zeros: the first K block stores
                        if_then(bb, bb(arith.CmpiOp(k0, zero_i, "eq")), write(False), write(True))
                    else:
                        write(True)(bb)
                    if epilogue is not None:
                        finish = partial(_finish, epilogue, c=(c, c_at), batch_ivs=batch_ivs)
                        last = bb(arith.CmpiOp(k_end, k, "eq"))
                        if_then(
                            bb, last, lambda fb: finish(fb, tile=(i, j0), sizes=(m, n), tiles=tiles)
                        )
                    return []

                for_loop(pb, i0, i_end, pb.index(tiles.mr), block)
                return []

            for_loop(db, p0, p_end, one, panel)
            return []

        rows = tiles.mc if split.rows is None else split.rows
        a_buffer, free_a = _a_buffer(tb, mm.accumulator, rows, tiles, pack_a and not mm.narrow)
        for_loop(tb, zero_i, k, depth, block_of_k)
        tb.ops += free_a

    parallel_loop(b, zero_i, b.mul(batches, per_batch), one, task)
    b.ops += free
    return b.ops


def _ragged(mm: Matmul, tiles: MatmulTiles) -> bool:
    """Whether N may end inside a column panel (it is dynamic or not a multiple of NR)."""
    n = mm.sizes[1]
    return n is None or n % tiles.nr != 0


def _rows_per_task(b: Ops, m: SSAValue, split: TaskSplit, tiles: MatmulTiles) -> SSAValue:
    """
    `split.rows`, or for a dynamic M the rows `tiling_model.balanced_rows` would give,
    computed at run time: tasks of at most MC rows, as many as a multiple of the
    threads, fewer where a task would be worth less than `TASK_FLOPS`.
    """
    if split.rows is not None:
        return b.index(split.rows)
    one, threads, mr = b.index(1), b.index(split.threads), b.index(tiles.mr)
    tasks = b.mul(b.ceildiv(b.ceildiv(m, b.index(tiles.mc)), threads), threads)
    if split.row_flops:
        worth = b(arith.DivSIOp(b.mul(m, b.index(split.row_flops)), b.index(TASK_FLOPS)))
        rounded = b.mul(b(arith.DivSIOp(worth, threads)), threads)
        capped = b(arith.SelectOp(less(b, worth, threads), worth, rounded))
        tasks = b(arith.SelectOp(less(b, worth, tasks), capped, tasks))
    tasks = b(arith.MaxSIOp(tasks, one))
    rows = b.mul(b.ceildiv(b.ceildiv(m, tasks), mr), mr)
    return b(arith.MaxSIOp(b.min(rows, b.index(tiles.mc)), mr))


def _packed(
    b: Ops,
    mm: Matmul,
    sizes: tuple[SSAValue, SSAValue],
    batch: tuple[SSAValue, Sequence[SSAValue]],
    blocking: tuple[MatmulTiles, int],
    panels: memref.GlobalOp | None,
    parallel: bool,
) -> tuple[SSAValue, list[Operation]]:
    """
    B's panels: read from the global packed at compile time, else packed now into a
    buffer; and the ops that free it once the kernel is done.
    """
    if panels is not None:
        return b(get_panels(panels)), []
    tiles, threads = blocking
    if mm.image is None:
        packed = pack_b(b, mm, sizes, batch, tiles, threads, parallel)
    else:
        packed = pack_image(b, mm, sizes, batch, tiles, parallel)
    return packed, [memref.DeallocOp.get(packed)]


def _matrices(b: Ops, mm: Matmul) -> tuple[SSAValue, SSAValue]:
    """A and C; for a convolution, the weight and the output as (batches of) matrices."""
    if mm.image is None:
        return mm.a, mm.c
    a = collapse_trailing(b, mm.a, len(_shape(mm.a)) - len(mm.image.reductions))
    return a, collapse_trailing(b, mm.c, len(_shape(mm.c)) - len(mm.image.spatial))


def _product(b: Ops, values: Sequence[SSAValue]) -> SSAValue:
    result = b.index(1)
    for value in values:
        result = b.mul(result, value)
    return result


def _shape(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    assert isinstance(type_, MemRefType)
    return type_.get_shape()

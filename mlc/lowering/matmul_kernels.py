"""
The loop nests `linalg-tile` puts in place of a matmul generic on memrefs.

The kernel for `C += A @ B` (A: M x K, B: K x N, C: M x N, floats, row-major):

`matmul_nest`: the BLIS/GotoBLAS blocking with packed B and a register-blocked
micro-kernel (MR x NR accumulators live in vector registers across the k loop;
each step broadcasts one A value per row, loads NR/VL vectors of packed B and does
MR * NR/VL FMAs), for every batch of a batched matmul (`mlc.lowering.contraction`):

    Bp = alloc(T, P, K, NR)                       P = ceil(N / NR), zero-padded;
    scf.parallel (t, p) in [0, T) x [0, P):       T = batches of B (1 if B is shared)
      Bp[t, p, k, :] = B[t, k, p*NR : p*NR+NR]
    scf.parallel (t, i0) in [0, batches) x [0, M) step MCb:   one flat loop of tasks
      Ap = alloc(MCb/MR, KC, MR)                  (when A is packed)
      for k0 in [0, K) step KC:                   Bp[t, p, k0:k0+KC] stays in L1
        Ap[q, kk, r] = A[t, i0 + q*MR + r, k0 + kk]     the task's A block, in L2
        for p in [0, P):
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
dropped), so A needs no padding; a column tile past N goes through a small stack
buffer. A and B are read through their maps, so a transposed A (`A[k, i]`) needs
nothing more, and a transposed B (`B[j, k]`) is packed a column at a time along k.
When B is a constant weight, `Bp` is a global packed at compile time
(`mlc.lowering.constant_panels`). The epilogue runs on each MR x NR tile right after
its last K block, while it is in L1.

It is a pure IR builder: it returns the ops, and the pattern inserts them.
"""

from collections.abc import Callable, Sequence
from functools import partial

from xdsl.dialects import arith, llvm, memref, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IntegerAttr,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.constant_panels import get_panels
from mlc.lowering.contraction import Epilogue, Matmul, indices
from mlc.lowering.conv_gemm import Image
from mlc.lowering.loop_builder import (
    Ops,
    affine_index,
    collapse_trailing,
    for_loop,
    if_then,
    less,
    parallel_loop,
    zero,
)
from mlc.tiling_model import MatmulTiles

__all__ = ["Ops", "matmul_nest", "pack_b"]

ALIGNMENT = 64


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
    parallel: bool = True,
) -> SSAValue:
    """
    `Bp[t, p, k, jj] = B[batch(t), k, p*NR + jj]` (0 past N), one panel of one batch per
    parallel iteration: full panels are copied a vector at a time, the last, partial one
    element by element. `batch` is the number of batches packed and their extents.
    Without `parallel`, the panels are packed on the calling thread (`_each_panel`).
    """
    source, map_ = mm.b, mm.maps[1]
    k, n = sizes
    count, extents = batch
    element = mm.element
    nr = tiles.nr
    vector_type = VectorType(element, [tiles.vector])
    zero_i, one, nr_v = b.index(0), b.index(1), b.index(nr)
    panels = b.ceildiv(n, nr_v)
    packed_type = MemRefType(element, [DYNAMIC_INDEX, DYNAMIC_INDEX, DYNAMIC_INDEX, nr])
    packed = b(memref.AllocOp([count, panels, k], [], packed_type, IntegerAttr(ALIGNMENT, i64)))
    last = b(arith.SubiOp(n, one))

    def panel(pb: Ops, t: SSAValue) -> None:
        flat, p = pb(arith.DivSIOp(t, panels)), pb(arith.RemSIOp(t, panels))
        # B indexed by no batch loop: any value for them reads the same panel
        batch_ivs = _batch_indices(pb, flat, extents) if extents else [zero_i] * mm.batch
        j0 = pb.mul(p, nr_v)

        def source_at(rb: Ops, kk: SSAValue, j: SSAValue) -> list[SSAValue]:
            return indices(rb, map_, [*batch_ivs, zero_i, kk, j])

        def full(fb: Ops) -> None:
            def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                for offset in range(0, nr, tiles.vector):
                    o = rb.index(offset)
                    piece = rb(vector.LoadOp(source, source_at(rb, kk, rb.add(j0, o)), vector_type))
                    rb.ops.append(vector.StoreOp(piece, packed, [flat, p, kk, o]))
                return []

            for_loop(fb, zero_i, k, one, row)

        def partial(qb: Ops) -> None:
            def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                def lane(lb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    j = lb.add(j0, jj)
                    value = lb(memref.LoadOp.get(source, source_at(lb, kk, lb.min(j, last))))
                    value = lb(arith.SelectOp(less(lb, j, n), value, zero(lb, element)))
                    lb.ops.append(memref.StoreOp.get(value, packed, [flat, p, kk, jj]))
                    return []

                for_loop(rb, zero_i, nr_v, one, lane)
                return []

            for_loop(qb, zero_i, k, one, row)

        if mm.transposed_b:  # B[.., j, k]: read each column of the panel along k
            _pack_columns(pb, (source, source_at), (packed, [flat, p]), (j0, sizes), nr)
        else:
            if_then(pb, pb(arith.CmpiOp(pb.add(j0, nr_v), n, "sle")), full, partial)

    _each_panel(b, b.mul(count, panels), panel, parallel)
    return packed


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
    the column (its spatial loops) and the reduction loops (`mlc.lowering.conv_gemm`).
    """
    image = mm.image
    assert image is not None
    k, n = sizes
    count, extents = batch
    nr = tiles.nr
    zero_i, one, nr_v = b.index(0), b.index(1), b.index(nr)
    panels = b.ceildiv(n, nr_v)
    packed_type = MemRefType(mm.element, [DYNAMIC_INDEX, DYNAMIC_INDEX, DYNAMIC_INDEX, nr])
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
                value = rb(memref.LoadOp.get(image.source, index))
                value = rb(arith.SelectOp(inside, value, zero(rb, mm.element)))
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
) -> None:
    """`C[i + r, j0 + jj] (+)= acc` for the rows below M and the columns below N."""
    target, c_at = c
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

    def scalars(sb: Ops) -> None:
        element = vector_type.element_type
        # The stack buffer lives for this tile only: without the restore, every partial
        # tile of a task grows the stack (504 x 65536 x 17 overflowed a 1 MiB stack).
        saved = sb(llvm.CallIntrinsicOp("llvm.stacksave.p0", [], [llvm.LLVMPointerType()]))
        buffer = sb(memref.AllocaOp.get(element, shape=[tiles.mr, tiles.nr]))
        for r in range(tiles.mr):
            for v in range(lanes):
                sb.ops.append(vector.StoreOp(acc[r * lanes + v], buffer, [sb.index(r), offsets[v]]))

        def element_at(eb: Ops, r: SSAValue, jj: SSAValue) -> None:
            at = c_at(eb, eb.add(i, r), eb.add(j0, jj))
            value = eb(memref.LoadOp.get(buffer, [r, jj]))
            if accumulate:
                value = eb(arith.AddfOp(eb(memref.LoadOp.get(target, at)), value))
            eb.ops.append(memref.StoreOp.get(value, target, at))

        _over_tile(sb, (i, j0), sizes, tiles, element_at)
        sb.ops.append(llvm.CallIntrinsicOp("llvm.stackrestore.p0", [saved], []))

    if_then(b, full, vectors, scalars)


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
            if accumulate:
                old = ub(vector.LoadOp(target, at, value.type))
                value = ub(arith.AddfOp(old, value))
            ub.ops.append(vector.StoreOp(value, target, at))

    return build


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
    rows_per_task: int,
    overwrite: bool = False,
    panels: memref.GlobalOp | None = None,
    pack_a: bool = False,
    one_task: bool = False,
) -> list[Operation]:
    """
    The packed, register-blocked `C += A @ B` (see the module docstring), for each batch,
    then `mm`'s epilogue on each finished tile. With `overwrite`, the first K block
    stores into C instead of adding to it (C held zeros, which need not be written).
    `panels` is B already packed, at compile time (`mlc.lowering.constant_panels`).
    With `pack_a`, each task packs its block of A for each K block (`_pack_a`). With
    `one_task` (the kernel runs as a single task), B is packed on the calling thread.
    """
    b = Ops()
    a, c = _matrices(b, mm)
    epilogue = mm.epilogue.viewed(b) if mm.epilogue is not None else None
    vector_type = VectorType(mm.element, [tiles.vector])
    rank_c = len(_shape(c))
    m, k = b.dim(a, mm.dim_of(0, "i")), b.dim(a, mm.dim_of(0, "k"))
    n = b.dim(c, rank_c - 1)
    extents = [b.dim(c, d) for d in range(mm.batch)]
    batches = _product(b, extents)
    packed_batches = (batches, extents) if _b_is_batched(mm) else (b.index(1), [])
    packed, free = _packed(b, mm, (k, n), packed_batches, tiles, panels, not one_task)
    zero_i, one = b.index(0), b.index(1)
    panels = b.ceildiv(n, b.index(tiles.nr))
    last_row = b(arith.SubiOp(m, one))
    blocks = b.ceildiv(m, b.index(rows_per_task))

    def task(tb: Ops, t: SSAValue) -> None:
        flat = tb(arith.DivSIOp(t, blocks))
        batch_ivs = _batch_indices(tb, flat, extents)
        packed_t = flat if _b_is_batched(mm) else zero_i
        i0 = tb.mul(tb(arith.RemSIOp(t, blocks)), tb.index(rows_per_task))
        i_end = tb.min(tb.add(i0, tb.index(rows_per_task)), m)

        def a_at(ab: Ops, row: SSAValue, kk: SSAValue) -> list[SSAValue]:
            return indices(ab, mm.maps[0], [*batch_ivs, row, kk, zero_i])

        def c_at(cb: Ops, row: SSAValue, column: SSAValue) -> list[SSAValue]:
            return indices(cb, mm.maps[2], [*batch_ivs, row, zero_i, column])

        def depth(db: Ops, k0: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            k_end = db.min(db.add(k0, db.index(tiles.kc)), k)
            a_block = _pack_a(db, (a, a_at), (a_buffer, i0, i_end), (k0, k_end), tiles)

            def panel(pb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                j0 = pb.mul(p, pb.index(tiles.nr))

                def block(bb: Ops, i: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    reader = _a_reader(bb, (a, a_at), a_block, (i, k0), (i0, last_row), tiles)
                    panel_at = (packed, packed_t, p)
                    acc = _micro_kernel(bb, reader, panel_at, (k0, k_end), tiles, vector_type)

                    def write(accumulate: bool) -> Callable[[Ops], None]:
                        return lambda wb: _write_back(
                            wb, (c, c_at), acc, (i, j0), (m, n), tiles, accumulate
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

            for_loop(db, zero_i, panels, one, panel)
            return []

        a_buffer, free_a = _a_buffer(tb, mm.element, rows_per_task, tiles, pack_a)
        for_loop(tb, zero_i, k, tb.index(tiles.kc), depth)
        tb.ops += free_a

    parallel_loop(b, zero_i, b.mul(batches, blocks), one, task)
    b.ops += free
    return b.ops


def _packed(
    b: Ops,
    mm: Matmul,
    sizes: tuple[SSAValue, SSAValue],
    batch: tuple[SSAValue, Sequence[SSAValue]],
    tiles: MatmulTiles,
    panels: memref.GlobalOp | None,
    parallel: bool,
) -> tuple[SSAValue, list[Operation]]:
    """
    B's panels: read from the global packed at compile time, else packed now into a
    buffer; and the ops that free it once the kernel is done.
    """
    if panels is not None:
        return b(get_panels(panels)), []
    pack = pack_b if mm.image is None else pack_image
    packed = pack(b, mm, sizes, batch, tiles, parallel)
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

"""
B's panels of a convolution run as an implicit GEMM (`mlc.lowering.cpu.conv_gemm`),
packed straight from the image: X' (im2col) is never built, each NR-wide panel of it
is read from the image through its map, in the layout `pack_b` gives a matmul's B
(`mlc.lowering.cpu.matmul_packing`). Stride 1 and 2 read whole vectors where a vector
lies in one output row (stride 2: two and their even lanes); stride 1 gathers whole
rows where rows divide the vector; the other panels of both are copied in masked row
pieces; other strides go an element at a time.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, VectorType, i1, i64
from xdsl.ir import SSAValue

from mlc.lowering.cpu.conv_columns import at_column, over_reductions, row_pieces
from mlc.lowering.cpu.conv_padded_packing import padded_pieces
from mlc.lowering.cpu.matmul_packing import ALIGNMENT, batch_indices, each_panel
from mlc.lowering.linalg.contraction import Image, Matmul
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import (
    Ops,
    affine_index,
    as_float,
    every_other,
    for_loop,
    if_then,
    less,
    side_by_side,
    zero,
)
from mlc.tiling_model import MatmulTiles


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
    k, n = sizes
    count, extents = batch
    panels = b.ceildiv(n, b.index(tiles.nr))
    packed = _panel_buffer(b, mm, tiles, (count, panels, k))

    def panel(pb: Ops, t: SSAValue) -> None:
        flat, p = pb(arith.DivSIOp(t, panels)), pb(arith.RemSIOp(t, panels))
        _pack_panel(pb, mm, tiles, (n, extents), (flat, p), (packed, [flat, p]))

    each_panel(b, b.mul(count, panels), panel, parallel)
    return packed


def pack_task_image(
    b: Ops,
    mm: Matmul,
    sizes: tuple[SSAValue, SSAValue],
    extents: Sequence[SSAValue],
    tiles: MatmulTiles,
    task: tuple[SSAValue, SSAValue, SSAValue],
) -> SSAValue:
    """
    `Bp[0, p - p0, k, jj] = X'[t, k, p*NR + jj]` for the panels `[p0, p_end)` of batch
    `t` (`task`) only, into a buffer of the task's own: a task that packs the panels it
    consumes finds them in its core's caches (`mlc.lowering.cpu.conv_tasks`).
    """
    k, n = sizes
    flat, p0, p_end = task
    zero_i = b.index(0)
    count = b(arith.MaxSIOp(b.sub(p_end, p0), zero_i))  # a last group may be empty
    packed = _panel_buffer(b, mm, tiles, (b.index(1), count, k))

    def panel(pb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        _pack_panel(pb, mm, tiles, (n, extents), (flat, p), (packed, [zero_i, pb.sub(p, p0)]))
        return []

    for_loop(b, p0, p_end, b.index(1), panel)
    return packed


def _panel_buffer(
    b: Ops, mm: Matmul, tiles: MatmulTiles, shape: tuple[SSAValue, SSAValue, SSAValue]
) -> SSAValue:
    """An aligned (batches, panels, K, NR) buffer for packed panels."""
    packed_type = MemRefType(mm.accumulator, [DYNAMIC_INDEX] * 3 + [tiles.nr])
    return b(memref.AllocOp(list(shape), [], packed_type, IntegerAttr(ALIGNMENT, i64)))


def _pack_panel(
    pb: Ops,
    mm: Matmul,
    tiles: MatmulTiles,
    columns: tuple[SSAValue, Sequence[SSAValue]],
    at: tuple[SSAValue, SSAValue],
    pieces: tuple[SSAValue, list[SSAValue]],
) -> None:
    """Panel `p` of batch `flat` (`at`) of X' (N columns, the batch `extents`:
    `columns`) written to `pieces` (the buffer and the panel's index in it)."""
    image = mm.image
    assert image is not None
    (n, extents), (flat, p), (packed, at_panel) = columns, at, pieces
    nr = tiles.nr
    zero_i, one, nr_v = pb.index(0), pb.index(1), pb.index(nr)
    last = pb(arith.SubiOp(n, one))
    loops: list[SSAValue] = [zero_i] * image.map.num_dims
    for d, value in zip(image.prefix, batch_indices(pb, flat, extents), strict=True):
        loops[d] = value
    rank_w, rank_y = _rank(image.weight), _rank(image.output)
    reduction_sizes = [
        pb.dim(image.weight, d) for d in range(rank_w - len(image.reductions), rank_w)
    ]
    spatial_sizes = [pb.dim(image.output, d) for d in range(rank_y - len(image.spatial), rank_y)]
    j0 = pb.mul(p, nr_v)

    def column(cb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        j = cb.add(j0, jj)
        inside = less(cb, j, n)
        at = at_column(cb, image, loops, cb.min(j, last), spatial_sizes)

        def element(rb: Ops, kk: SSAValue) -> None:
            index = [affine_index(rb, e, at) for e in image.map.results]
            value = as_float(rb, rb(quick_ops.load(image.source, index)), mm.accumulator)
            value = rb(arith.SelectOp(inside, value, zero(rb, mm.accumulator)))
            rb.ops.append(quick_ops.store(value, packed, [*at_panel, kk, jj]))

        over_reductions(cb, image, reduction_sizes, at, element)
        return []

    if image.pads:  # the image before its padding: zeros written here
        padded_pieces(pb, image, (mm, tiles), pieces, (j0, n), loops)
        return
    stride = image.row_stride()
    if stride is None or stride > 2:
        for_loop(pb, zero_i, nr_v, one, column)
        return
    width = segment_width(image, tiles)
    if width is not None:  # rows of 2..VL/2 columns: each vector gathers whole rows
        below = pb(arith.CmpiOp(pb.add(j0, nr_v), n, "sle"))
        kind = (mm, tiles)
        if_then(
            pb,
            below,
            lambda vb: _row_segments(vb, image, kind, pieces, (j0, None), loops, width),
            lambda rb: _row_segments(rb, image, kind, pieces, (j0, n), loops, width),
        )
        return

    # Each vector of the panel in one output row (the panel may span rows, as
    # with 8-wide rows): each k reads VL contiguous image elements per vector
    # (at stride 2, 2 VL and their even lanes).
    fits, starts = _row_vectors(pb, image, loops, (j0, n), spatial_sizes, tiles)
    if_then(
        pb,
        fits,
        lambda vb: _whole_vectors(vb, image, (mm, tiles), pieces, starts, reduction_sizes),
        lambda rb: _row_pieces(rb, image, (mm, tiles), pieces, (j0, n), loops),
    )


def _whole_vectors(
    b: Ops,
    image: Image,
    kind: tuple[Matmul, MatmulTiles],
    panel: tuple[SSAValue, list[SSAValue]],
    starts: list[tuple[SSAValue, list[SSAValue]]],
    sizes: Sequence[SSAValue],
) -> None:
    """
    A panel whose vectors each lie in one output row (`_row_vectors`): for each row of
    X', one plain vector load of the image and one store per vector. At stride 2 a
    vector is the even lanes of two: the second loads VL - 1 lanes (its last is not
    read, and may lie past the image).
    """
    mm, tiles = kind
    packed, at_panel = panel
    read, kept = VectorType(mm.element, [tiles.vector]), VectorType(mm.accumulator, [tiles.vector])
    vl, nothing, short = b.index(tiles.vector), zero(b, read), None
    if image.row_stride() == 2:
        lanes = VectorType(i1, [tiles.vector])
        short = b(vector.CreateMaskOp([b.index(tiles.vector - 1)], lanes))

    def piece(rb: Ops, kk: SSAValue) -> None:
        for o, at in starts:
            start = _vector_start(rb, image, at, starts[0][1])
            value = rb(quick_ops.vector_load(image.source, start, read))
            if short is not None:
                second = [*start[:-1], rb.add(start[-1], vl)]
                odd = rb(vector.MaskedLoadOp(image.source, second, short, nothing))
                value = rb(every_other(value, odd))
            value = as_float(rb, value, kept)
            rb.ops.append(quick_ops.store(value, packed, [*at_panel, kk, o]))

    over_reductions(b, image, sizes, starts[0][1], piece)


def segment_width(image: Image, tiles: MatmulTiles) -> int | None:
    """
    The output rows' width W where a panel's vectors can be gathered from whole rows
    (`_row_segments`): stride 1, W static, at least 2 and dividing the vector (so that
    it divides NR too, and every vector starts a row), else None.
    """
    width = _shape(image.output)[-1]
    if image.row_stride() != 1 or width < 2 or width >= tiles.vector or tiles.vector % width:
        return None
    return width


def _row_segments(
    b: Ops,
    image: Image,
    kind: tuple[Matmul, MatmulTiles],
    panel: tuple[SSAValue, list[SSAValue]],
    columns: tuple[SSAValue, SSAValue | None],
    loops: Sequence[SSAValue],
    width: int,
) -> None:
    """
    A panel of a stride-1 convolution whose output rows are W columns, W dividing the
    vector: each vector of it is VL / W whole rows, so for each row of X' it is VL / W
    plain loads of W image elements put side by side, and one store. The panel's rows
    are written whole, one after the other: cut at row ends (`_row_pieces`), each row
    of a panel too big for L1 was written a piece at a time in as many passes over it
    as it has output rows. With N given (`columns`), the panel may reach past it: N is
    a whole number of rows, and each row past it reads the last row and keeps zeros.
    """
    mm, tiles = kind
    packed, at_panel = panel
    j0, n = columns
    read, kept = VectorType(mm.element, [width]), VectorType(mm.accumulator, [tiles.vector])
    rank_w, rank_y = _rank(image.weight), _rank(image.output)
    sizes = [b.dim(image.weight, d) for d in range(rank_w - len(image.reductions), rank_w)]
    spatial = [b.dim(image.output, d) for d in range(rank_y - len(image.spatial), rank_y)]
    last = None if n is None else b.sub(n, b.index(width))

    def segment(o: int) -> tuple[list[SSAValue], SSAValue | None]:
        column = b.add(j0, b.index(o))
        if last is None:
            return at_column(b, image, loops, column, spatial), None
        inside = less(b, column, n)  # pyright: ignore[reportArgumentType]
        return at_column(b, image, loops, b.min(column, last), spatial), inside

    vectors = [
        (b.index(o), [segment(o + r) for r in range(0, tiles.vector, width)])
        for o in range(0, tiles.nr, tiles.vector)
    ]
    first = vectors[0][1][0][0]
    nothing = zero(b, read)

    def row(rb: Ops, kk: SSAValue) -> None:
        for o, segments in vectors:
            parts: list[SSAValue] = []
            for at, inside in segments:
                start = _vector_start(rb, image, at, first)
                part = rb(quick_ops.vector_load(image.source, start, read))
                if inside is not None:
                    part = rb(arith.SelectOp(inside, part, nothing))
                parts.append(part)
            while len(parts) > 1:
                parts = [rb(side_by_side(*parts[i : i + 2])) for i in range(0, len(parts), 2)]
            value = as_float(rb, parts[0], kept)
            rb.ops.append(quick_ops.store(value, packed, [*at_panel, kk, o]))

    over_reductions(b, image, sizes, first, row)


def _row_pieces(
    b: Ops,
    image: Image,
    kind: tuple[Matmul, MatmulTiles],
    panel: tuple[SSAValue, list[SSAValue]],
    columns: tuple[SSAValue, SSAValue],
    loops: Sequence[SSAValue],
) -> None:
    """
    A panel of a stride-1 convolution whose vectors do not each lie in one output row
    (rows narrower than a vector, or a panel starting mid-row), or of a stride-2 one:
    the panel cut at row ends, each piece copied by masked vectors, so that a row of 8,
    7 or 14 columns is still read contiguously instead of an element at a time (at
    stride 2, two vectors' worth of the image row, its even lanes kept). A panel
    reaching past N is zeroed first.
    """
    mm, tiles = kind
    packed, at_panel = panel
    j0, n = columns
    vl, one = b.index(tiles.vector), b.index(1)
    read, kept = VectorType(mm.element, [tiles.vector]), VectorType(mm.accumulator, [tiles.vector])
    masks = VectorType(i1, [tiles.vector])
    nothing = zero(b, read)
    rank_w, rank_y = _rank(image.weight), _rank(image.output)
    sizes = [b.dim(image.weight, d) for d in range(rank_w - len(image.reductions), rank_w)]
    spatial = [b.dim(image.output, d) for d in range(rank_y - len(image.spatial), rank_y)]

    def piece(cb: Ops, j: SSAValue, hi: SSAValue) -> None:
        left = cb.sub(hi, j)
        mask = cb(vector.CreateMaskOp([left], masks))
        spread = None  # at stride 2: the lanes of the image row's two vectors read
        if image.row_stride() == 2:
            span = cb.sub(cb.add(left, left), one)
            spread = [cb(vector.CreateMaskOp([r], masks)) for r in (span, cb.sub(span, vl))]
        at = at_column(cb, image, loops, j, spatial)
        offset = cb.sub(j, j0)

        def copy(kb: Ops, kk: SSAValue) -> None:
            index = [affine_index(kb, e, at) for e in image.map.results]
            if spread is None:
                value = kb(vector.MaskedLoadOp(image.source, index, mask, nothing))
            else:
                second = [*index[:-1], kb.add(index[-1], vl)]
                even, odd = (
                    kb(vector.MaskedLoadOp(image.source, where, lanes, nothing))
                    for where, lanes in ((index, spread[0]), (second, spread[1]))
                )
                value = kb(every_other(even, odd))
            value = as_float(kb, value, kept)
            kb.ops.append(quick_ops.masked_store(packed, [*at_panel, kk, offset], mask, value))

        over_reductions(cb, image, sizes, at, copy)

    row_pieces(b, panel, (j0, n, spatial[-1]), tiles, kept, piece)


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
        at = at_column(b, image, loops, b.min(b.add(j0, o), last), sizes)
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


def _shape(value: SSAValue) -> Sequence[int]:
    type_ = value.type
    assert isinstance(type_, MemRefType)
    return type_.get_shape()


def _rank(value: SSAValue) -> int:
    type_ = value.type
    assert isinstance(type_, MemRefType)
    return len(type_.get_shape())

"""
B's panels of a convolution packed from the image before its zero padding
(`Image.pads`): `convert-ml-to-linalg` pads into a zero-filled copy of the image
(`mlc.lowering.linalg.absorbed_padding`), which costs a fill and a copy of the whole
image per call; the packing reads every element of the image anyway, so it writes the
zeros itself and the copy is never made.

As with the padded copy's masked row pieces (`conv_packing._row_pieces`), the panel is
cut at output-row ends and each piece (at most a vector) copied for each row of X'. The
taps outside the image are ranges, not scattered elements: a row of X' reads one
image row, out of it entirely or not at all, and of a piece's columns the ones inside
the image's width are one run `[a, b)`, found from the piece's first column by two
divisions. So each piece is one masked load of the run and two masked stores (zeros
before it, the run and zeros after it), no branch per element. Strides 1 and 2.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import MemRefType, VectorType, i1
from xdsl.ir import SSAValue

from mlc.lowering.cpu.conv_columns import at_column, over_reductions
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
    zero,
)
from mlc.tiling_model import MatmulTiles


def padded_pieces(
    b: Ops,
    image: Image,
    kind: tuple[Matmul, MatmulTiles],
    panel: tuple[SSAValue, list[SSAValue]],
    columns: tuple[SSAValue, SSAValue],
    loops: Sequence[SSAValue],
) -> None:
    """The panel of X' from column `j0` (N columns), read from the unpadded image with
    zeros outside it (module docstring). A panel reaching past N is zeroed first."""
    mm, tiles = kind
    packed, at_panel = panel
    j0, n = columns
    vl, nr, one = b.index(tiles.vector), b.index(tiles.nr), b.index(1)
    stride = image.row_stride()
    assert stride in (1, 2)
    step = b.index(stride)
    read, kept = VectorType(mm.element, [tiles.vector]), VectorType(mm.accumulator, [tiles.vector])
    masks = VectorType(i1, [tiles.vector])
    nothing, zeros = zero(b, read), zero(b, kept)
    rank_w, rank_y, rank_x = _rank(image.weight), _rank(image.output), _rank(image.source)
    sizes = [b.dim(image.weight, d) for d in range(rank_w - len(image.reductions), rank_w)]
    spatial = [b.dim(image.output, d) for d in range(rank_y - len(image.spatial), rank_y)]
    extents = [b.dim(image.source, d) for d in range(rank_x)]
    width = spatial[-1]
    end = b.min(b.add(j0, nr), n)

    def zeroed(zb: Ops) -> None:
        def row(kb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            for o in range(0, tiles.nr, tiles.vector):
                kb.ops.append(quick_ops.store(zeros, packed, [*at_panel, kk, kb.index(o)]))
            return []

        rows = zb(memref.DimOp(packed, zb.index(2)))
        for_loop(zb, zb.index(0), rows, zb.index(1), row)

    if_then(b, less(b, end, b.add(j0, nr)), zeroed)

    def row(rb: Ops, r: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        start = rb.mul(r, width)
        lo = rb(quick_ops.binary(arith.MaxSIOp, start, j0))
        hi = rb.min(rb.add(start, width), end)

        def piece(cb: Ops, j: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            length = cb.min(cb.sub(hi, j), vl)
            at = at_column(cb, image, loops, j, spatial)
            offset = cb.sub(j, j0)

            def copy(kb: Ops, kk: SSAValue) -> None:
                index, inside = _unpadded_index(kb, image, at, extents)
                first, run = _run(kb, index[-1], extents[-1], (step, length), inside)
                start = kb.add(index[-1], kb.mul(first, step))
                index[-1] = _clamped(kb, start, extents[-1])
                value = _masked_read(kb, image, index, (run, vl, masks), nothing)
                before = kb(vector.CreateMaskOp([first], masks))
                kb.ops.append(
                    quick_ops.masked_store(packed, [*at_panel, kk, offset], before, zeros)
                )
                rest = kb(vector.CreateMaskOp([kb.sub(length, first)], masks))
                to = [*at_panel, kk, kb.add(offset, first)]
                kb.ops.append(quick_ops.masked_store(packed, to, rest, as_float(kb, value, kept)))

            over_reductions(cb, image, sizes, at, copy)
            return []

        for_loop(rb, lo, hi, vl, piece)
        return []

    first_row = b(arith.DivSIOp(j0, width))
    last_row = b.add(b(arith.DivSIOp(b.sub(end, one), width)), one)
    for_loop(b, first_row, last_row, one, row)


def _unpadded_index(
    b: Ops, image: Image, at: Sequence[SSAValue], extents: Sequence[SSAValue]
) -> tuple[list[SSAValue], SSAValue | None]:
    """The image index that `at` reads, less the pads; every dim but the last clamped
    into the image, and whether they all lay inside it (None: always)."""
    index: list[SSAValue] = []
    inside: SSAValue | None = None
    last = len(image.map.results) - 1
    for d, (expr, (pad, checked)) in enumerate(zip(image.map.results, image.pads, strict=True)):
        value = affine_index(b, expr, at)
        if pad:
            value = b.sub(value, b.index(pad))
        if checked and d < last:
            ok = b(
                arith.AndIOp(b(arith.CmpiOp(value, b.index(0), "sge")), less(b, value, extents[d]))
            )
            inside = ok if inside is None else b(arith.AndIOp(inside, ok))
            value = _clamped(b, value, extents[d])
        index.append(value)
    return index, inside


def _run(
    b: Ops,
    column: SSAValue,
    width: SSAValue,
    piece: tuple[SSAValue, SSAValue],
    inside: SSAValue | None,
) -> tuple[SSAValue, SSAValue]:
    """
    Of a piece's `length` columns, lane `l` reading image column `column + l * step`:
    the first lane inside the image's width, and how many from it are (0 where the row
    is outside the image).
    """
    step, length = piece
    zero_i = b.index(0)
    below = b(quick_ops.binary(arith.MaxSIOp, b.sub(zero_i, column), zero_i))
    first = b.min(b.ceildiv(below, step), length)
    beyond = b(quick_ops.binary(arith.MaxSIOp, b.sub(width, column), zero_i))
    stop = b.min(b.ceildiv(beyond, step), length)
    run = b(quick_ops.binary(arith.MaxSIOp, b.sub(stop, first), zero_i))
    if inside is not None:
        run = b(arith.SelectOp(inside, run, zero_i))
    return first, run


def _masked_read(
    b: Ops,
    image: Image,
    index: list[SSAValue],
    lanes: tuple[SSAValue, SSAValue, VectorType],
    nothing: SSAValue,
) -> SSAValue:
    """`run` image elements from `index`, `row_stride` apart, zeros after them."""
    run, vl, masks = lanes
    if image.row_stride() == 1:
        mask = b(vector.CreateMaskOp([run], masks))
        return b(vector.MaskedLoadOp(image.source, index, mask, nothing))
    span = b.sub(b.add(run, run), b.index(1))  # stride 2: the even lanes of two vectors
    second = [*index[:-1], b.add(index[-1], vl)]
    even, odd = (
        b(vector.MaskedLoadOp(image.source, where, b(vector.CreateMaskOp([count], masks)), nothing))
        for where, count in ((index, span), (second, b.sub(span, vl)))
    )
    return b(every_other(even, odd))


def _clamped(b: Ops, value: SSAValue, extent: SSAValue) -> SSAValue:
    """`value` moved into `[0, extent)`, so that a read of no lanes stays in bounds."""
    low = b(quick_ops.binary(arith.MaxSIOp, value, b.index(0)))
    return b.min(low, b.sub(extent, b.index(1)))


def _rank(value: SSAValue) -> int:
    type_ = value.type
    assert isinstance(type_, MemRefType)
    return len(type_.get_shape())

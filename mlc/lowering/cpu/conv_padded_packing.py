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
divisions, once per piece and column tap (kw). So each row of X' of a piece is one
masked load of the run, the lanes around it zeros, and one store: no branch per
element, and no more loads and stores than the padded copy's packing. Strides 1, 2.
"""

from collections.abc import Callable, Sequence
from itertools import product

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, VectorType, i1
from xdsl.ir import SSAValue

from mlc.lowering.cpu.conv_columns import at_column, row_pieces
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
    vl = b.index(tiles.vector)
    assert image.row_stride() in (1, 2)
    read, kept = VectorType(mm.element, [tiles.vector]), VectorType(mm.accumulator, [tiles.vector])
    rank_w, rank_y, rank_x = _rank(image.weight), _rank(image.output), _rank(image.source)
    sizes = [b.dim(image.weight, d) for d in range(rank_w - len(image.reductions), rank_w)]
    spatial = [b.dim(image.output, d) for d in range(rank_y - len(image.spatial), rank_y)]
    extents = [b.dim(image.source, d) for d in range(rank_x)]

    def piece(cb: Ops, j: SSAValue, hi: SSAValue) -> None:
        length = cb.min(cb.sub(hi, j), vl)
        at = at_column(cb, image, loops, j, spatial)
        target = (packed, at_panel, cb.sub(j, j0), length)
        _taps(cb, image, (sizes, extents), at, target, (tiles.vector, read, kept))

    row_pieces(b, panel, (j0, n, spatial[-1]), tiles, kept, piece)


def _taps(
    b: Ops,
    image: Image,
    bounds: tuple[Sequence[SSAValue], Sequence[SSAValue]],
    at: list[SSAValue],
    target: tuple[SSAValue, list[SSAValue], SSAValue, SSAValue],
    types: tuple[int, VectorType, VectorType],
) -> None:
    """
    The rows of X' for one piece of an output row (`length` columns from `offset` in
    the panel). For each column tap (the values of the loops the image's last dim
    reads: kw), the run of the piece's columns inside the image and its masks are found
    once, before the other loops; those loops (ci, kh) run in order with the column taps
    unrolled inside them, an image row outside the image writing zeros (a branch per
    row tap). Each row of X' is a masked read (two at stride 2: their even lanes) and
    one store, plain where the piece is a whole vector.
    """
    sizes, extents = bounds
    packed, at_panel, offset, length = target
    lanes, read, kept = types
    masks = VectorType(i1, [lanes])
    *outer, last = image.map.results
    pads = [pad for pad, _ in image.pads]
    columns = [r for r in image.reductions if r in last.used_dims()]
    others = [r for r in image.reductions if r not in columns]
    steps = _row_major(b, sizes)
    nothing, zeros, step = zero(b, read), zero(b, kept), b.index(image.row_stride() or 1)
    vl, whole = b.index(lanes), b(vector.CreateMaskOp([length], masks))
    taps: list[tuple[tuple[int, ...], SSAValue, list[SSAValue]]] = []
    for values in product(*(range(_static(sizes[image.reductions.index(r)])) for r in columns)):
        _set(b, at, columns, values)
        column = b.sub(affine_index(b, last, at), b.index(pads[-1]))
        first, run = _run(b, column, extents[-1], (step, length))
        taps.append((values, column, _run_lanes(b, (first, run), image.row_stride(), masks)))

    def at_tap(kb: Ops, values: tuple[int, ...]) -> SSAValue:
        """Sets the column loops to a tap's; the row of X' it makes."""
        _set(kb, at, columns, values)
        kk = kb.index(0)
        for p, loop in enumerate(image.reductions):
            kk = kb.add(kk, kb.mul(at[loop], steps[p]))
        return kk

    def rows_of_x(rb: Ops, plain: bool) -> None:
        fixed, inside = _image_rows(rb, image, at, extents)

        def copy(kb: Ops) -> None:
            for values, column, lanes_read in taps:
                kk = at_tap(kb, values)
                index = [
                    fixed[d] if d in fixed else kb.sub(affine_index(kb, e, at), kb.index(pads[d]))
                    for d, e in enumerate(outer)
                ]
                value = _masked_read(kb, image, [*index, column], (lanes_read, vl), nothing)
                value = as_float(kb, value, kept)
                to = [*at_panel, kk, offset]
                store = quick_ops.store(value, packed, to) if plain else None
                kb.ops.append(store or quick_ops.masked_store(packed, to, whole, value))

        def zeroed(kb: Ops) -> None:
            for values, _, _ in taps:
                to = [*at_panel, at_tap(kb, values), offset]
                kb.ops.append(quick_ops.masked_store(packed, to, whole, zeros))

        if inside is None:
            copy(rb)
        else:
            if_then(rb, inside, copy, zeroed)

    if_then(
        b,
        b(arith.CmpiOp(length, vl, "eq")),
        lambda fb: _nest(fb, image, sizes, at, others, lambda rb: rows_of_x(rb, True)),
        lambda mb: _nest(mb, image, sizes, at, others, lambda rb: rows_of_x(rb, False)),
    )


def _row_major(b: Ops, sizes: Sequence[SSAValue]) -> list[SSAValue]:
    """The strides of a row-major array of `sizes`."""
    steps = [b.index(1)] * len(sizes)
    for p in range(len(sizes) - 2, -1, -1):
        steps[p] = b.mul(steps[p + 1], sizes[p + 1])
    return steps


def _set(b: Ops, at: list[SSAValue], loops: Sequence[int], values: Sequence[int]) -> None:
    for loop, value in zip(loops, values, strict=True):
        at[loop] = b.index(value)


def _image_rows(
    b: Ops, image: Image, at: Sequence[SSAValue], extents: Sequence[SSAValue]
) -> tuple[dict[int, SSAValue], SSAValue | None]:
    """The index of each padded dim but the last (the pad taken off) that `at` reads,
    and whether all lie inside the image (None: no such dim)."""
    fixed: dict[int, SSAValue] = {}
    inside: SSAValue | None = None
    for d, (pad, checked) in enumerate(image.pads[:-1]):
        if not checked:
            continue
        value = b.sub(affine_index(b, image.map.results[d], at), b.index(pad))
        above = b(arith.CmpiOp(value, b.index(0), "sge"))
        ok = b(arith.AndIOp(above, less(b, value, extents[d])))
        inside = ok if inside is None else b(arith.AndIOp(inside, ok))
        fixed[d] = value
    return fixed, inside


def _static(size: SSAValue) -> int:
    """The value of an index constant (a column tap loop's size, static by
    `conv_gemm.absorb_padding`)."""
    owner = size.owner
    assert isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr)
    return owner.value.value.data


def _nest(
    b: Ops,
    image: Image,
    sizes: Sequence[SSAValue],
    at: list[SSAValue],
    group: Sequence[int],
    body: Callable[[Ops], None],
) -> None:
    """`body` in loops over the reduction loops `group` (each set in `at`)."""
    if not group:
        body(b)
        return

    def step(sb: Ops, r: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        at[group[0]] = r
        _nest(sb, image, sizes, at, group[1:], body)
        return []

    size = sizes[image.reductions.index(group[0])]
    for_loop(b, b.index(0), size, b.index(1), step)


def _run(
    b: Ops,
    column: SSAValue,
    width: SSAValue,
    piece: tuple[SSAValue, SSAValue],
) -> tuple[SSAValue, SSAValue]:
    """
    Of a piece's `length` columns, lane `l` reading image column `column + l * step`:
    the first lane inside the image's width, and how many from it are.
    """
    step, length = piece
    zero_i = b.index(0)
    below = b(quick_ops.binary(arith.MaxSIOp, b.sub(zero_i, column), zero_i))
    first = b.min(b.ceildiv(below, step), length)
    beyond = b(quick_ops.binary(arith.MaxSIOp, b.sub(width, column), zero_i))
    stop = b.min(b.ceildiv(beyond, step), length)
    run = b(quick_ops.binary(arith.MaxSIOp, b.sub(stop, first), zero_i))
    return first, run


def _run_lanes(
    b: Ops, run: tuple[SSAValue, SSAValue], stride: int | None, masks: VectorType
) -> list[SSAValue]:
    """
    The lanes to read for a run of `count` lanes from lane `first`, lane `l` reading
    image column `column + l * stride`: at stride 1 those lanes of one vector read from
    `column`; at stride 2 the lanes of the two vectors from `column` whose even lanes
    they are. Lanes before and after the run (outside the image) stay zeros.
    """
    first, count = run
    lanes = masks.get_shape()[0]
    if stride == 1:
        return [_lanes_between(b, first, b.add(first, count), masks)]
    low = b.add(first, first)
    span = b(quick_ops.binary(arith.MaxSIOp, b.sub(b.add(count, count), b.index(1)), b.index(0)))
    high, vl = b.add(low, span), b.index(lanes)
    return [
        _lanes_between(b, low, high, masks),
        _lanes_between(
            b, _non_negative(b, b.sub(low, vl)), _non_negative(b, b.sub(high, vl)), masks
        ),
    ]


def _lanes_between(b: Ops, low: SSAValue, high: SSAValue, masks: VectorType) -> SSAValue:
    """The lanes j with `low <= j < high` (`low <= high`)."""
    below_high = b(vector.CreateMaskOp([high], masks))
    return b(arith.XOrIOp(below_high, b(vector.CreateMaskOp([low], masks))))


def _non_negative(b: Ops, value: SSAValue) -> SSAValue:
    return b(quick_ops.binary(arith.MaxSIOp, value, b.index(0)))


def _masked_read(
    b: Ops,
    image: Image,
    index: list[SSAValue],
    lanes: tuple[list[SSAValue], SSAValue],
    nothing: SSAValue,
) -> SSAValue:
    """The image elements from `index`, `row_stride` apart, in the lanes `_run_lanes`
    gives (their start may lie before the image row, those lanes masked off)."""
    masks, vl = lanes
    first = b(vector.MaskedLoadOp(image.source, index, masks[0], nothing))
    if len(masks) == 1:
        return first
    second = [*index[:-1], b.add(index[-1], vl)]
    odd = b(vector.MaskedLoadOp(image.source, second, masks[1], nothing))
    return b(every_other(first, odd))


def _rank(value: SSAValue) -> int:
    type_ = value.type
    assert isinstance(type_, MemRefType)
    return len(type_.get_shape())

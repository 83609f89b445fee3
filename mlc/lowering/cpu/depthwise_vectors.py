"""
Output rows of a depthwise convolution in explicit vectors, for
`mlc.lowering.cpu.depthwise_loops` where the image's last dim is read at unit stride.

LLVM's loop vectoriser needs a row of at least its vector factor times its interleave
(often 32 columns) before it leaves the scalar remainder; the zoo's CNNs end in rows of
2 to 16 columns, and the interior of a padded one is narrower still. Here a row is
swept in blocks of one vector, each column block `[o0, o0 + VL)`:

    acc = splat(bias[f])                        (or y's block, masked to the row)
    for each tap t (column offset c_t, the row it reads r_t, weight w_t):
        lanes j with 0 <= o0 + j + c_t - pad < W, and r_t inside the image:
        acc = fma(maskedload(x[n, f, r_t, o0 + c_t - pad ..], those lanes, 0), w_t, acc)
    maskedstore(y[n, f, o.., o0 ..], the lanes below the row's end, acc)

so the padding costs two lane masks per tap and block (`vector.create_mask` pairs) and
no copy, the borders need no code of their own, and a row of any width runs in
vectors. Lanes past the image's row are never read; lanes of the last block past the
output row read inside the image and are not stored. A fused epilogue then runs over
the finished row in scalar loops (its body is the generic's scalar ops).

Images of 64 output pixels or fewer whose rows are as wide as the image (stride 1) or
2, 4 or 8 wide (stride 2) are swept whole instead, the pixels of a block spanning rows
and every mask a constant (`image_lanes`, `vector_images`); there an epilogue of `arith`
ops runs on each block's vector before its store.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    MemRefType,
    VectorType,
    i1,
)
from xdsl.ir import SSAValue

from mlc.lowering.cpu.depthwise_conv import Depthwise, Tap
from mlc.lowering.cpu.pooling_images import Image, RowLoads, constant_mask, pooled_taps
from mlc.lowering.linalg.contraction import indices, is_row_major
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import Ops, affine_index, every_other, for_loop, zero
from mlc.tiling_model import vector_length


def _source(dw: Depthwise) -> tuple[SSAValue, Sequence[int]]:
    """The image the kernel reads and where it sits in x (the padding before)."""
    if dw.padding is not None:
        return dw.padding.source, dw.padding.offsets
    x = dw.op.inputs[0]
    return x, [0] * len(dw.output_loops)


def vector_lanes(dw: Depthwise) -> int | None:
    """The lanes of a block (module docstring), or None where the kernel does not apply:
    x's last dim not read at unit stride, operands not row-major f32 or f64."""
    if dw.windows is None or dw.windows[-1].stride not in (1, 2):
        return None
    source, y = _source(dw)[0], dw.op.outputs[0]
    types = [source.type, y.type]
    if not all(isinstance(t, MemRefType) and is_row_major(t) for t in types):
        return None
    element = types[0].element_type  # pyright: ignore[reportAttributeAccessIssue]
    if not isinstance(element, AnyFloat) or element.bitwidth not in (32, 64):
        return None
    if types[1].element_type != element:  # pyright: ignore[reportAttributeAccessIssue]
        return None
    lanes = vector_length(element.bitwidth // 8)
    row = y.type.get_shape()[-1]  # pyright: ignore[reportAttributeAccessIssue]
    while row >= 0 and lanes > 4 and lanes // 2 >= row:
        lanes //= 2  # a short static row: the narrowest vector that holds it (4 lanes up)
    return lanes if lanes > 1 else None


def _lanes_between(b: Ops, low: SSAValue, high: SSAValue, mask: VectorType) -> SSAValue:
    """The lanes j with `low <= j < high` (`low <= high`)."""
    below_high = b(vector.CreateMaskOp([high], mask))
    below_low = b(vector.CreateMaskOp([low], mask))
    return b(arith.XOrIOp(below_high, below_low))


def _tap_read(
    b: Ops, dw: Depthwise, loops: Sequence[SSAValue]
) -> tuple[list[SSAValue], SSAValue | None]:
    """Where one tap reads the image at `loops` (its column at o = 0), the rows clamped
    into it, and whether they lie inside it (None: always)."""
    source, offsets = _source(dw)
    rank = len(dw.output_loops)
    where = [affine_index(b, e, loops) for e in dw.op.indexing_maps.data[0].data.results]
    inside: SSAValue | None = None
    for d in range(rank):
        if offsets[d]:
            where[d] = b.sub(where[d], b.index(offsets[d]))
        if dw.padding is not None and 2 <= d < rank - 1:
            valid = b(quick_ops.cmpi(where[d], b.dim(source, d), "ult"))  # 0 <= row < size
            where[d] = b(arith.SelectOp(valid, where[d], b.index(0)))
            inside = valid if inside is None else b(arith.AndIOp(inside, valid))
    return where, inside


def _nested(
    b: Ops, extents: Sequence[SSAValue], at: list[SSAValue], body: Callable[[Ops, list], None]
) -> None:
    """`body(ops, at + [o..])` in loops over `extents[len(at):]`, outermost first."""
    if len(at) == len(extents):
        body(b, at)
        return

    def inner(ib: Ops, o: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        _nested(ib, extents, [*at, o], body)
        return []

    for_loop(b, b.index(0), extents[len(at)], b.index(1), inner)


def _offset(dw: Depthwise, tap: Sequence[int], dim: int = -1) -> int:
    """Where a tap reads the image's dim `dim` (-1: columns, -2: rows) at output
    position 0 (static: `Window`)."""
    x_map = dw.op.indexing_maps.data[0].data
    point = [0] * x_map.num_dims
    for d, k in zip(dw.kernel, tap, strict=True):
        point[d] = k
    return x_map.results[dim].eval(point, []) - _source(dw)[1][dim]


def _column_reads(
    b: Ops, column: SSAValue, width: SSAValue, masks: VectorType, parts: int
) -> list[tuple[SSAValue, SSAValue]]:
    """The `parts` consecutive vectors of the image's row from `column` on: where each
    starts and the lanes of it inside the row."""
    lanes = masks.get_shape()[0]
    reads = []
    for p in range(parts):
        start = b.add(column, b.index(p * lanes)) if p else column
        low = b.sub(b.index(0), start)
        reads.append((start, _lanes_between(b, low, b.sub(width, start), masks)))
    return reads


def vector_rows(
    b: Ops,
    dw: Depthwise,
    extents: Sequence[SSAValue],
    nf: tuple[SSAValue, SSAValue],
    taps: Sequence[Tap],
    start: SSAValue | None,
) -> None:
    """Every output row of channel `f` of batch `n` (`nf`; y's dims: `extents`) in
    blocks of columns (module docstring), the accumulators starting at `start` (the
    channel's bias) if given, else at y; the blocks outermost, so that their column
    masks are made once for all rows."""
    lanes = vector_lanes(dw)
    assert lanes is not None
    source, y = _source(dw)[0], dw.op.outputs[0]
    element = source.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    values, masks = VectorType(element, [lanes]), VectorType(i1, [lanes])
    rank = len(dw.output_loops)
    width = b.dim(source, rank - 1)
    nothing = b(vector.CreateMaskOp([b.index(0)], masks))
    empty = _outside(b, dw, values)
    first = b(vector.BroadcastOp(start, values)) if start is not None else None
    weights = [b(vector.BroadcastOp(weight, values)) if weight else None for _, weight in taps]
    columns = [_offset(dw, tap) for tap, _ in taps]
    parts = dw.windows[-1].stride  # pyright: ignore[reportOptionalSubscript]
    step = b.index(parts)

    def block(bb: Ops, o0: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        stored = bb(vector.CreateMaskOp([bb.sub(extents[-1], o0)], masks))
        reads = {
            c: _column_reads(bb, bb.add(bb.mul(o0, step), bb.index(c)), width, masks, parts)
            for c in sorted(set(columns))
        }

        def row(rb: Ops, at: list[SSAValue]) -> None:
            loops: list[SSAValue] = [rb.index(0)] * (rank + len(dw.kernel))
            for d, value in zip(dw.output_loops, [*at, o0], strict=True):
                loops[d] = value
            y_at = [*at, o0]
            acc = first if first is not None else rb(vector.MaskedLoadOp(y, y_at, stored, empty))
            for (tap, _), splat, c in zip(taps, weights, columns, strict=True):
                for d, k in zip(dw.kernel, tap, strict=True):
                    loops[d] = rb.index(k)
                where, inside = _tap_read(rb, dw, loops)
                loaded = []
                for column, mask in reads[c]:
                    if inside is not None:
                        mask = rb(arith.SelectOp(inside, mask, nothing))
                    at_column = [*where[:-1], column]
                    loaded.append(rb(vector.MaskedLoadOp(source, at_column, mask, empty)))
                value = loaded[0] if parts == 1 else rb(every_other(*loaded))
                acc = rb(_combined(dw, value, splat, acc))
            rb.ops.append(vector.MaskedStoreOp(y, y_at, stored, acc))

        _nested(bb, extents[:-1], list(nf), row)
        return []

    for_loop(b, b.index(0), extents[-1], b.index(lanes), block)
    _finish(b, dw, extents, list(nf))


def _outside(b: Ops, dw: Depthwise, values: VectorType) -> SSAValue:
    """What a lane reading outside the image gives: the padding's value where it is
    absorbed (the lowest value for max pooling), else zero (lanes past the row)."""
    if dw.padding is None:
        return zero(b, values)
    return b(vector.BroadcastOp(b(arith.ConstantOp(dw.padding.value)), values))


def _combined(dw: Depthwise, value: SSAValue, weight: SSAValue | None, acc: SSAValue):
    """`acc + value * weight`, or pooling's combination of `value` into `acc`."""
    if dw.combine is None:
        assert weight is not None
        return vector.FMAOp(value, weight, acc)
    return type(dw.combine)(acc, value)


def _channel_inputs(b: Ops, dw: Depthwise, nf: Sequence[SSAValue]) -> dict[SSAValue, SSAValue]:
    """The epilogue's inputs read at the same place for the whole channel, loaded."""
    assert dw.epilogue is not None
    channel: list[SSAValue] = [b.index(0)] * (len(dw.output_loops) + len(dw.kernel))
    for d, value in zip(dw.output_loops[:2], nf, strict=True):
        channel[d] = value
    return {
        arg: b(memref.LoadOp.get(source, indices(b, map_, channel)))
        for arg, (source, map_) in dw.epilogue.inputs.items()
        if map_.used_dims() <= set(dw.output_loops[:2])
    }


def _vector_epilogue(b: Ops, dw: Depthwise, nf: Sequence[SSAValue], lanes: int):
    """
    The epilogue as a function of a block's accumulator, its scalar ops applied to
    whole vectors (the values from outside splatted), or None where it cannot be: an
    input read per pixel (a residual), `linalg.index`, an op outside `arith`. Applied
    before the block's store, it spares a scalar pass over the channel, which for
    images of 4 to 16 pixels cost more than the convolution.
    """
    epilogue = dw.epilogue
    if epilogue is None:
        return None
    ops = list(epilogue.body.ops)
    plain = all(
        isinstance(op, scf.YieldOp)
        or (
            op.dialect_name() == "arith"
            and all(isinstance(r.type, AnyFloat | IntegerType) for r in op.results)
        )
        for op in ops
    )
    per_channel = {m.used_dims() <= set(dw.output_loops[:2]) for _, m in epilogue.inputs.values()}
    if not plain or False in per_channel:
        return None
    loaded = _channel_inputs(b, dw, nf)

    def apply(vb: Ops, acc: SSAValue) -> SSAValue:
        mapping: dict[SSAValue, SSAValue] = {epilogue.accumulated: acc}

        def vector_of(value: SSAValue) -> SSAValue:
            if value not in mapping:  # from outside the epilogue: the same for every lane
                scalar = loaded.get(value, value)
                mapping[value] = vb(vector.BroadcastOp(scalar, VectorType(scalar.type, [lanes])))
            return mapping[value]

        for op in ops:
            if isinstance(op, scf.YieldOp):
                return vector_of(op.operands[0])
            if isinstance(op, arith.ConstantOp):
                scalar = vb(op.clone())
                mapping[op.result] = vb(
                    vector.BroadcastOp(scalar, VectorType(scalar.type, [lanes]))
                )
                continue
            new = type(op).create(
                operands=[vector_of(o) for o in op.operands],
                result_types=[VectorType(r.type, [lanes]) for r in op.results],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            vb.ops.append(new)
            mapping.update(zip(op.results, new.results, strict=True))
        raise AssertionError("an epilogue ends in scf.yield")

    return apply


def _finish(b: Ops, dw: Depthwise, extents: Sequence[SSAValue], nf: list[SSAValue]) -> None:
    """The fused epilogue over the channel's finished rows, in scalar loops. Its inputs
    read per channel (a Clip's bounds, a per-channel scale) are loaded once, before the
    loops: loaded inside, next to the stores into y, LLVM could not show they are not
    written, and left the loops scalar (a Clip after a depthwise conv ran 8x slower
    than a ReLU)."""
    if (epilogue := dw.epilogue) is None:
        return
    y = dw.op.outputs[0]
    loaded = _channel_inputs(b, dw, nf)

    def finish(eb: Ops, at: list[SSAValue]) -> None:
        loops: list[SSAValue] = [eb.index(0)] * (len(dw.output_loops) + len(dw.kernel))
        for d, value in zip(dw.output_loops, at, strict=True):
            loops[d] = value
        value = epilogue.apply(eb, loops, eb(memref.LoadOp.get(y, at)), loaded)
        eb.ops.append(memref.StoreOp.get(value, y, at))

    _nested(b, extents, nf, finish)


# ---------------------------------------------------------------------------
# Whole small images
# ---------------------------------------------------------------------------

# The most output pixels per channel swept as one flat image (`image_lanes`): a few
# vectors; beyond, rows of a vector or more use the lanes as well.
MAX_IMAGE = 64


def image_lanes(dw: Depthwise) -> int | None:
    """
    The lanes of a block when `dw`'s channel is swept as one flat image, or None.

    A 2-D window at stride 1 whose output rows are as wide as the image's reads tap t
    at flat pixel `p + r_t * W + c_t` for output pixel p (`r_t`, `c_t` its row and column
    offsets): consecutive output pixels, across rows, read consecutive pixels. So the
    image's 2x2 to 8x8 pixels fill whole vectors (rows of 2 filled 2 lanes of 4), each
    tap one masked load whose mask (the lanes whose pixel exists: inside the image, in
    the right row) is a constant, since the shapes are static.

    At stride 2 a block is two output rows of OW pixels (OW a power of two, 2 * OW lanes
    up to a vector):
    each tap reads 2 * OW pixels of each of the two image rows under it, and the even
    lanes of the two reads are the block (`every_other`).
    """
    if vector_lanes(dw) is None or len(dw.output_loops) != 4 or dw.windows is None:
        return None
    source, y = _source(dw)[0], dw.op.outputs[0]
    image = source.type.get_shape()[2:]  # pyright: ignore[reportAttributeAccessIssue]
    out = y.type.get_shape()[2:]  # pyright: ignore[reportAttributeAccessIssue]
    if min(*image, *out) < 1 or out[0] * out[1] > MAX_IMAGE:
        return None
    element = source.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    lanes = vector_length(element.bitwidth // 8)
    strides = {w.stride for w in dw.windows}
    if strides == {2}:
        power_of_two = out[1] & (out[1] - 1) == 0
        return 2 * out[1] if 2 <= out[1] and 2 * out[1] <= lanes and power_of_two else None
    if strides != {1} or out[1] != image[1]:
        return None
    while lanes > 4 and lanes // 2 >= out[0] * out[1]:
        lanes //= 2
    return lanes


def vector_images(
    b: Ops,
    dw: Depthwise,
    extents: Sequence[SSAValue],
    nf: tuple[SSAValue, SSAValue],
    taps: Sequence[Tap],
    start: SSAValue | None,
) -> None:
    """Channel `f` of batch `n` (`nf`) as one flat image in blocks of `image_lanes`
    pixels, the accumulators starting at `start` (the bias) if given, else at y."""
    lanes = image_lanes(dw)
    assert lanes is not None and dw.windows is not None
    source, y = _source(dw)[0], dw.op.outputs[0]
    image = Image(*source.type.get_shape()[2:], *y.type.get_shape()[2:])  # pyright: ignore[reportAttributeAccessIssue]
    values = VectorType(source.type.element_type, [lanes])  # pyright: ignore[reportAttributeAccessIssue]
    empty = _outside(b, dw, values)
    first = b(vector.BroadcastOp(start, values)) if start is not None else None
    weights = [b(vector.BroadcastOp(weight, values)) if weight else None for _, weight in taps]
    offsets = [(_offset(dw, tap, -2), _offset(dw, tap)) for tap, _ in taps]
    strided = dw.windows[0].stride == 2
    n, f, zero_i = *nf, b.index(0)
    epilogue = _vector_epilogue(b, dw, nf, lanes)

    def read(start: int, bits: Sequence[bool]) -> SSAValue:
        at = [n, f, zero_i, b.index(start)]
        return b(vector.MaskedLoadOp(source, at, constant_mask(b, bits), empty))

    rows = RowLoads(image, lanes, read) if strided and dw.combine is not None else None
    total = image.rows * image.columns
    for p0 in range(0, total, lanes):
        pixels = [divmod(p, image.columns) if p < total else None for p in range(p0, p0 + lanes)]
        stored = constant_mask(b, [p is not None for p in pixels])
        y_at = [n, f, zero_i, b.index(p0)]
        acc = first if first is not None else b(vector.MaskedLoadOp(y, y_at, stored, empty))
        pooled = None
        if rows is not None and dw.combine is not None:  # `pooling_images`
            pooled = pooled_taps(b, dw.combine, image, p0 // image.columns, offsets, rows, empty)
        for value in pooled or ():
            acc = b(_combined(dw, value, None, acc))
        for splat, (r, c) in zip(weights, offsets, strict=True) if pooled is None else ():
            if strided:
                value = _strided_tap(b, image, p0 // image.columns, r, c, lanes, read, empty)
            else:
                bits = [p is not None and image.inside(p[0] + r, p[1] + c) for p in pixels]
                value = read(p0 + r * image.width + c, bits) if any(bits) else None
            if value is not None:  # else every pixel of the block reads padding: nothing
                acc = b(_combined(dw, value, splat, acc))
        acc = epilogue(b, acc) if epilogue is not None else acc
        b.ops.append(vector.MaskedStoreOp(y, y_at, stored, acc))
    if epilogue is None:
        _finish(b, dw, extents, list(nf))


def _strided_tap(
    b: Ops,
    image: Image,
    top: int,
    r: int,
    c: int,
    lanes: int,
    read: Callable[[int, Sequence[bool]], SSAValue],
    empty: SSAValue,
) -> SSAValue | None:
    """One tap of a stride-2 block of output rows `top` and `top + 1`: the even lanes of
    the two image rows it reads (`image_lanes`), or None where both lie in padding."""
    halves: list[SSAValue | None] = []
    for o in (top, top + 1):
        row = 2 * o + r
        bits = [o < image.rows and image.inside(row, c + e) for e in range(lanes)]
        halves.append(read(row * image.width + c, bits) if any(bits) else None)
    if halves == [None, None]:
        return None
    even, odd = (h if h is not None else empty for h in halves)
    return b(every_other(even, odd))


def vector_channel(
    b: Ops,
    dw: Depthwise,
    extents: Sequence[SSAValue],
    nf: tuple[SSAValue, SSAValue],
    taps: Sequence[Tap],
    start: SSAValue | None,
) -> None:
    """Channel `f` of batch `n` in vectors: one flat image where `image_lanes` applies,
    else row by row (`vector_rows`)."""
    kernel = vector_images if image_lanes(dw) is not None else vector_rows
    kernel(b, dw, extents, nf, taps, start)

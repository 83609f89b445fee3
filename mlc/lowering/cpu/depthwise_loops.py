"""
The loop nest of `mlc.lowering.cpu.depthwise_conv` (its docstring), built for one
`Depthwise`: a parallel loop over (n, channel), the channel's weights and bias loaded
once, then the output rows; each row by the vector kernel
(`mlc.lowering.cpu.depthwise_vectors`) where it applies, else by scalar loops that
LLVM vectorises, their borders split off and masked where the padding is absorbed.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref
from xdsl.ir import Operation, SSAValue

from mlc.lowering.cpu.depthwise_conv import Depthwise, Tap, taps_of
from mlc.lowering.cpu.depthwise_vectors import vector_channel, vector_lanes
from mlc.lowering.linalg.absorbed_padding import fill_constant, frees_between
from mlc.lowering.linalg.contraction import indices
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import (
    Ops,
    affine_index,
    for_loop,
    if_then,
    less,
    parallel_loop,
)


def _read(b: Ops, dw: Depthwise, loops: Sequence[SSAValue], masked: bool) -> SSAValue:
    """x at `loops` through its map: from the image itself when the padding is absorbed,
    the padding value where `masked` and the position lies outside the image."""
    x = dw.op.inputs[0]
    at = [affine_index(b, e, loops) for e in dw.op.indexing_maps.data[0].data.results]
    if dw.padding is None:
        return b(memref.LoadOp.get(x, at))
    source, offsets = dw.padding.source, dw.padding.offsets
    inside: SSAValue | None = None
    for d, offset in enumerate(offsets):
        if offset:
            at[d] = b.sub(at[d], b.index(offset))
        if masked and d >= 2:
            valid = b(quick_ops.cmpi(at[d], b.dim(source, d), "ult"))  # 0 <= at < size
            at[d] = b(arith.SelectOp(valid, at[d], b.index(0)))
            inside = valid if inside is None else b(arith.AndIOp(inside, valid))
    value = b(memref.LoadOp.get(source, at))
    if inside is None:
        return value
    padding = b(arith.ConstantOp(dw.padding.value))
    return b(arith.SelectOp(inside, value, padding))


Step = tuple[bool, bool, SSAValue | None]
"""A pass over a row: (the last pass, reads masked, the bias to start from)."""


def _output(b: Ops, dw: Depthwise, at: Sequence[SSAValue], taps: Sequence[Tap], step: Step):
    """`y[at] += x * w` over `taps` (position, weight), or pooling's combination of x
    into y, then the epilogue after the last pass; the first pass starts from the bias
    where it was absorbed."""
    last, masked, start = step
    op = dw.op
    y = op.outputs[0]
    maps = [m.data for m in op.indexing_maps.data]
    block = op.body.block
    first, second = list(block.ops)[:2]
    loops: list[SSAValue] = [b.index(0)] * (len(dw.output_loops) + len(dw.kernel))
    for d, value in zip(dw.output_loops, at, strict=True):
        loops[d] = value
    out_at = indices(b, maps[-1], loops)
    acc = start if start is not None else b(memref.LoadOp.get(y, out_at))
    for tap, weight in taps:
        for d, k in zip(dw.kernel, tap, strict=True):
            loops[d] = b.index(k)
        value = _read(b, dw, loops, masked)
        if dw.combine is not None:  # pooling: no weight
            acc = b(first.clone(value_mapper={block.args[-1]: acc, block.args[0]: value}))
            continue
        product = b(first.clone(value_mapper={block.args[0]: value, block.args[1]: weight}))
        acc = b(second.clone(value_mapper={block.args[-1]: acc, first.results[0]: product}))
    if last and dw.epilogue is not None:
        acc = dw.epilogue.apply(b, loops, acc)
    b.ops.append(memref.StoreOp.get(acc, y, out_at))


def _passes(dw: Depthwise, taps: list[Tap]) -> list[list[Tap]]:
    """
    The taps each pass over an output row adds: all of them in one pass at stride 1 (or
    on a short row); at a larger stride one pass per tap, then one for the epilogue, so
    that each pass reads x at one stride and offset, which LLVM vectorises (as loads of
    two vectors and a shuffle), where nine interleaved reads in one loop stayed scalar.
    """
    if dw.one_pass:
        return [taps]
    return [[tap] for tap in taps] + ([[]] if dw.epilogue is not None else [])


Bounds = list[tuple[SSAValue, SSAValue]]


def _interior(b: Ops, dw: Depthwise, extents: Sequence[SSAValue]) -> Bounds:
    """
    Per spatial dim, the output positions `[lo, hi)` whose taps all read inside the
    image: `o * s + lowest - pad >= 0` and `o * s + highest - pad < size`.
    """
    assert dw.padding is not None and dw.windows is not None
    bounds = []
    for window in dw.windows:
        pad, out = dw.padding.offsets[window.dim], extents[window.dim]
        lo = b.min(b.index(max(0, -((window.lowest - pad) // window.stride))), out)
        size = b.dim(dw.padding.source, window.dim)
        room = b.add(size, b.index(pad - window.highest - 1))
        past = b.add(b(arith.FloorDivSIOp(room, b.index(window.stride))), b.index(1))
        hi = b(arith.MaxSIOp(lo, b.min(past, out)))
        bounds.append((lo, hi))
    return bounds


def _row(
    b: Ops,
    at: list[SSAValue],
    bounds: Bounds | None,
    extents: Sequence[SSAValue],
    columns: Callable[[Ops, list[SSAValue], list[tuple[SSAValue, SSAValue, bool]]], None],
) -> None:
    """The row at `at` (the output dims but the last): its columns as one range without
    padding; with it, on interior rows, the borders masked around an interior that is
    not, and on border rows, masked throughout."""
    zero = b.index(0)
    if bounds is None:
        columns(b, at, [(zero, extents[-1], False)])
        return
    lo, hi = bounds[-1]
    split = [(zero, lo, True), (lo, hi, False), (hi, extents[-1], True)]
    inside: SSAValue | None = None
    for o, (lo_d, hi_d) in zip(at[2:], bounds[:-1], strict=True):
        within = b(arith.AndIOp(less(b, o, hi_d), b(quick_ops.cmpi(o, lo_d, "sge"))))
        inside = within if inside is None else b(arith.AndIOp(inside, within))
    if inside is None:
        columns(b, at, split)
        return
    masked = [(zero, extents[-1], True)]
    if_then(b, inside, lambda ib: columns(ib, at, split), lambda ob: columns(ob, at, masked))


def _bias(b: Ops, dw: Depthwise, n: SSAValue, f: SSAValue) -> SSAValue | None:
    """The bias of channel `f` or the constant y was filled with, where it was
    absorbed, else None."""
    if dw.fill is not None:
        return b(arith.ConstantOp(fill_constant(dw.fill)))  # pyright: ignore[reportArgumentType]
    if dw.bias is None:
        return None
    zeros = [b.index(0)] * (len(dw.output_loops) - 2)
    at = indices(b, dw.bias.get_indexing_maps().data[0].data, [n, f, *zeros])
    return b(memref.LoadOp.get(dw.bias.inputs[0], at))


def depthwise_nest(dw: Depthwise) -> list[Operation]:
    """The loop nest of the module docstring, in place of `dw.op`."""
    w, y = dw.op.inputs[1], dw.op.outputs[0]
    b = Ops()
    zero_i, one = b.index(0), b.index(1)
    extents = [b.dim(y, d) for d in range(len(dw.output_loops))]
    lanes = vector_lanes(dw)
    bounds = _interior(b, dw, extents) if dw.padding is not None and lanes is None else None

    def channel(cb: Ops, t: SSAValue) -> None:
        n, f = cb(arith.DivSIOp(t, extents[1])), cb(arith.RemSIOp(t, extents[1]))
        positions = taps_of(dw.sizes)
        weights = [
            None if dw.combine is not None else cb(memref.LoadOp.get(w, [f, *map(cb.index, tap)]))
            for tap in positions
        ]
        passes = _passes(dw, list(zip(positions, weights, strict=True)))
        start = _bias(cb, dw, n, f)

        def columns(rb: Ops, at: list[SSAValue], ranges: list[tuple[SSAValue, SSAValue, bool]]):
            """Every pass over the row at `at`, its columns in `ranges` (lo, hi, masked)."""
            for p, taps in enumerate(passes):
                for lo, hi, masked in ranges:
                    step = (p + 1 == len(passes), masked, start if p == 0 else None)

                    def column(eb: Ops, o: SSAValue, _: Sequence[SSAValue], taps=taps, step=step):
                        _output(eb, dw, [*at, o], taps, step)
                        return []

                    for_loop(rb, lo, hi, one, column)

        def nest(nb: Ops, at: list[SSAValue]) -> None:
            """The loops of the output dims from `len(at)` on; each row by `_row`."""
            if len(at) + 1 == len(extents):
                _row(nb, at, bounds, extents, columns)
                return

            def inner(ib: Ops, o: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                nest(ib, [*at, o])
                return []

            for_loop(nb, zero_i, extents[len(at)], one, inner)

        if lanes is not None:
            taps = list(zip(positions, weights, strict=True))
            vector_channel(cb, dw, extents, (n, f), taps, start)
        else:
            nest(cb, [n, f])

    parallel_loop(b, zero_i, b.mul(extents[0], extents[1]), one, channel)
    return b.ops + _kept_alive(dw)


def absorbed_frees(dw: Depthwise) -> list[Operation]:
    """
    The frees of the image and of the bias between the ops the nest absorbs and the
    convolution (the padded copy or the broadcast was their last use): they must wait
    for the nest, which now reads those buffers itself.
    """
    frees: list[Operation] = []
    if dw.padding is not None:
        frees += frees_between(dw.padding.source, dw.padding.ops[0], dw.op)
    if dw.bias is not None:
        frees += frees_between(dw.bias.inputs[0], dw.bias, dw.op)
    return frees


def _kept_alive(dw: Depthwise) -> list[Operation]:
    """`absorbed_frees`, detached to go after the nest."""
    frees = absorbed_frees(dw)
    for free in frees:
        free.detach()
    return frees


def absorbed(dw: Depthwise) -> list[Operation]:
    """The ops `depthwise_nest` made redundant, in the order to erase them after it."""
    starts = [start for start in (dw.bias, dw.fill) if start is not None]
    return starts + (dw.padding.ops if dw.padding else [])

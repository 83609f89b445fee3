"""
The loop nest `linalg-tile` puts in place of a depthwise convolution on memrefs.

A depthwise convolution as `convert-ml-to-linalg` builds it (one channel per group,
padding already applied to a copy of the image),

    loops (n, f, o.., k.., ow)       reductions: the kernel loops k..
    y[n, f, o.., ow] += x[n, f, o*s + k*d .., ow*s + kw*d] * w[f, k..]

is a matmul of one row per channel (M = 1, K = the taps): the implicit GEMM's register
block of MR rows wasted most of its FMAs and its packing copied the image per channel.
Here every tap's weight is a scalar loaded once per channel, and each output row is
finished in one pass, the taps unrolled:

    scf.parallel t in [0, N*C):                 n = t / C, f = t % C
      w_k = w[f, k]                             for each of the T taps (static kernel)
      for o.. (the output dims but the last):
        for ow:                                 LLVM vectorises this loop along ow
          acc = y[n, f, o.., ow]                (the bias or zeros)
          acc += x[n, f, o*s + k*d .., ow*s + kw*d] * w_k    for each tap k
          y[n, f, o.., ow] = epilogue(acc)      (a fused relu, clip, ...)

Each output element stays in a register across the taps instead of being loaded and
stored once per tap, and the innermost loop has no loop inside it, so LLVM's loop
vectoriser takes it at stride 1. At a larger stride it did not (nine interleaved reads),
so a row of at least `MIN_STRIDED_ROW` columns (or of dynamic width) is swept once per
tap, each sweep `y[.., ow] += x[.., ow*s + c] * w_k` at one stride (vectorised as loads
of two vectors and a shuffle), then once for the epilogue. A kernel of more than
`MAX_TAPS` taps, or of dynamic size, is left to the generic lowering.

The padded copy of the image and the bias broadcast into y before the convolution
(`mlc.lowering.linalg.absorbed_padding`) are absorbed: the kernel reads the image
itself and each output element starts at its channel's bias, so a padded convolution
with a bias is one kernel, not four (fill, copy, bias, conv). Each spatial dim's
output positions split into an interior, whose taps all read inside the image, and
the borders around it (`_Window`). A row of interior rows runs three column loops:
the left border, the interior without any check (the loop above, vectorised), the
right border; a border row runs one. In the border loops every read is masked: its
index clamped into the image and the padding value selected where it lies outside.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from mlc.lowering.linalg.absorbed_padding import Padding, bias_before, unpadded
from mlc.lowering.linalg.contraction import (
    Epilogue,
    epilogue_of,
    float_buffers,
    indices,
    multiply_add,
)
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import (
    Ops,
    affine_index,
    for_loop,
    if_then,
    less,
    parallel_loop,
)

MAX_TAPS = 64

# The shortest strided output row worth one pass per tap (`_passes`): LLVM left shorter
# ones scalar anyway (8 columns at stride 2), and then one pass of all taps, the sum in a
# register, is the faster.
MIN_STRIDED_ROW = 16


@dataclass
class Depthwise:
    """A depthwise convolution generic, read (module docstring)."""

    op: GenericOp
    output_loops: list[int]
    """The loops of y's dims, in order: (n, f, o.., ow)."""

    kernel: list[int]
    """The reduction loops, in w's order, and their static sizes."""

    sizes: list[int]

    epilogue: Epilogue | None

    one_pass: bool
    """Whether each output row takes one pass of all taps (`_passes`)."""

    padding: Padding | None = None
    """The padded copy of x the kernel reads through (module docstring)."""

    windows: "list[_Window] | None" = None
    """With `padding`: each spatial dim's window geometry."""

    bias: GenericOp | None = None
    """The broadcast of a per-channel bias into y that the accumulators start at."""


def _plain_dims(map_: AffineMap) -> list[int] | None:
    if not all(isinstance(e, AffineDimExpr) for e in map_.results):
        return None
    return [e.position for e in map_.results]  # pyright: ignore[reportAttributeAccessIssue]


def depthwise_of(op: GenericOp) -> Depthwise | None:
    """`op` as a depthwise convolution (module docstring), or None."""
    if op.res or len(op.inputs) < 2 or len(op.outputs) != 1:
        return None  # on tensors, or not a conv's operands
    maps = [m.data for m in op.indexing_maps.data]
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    reductions = [d for d, it in enumerate(op.iterator_types.data) if it.data.value != "parallel"]
    y_dims, w_dims = _plain_dims(maps[-1]), _plain_dims(maps[1])
    if y_dims is None or w_dims is None or len(y_dims) < 3 or not reductions:
        return None
    if w_dims != [y_dims[1], *reductions]:
        return None  # not one weight per channel and tap
    if sorted(y_dims + reductions) != list(range(len(op.iterator_types))):
        return None  # a loop y does not index is not one of the taps
    if not float_buffers(op, (x, w, y)) or (found := multiply_add(op.body.block)) is None:
        return None
    sizes = w.type.get_shape()[1:]  # pyright: ignore[reportAttributeAccessIssue]
    if any(s < 0 for s in sizes) or not 0 < prod(sizes) <= MAX_TAPS:
        return None  # a dynamic or large kernel: the generic loops do
    rest, total = found
    epilogue = None
    if len(rest) > 1 or len(op.inputs) > 2:
        epilogue = epilogue_of(op, rest, total, dict(zip(reductions, sizes, strict=True)))
        if epilogue is None:
            return None
    loops = len(op.iterator_types)
    column = [int(d == y_dims[-1]) for d in range(loops)]
    last = maps[0].results[-1]
    unit = last.eval(column, []) - last.eval([0] * loops, []) == 1
    row = y.type.get_shape()[-1]  # pyright: ignore[reportAttributeAccessIssue]
    one_pass = unit or 0 <= row < MIN_STRIDED_ROW
    return _absorbing(Depthwise(op, y_dims, reductions, list(sizes), epilogue, one_pass))


def _absorbing(dw: Depthwise) -> Depthwise:
    """`dw` with the padded copy of x and the bias before it that it can absorb."""
    op = dw.op
    if (padding := unpadded(op, op.inputs[0])) is not None and isinstance(padding.value, FloatAttr):
        x_map = op.indexing_maps.data[0].data
        windows = _windows(x_map, dw.output_loops, dw.kernel, _taps(dw.sizes))
        if windows is not None and not any(padding.offsets[:2]):
            dw.padding, dw.windows = padding, windows
    bias = bias_before(op)
    if bias is not None and bias.get_indexing_maps().data[0].data.used_dims() <= {1}:
        dw.bias = bias
    return dw


@dataclass
class _Window:
    """One spatial dim of x's map, `o * stride + offset(tap)`, `o` its output loop."""

    dim: int
    """The dim of x (and y) this is."""

    stride: int
    lowest: int
    """The smallest offset over the taps."""

    highest: int
    """The largest offset over the taps."""


def _windows(
    x_map: AffineMap, y_dims: Sequence[int], kernel: Sequence[int], taps: Sequence[tuple[int, ...]]
) -> list[_Window] | None:
    """Each spatial dim of x's map as a `_Window`, or None where one is not of that form."""
    if _plain_dims(AffineMap(x_map.num_dims, 0, x_map.results[:2])) != list(y_dims[:2]):
        return None
    windows = []
    for d in range(2, len(y_dims)):
        expr, o = x_map.results[d], y_dims[d]
        if not expr.used_dims() <= {o, *kernel}:
            return None

        def at(out: int, tap: Sequence[int], expr=expr, o=o) -> int:
            point = [0] * x_map.num_dims
            point[o] = out
            for k, value in zip(kernel, tap, strict=True):
                point[k] = value
            return expr.eval(point, [])

        offsets = [at(0, t) for t in taps]
        stride = at(1, taps[0]) - offsets[0]
        if stride < 1 or at(2, taps[0]) - offsets[0] != 2 * stride or min(offsets) < 0:
            return None
        windows.append(_Window(d, stride, min(offsets), max(offsets)))
    return windows


def _taps(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every kernel position, row-major."""
    taps: list[tuple[int, ...]] = [()]
    for size in sizes:
        taps = [(*t, k) for t in taps for k in range(size)]
    return taps


Tap = tuple[tuple[int, ...], SSAValue]


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
    """`y[at] += x * w` over `taps` (position, weight), then the epilogue after the last
    pass; the first pass starts from the bias where it was absorbed."""
    last, masked, start = step
    op = dw.op
    y = op.outputs[0]
    maps = [m.data for m in op.indexing_maps.data]
    block = op.body.block
    mul, add = list(block.ops)[:2]
    loops: list[SSAValue] = [b.index(0)] * (len(dw.output_loops) + len(dw.kernel))
    for d, value in zip(dw.output_loops, at, strict=True):
        loops[d] = value
    out_at = indices(b, maps[-1], loops)
    acc = start if start is not None else b(memref.LoadOp.get(y, out_at))
    for tap, weight in taps:
        for d, k in zip(dw.kernel, tap, strict=True):
            loops[d] = b.index(k)
        value = _read(b, dw, loops, masked)
        product = b(mul.clone(value_mapper={block.args[0]: value, block.args[1]: weight}))
        acc = b(add.clone(value_mapper={block.args[-1]: acc, mul.results[0]: product}))
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


def depthwise_nest(dw: Depthwise) -> list[Operation]:
    """The loop nest of the module docstring, in place of `dw.op`."""
    w, y = dw.op.inputs[1], dw.op.outputs[0]
    b = Ops()
    zero_i, one = b.index(0), b.index(1)
    extents = [b.dim(y, d) for d in range(len(dw.output_loops))]
    bounds = _interior(b, dw, extents) if dw.padding is not None else None

    def channel(cb: Ops, t: SSAValue) -> None:
        n, f = cb(arith.DivSIOp(t, extents[1])), cb(arith.RemSIOp(t, extents[1]))
        positions = _taps(dw.sizes)
        weights = [cb(memref.LoadOp.get(w, [f, *(cb.index(k) for k in tap)])) for tap in positions]
        passes = _passes(dw, list(zip(positions, weights, strict=True)))
        start = None
        if dw.bias is not None:
            bias_map = dw.bias.get_indexing_maps().data[0].data
            at = indices(cb, bias_map, [n, f, *([zero_i] * (len(extents) - 2))])
            start = cb(memref.LoadOp.get(dw.bias.inputs[0], at))

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

        nest(cb, [n, f])

    parallel_loop(b, zero_i, b.mul(extents[0], extents[1]), one, channel)
    return b.ops


def absorbed(dw: Depthwise) -> list[Operation]:
    """The ops `depthwise_nest` made redundant, in the order to erase them after it."""
    return ([dw.bias] if dw.bias is not None else []) + (dw.padding.ops if dw.padding else [])

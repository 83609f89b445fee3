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

Pooling is the same window without weights: a max or average pooling generic
(`convert-ml-to-linalg`, `(n, c, o.., k.., ow)` once its loops are read in y's order)
whose body combines each window element into y (`maximumf` or `addf`) runs the same
nest with that combination in place of the multiply-add (`Depthwise.combine`), its
padding value (the lowest value, or zero) what a read outside the image gives. Its tiny
static rows otherwise went to LLVM fully unrolled, and LLVM vectorised the channel loop
with gathers (8 x 64 x 16 x 16, 3x3 stride 2: 0.12x onnxruntime).

The padded copy of the image and the bias broadcast into y before the convolution, or
the constant y is filled with (a max pooling's lowest value, zeros)
(`mlc.lowering.linalg.absorbed_padding`) are absorbed: the kernel reads the image
itself and each output element starts at its channel's bias (or the constant), so a
padded convolution with a bias is one kernel, not four (fill, copy, bias, conv). Each spatial dim's
output positions split into an interior, whose taps all read inside the image, and
the borders around it (`Window`). A row of interior rows runs three column loops:
the left border, the interior without any check (the loop above, vectorised), the
right border; a border row runs one. In the border loops every read is masked: its
index clamped into the image and the padding value selected where it lies outside.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from mlc.lowering.linalg.absorbed_padding import Padding, bias_before, fill_before, unpadded
from mlc.lowering.linalg.contraction import (
    Epilogue,
    epilogue_of,
    float_buffers,
    multiply_add,
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

    windows: "list[Window] | None" = None
    """Each spatial dim's window geometry, where x's map is of that form."""

    bias: GenericOp | None = None
    """The broadcast of a per-channel bias into y that the accumulators start at."""

    fill: GenericOp | None = None
    """The constant fill of y that the accumulators start at, where there is no bias."""

    combine: Operation | None = None
    """Pooling's `maximumf` / `addf` of y and x (module docstring); None: `y += x * w`."""


def _plain_dims(map_: AffineMap) -> list[int] | None:
    if not all(isinstance(e, AffineDimExpr) for e in map_.results):
        return None
    return [e.position for e in map_.results]  # pyright: ignore[reportAttributeAccessIssue]


def depthwise_of(op: GenericOp) -> Depthwise | None:
    """`op` as a depthwise convolution or a pooling window (module docstring), or None."""
    if op.res or len(op.inputs) < 2 or len(op.outputs) != 1:
        return None  # on tensors, or not a conv's operands
    maps = [m.data for m in op.indexing_maps.data]
    y = op.outputs[0]
    reductions = [d for d, it in enumerate(op.iterator_types.data) if it.data.value != "parallel"]
    y_dims, w_dims = _plain_dims(maps[-1]), _plain_dims(maps[1])
    if y_dims is None or w_dims is None or len(y_dims) < 3 or not reductions:
        return None
    if sorted(y_dims + reductions) != list(range(len(op.iterator_types))):
        return None  # a loop y does not index is not one of the taps
    if (found := _taps(op, w_dims == reductions, w_dims == [y_dims[1], *reductions])) is None:
        return None
    sizes, combine = found
    if any(s < 0 for s in sizes) or not 0 < prod(sizes) <= MAX_TAPS:
        return None  # a dynamic or large kernel: the generic loops do
    epilogue = None
    if combine is None and (fused := multiply_add(op.body.block)) is not None:
        rest, total = fused
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
    dw = Depthwise(op, y_dims, reductions, list(sizes), epilogue, one_pass, combine=combine)
    return _absorbing(dw)


def _taps(
    op: GenericOp, window: bool, weighted: bool
) -> tuple[tuple[int, ...], Operation | None] | None:
    """The kernel's sizes and pooling's combination (None for a convolution), if `op`
    is a pooling `window` (w is its shape, never read) or a `weighted` window (w one
    weight per channel and tap); else None."""
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    shape = tuple(w.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
    if window and len(op.inputs) == 2:
        if float_buffers(op, (x, y)) and (combine := window_combine(op.body.block)):
            return shape, combine
    elif weighted and float_buffers(op, (x, w, y)) and multiply_add(op.body.block):
        return shape[1:], None
    return None


def window_combine(block: Block) -> Operation | None:
    """The op of a pooling body `yield maximumf(y, x)` or `yield addf(y, x)` (either
    order), or None."""
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[1], YieldOp):
        return None
    combine, x, y = ops[0], block.args[0], block.args[-1]
    if not isinstance(combine, arith.MaximumfOp | arith.AddfOp):
        return None
    if {combine.lhs, combine.rhs} != {x, y} or list(ops[1].operands) != [combine.result]:
        return None
    return combine


def _absorbing(dw: Depthwise) -> Depthwise:
    """`dw` with the padded copy of x and the bias before it that it can absorb."""
    op = dw.op
    x_map = op.indexing_maps.data[0].data
    dw.windows = _windows(x_map, dw.output_loops, dw.kernel, taps_of(dw.sizes))
    padding = unpadded(op, op.inputs[0])
    if padding is not None and isinstance(padding.value, FloatAttr) and dw.windows is not None:
        if not any(padding.offsets[:2]):
            dw.padding = padding
    bias = bias_before(op) if dw.combine is None else None
    if bias is not None and bias.get_indexing_maps().data[0].data.used_dims() <= {1}:
        dw.bias = bias
    else:
        dw.fill = fill_before(op)
    return dw


@dataclass
class Window:
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
) -> list[Window] | None:
    """Each spatial dim of x's map as a `Window`, or None where one is not of that form."""
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
        windows.append(Window(d, stride, min(offsets), max(offsets)))
    return windows


def taps_of(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every kernel position, row-major."""
    taps: list[tuple[int, ...]] = [()]
    for size in sizes:
        taps = [(*t, k) for t in taps for k in range(size)]
    return taps


Tap = tuple[tuple[int, ...], SSAValue | None]
"""A kernel position and its weight (None: pooling's, which has none)."""

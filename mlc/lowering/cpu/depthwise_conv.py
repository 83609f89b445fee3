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
"""

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from mlc.lowering.linalg.contraction import (
    Epilogue,
    epilogue_of,
    float_buffers,
    indices,
    multiply_add,
)
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import Ops, affine_index, for_loop, parallel_loop

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
    return Depthwise(op, y_dims, reductions, list(sizes), epilogue, one_pass)


def _taps(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every kernel position, row-major."""
    taps: list[tuple[int, ...]] = [()]
    for size in sizes:
        taps = [(*t, k) for t in taps for k in range(size)]
    return taps


Tap = tuple[tuple[int, ...], SSAValue]


def _output(b: Ops, dw: Depthwise, at: Sequence[SSAValue], taps: Sequence[Tap], last: bool) -> None:
    """`y[at] += x * w` over `taps` (position, weight), then the epilogue if `last`."""
    op = dw.op
    x, y = op.inputs[0], op.outputs[0]
    maps = [m.data for m in op.indexing_maps.data]
    block = op.body.block
    mul, add = list(block.ops)[:2]
    loops: list[SSAValue] = [b.index(0)] * (len(dw.output_loops) + len(dw.kernel))
    for d, value in zip(dw.output_loops, at, strict=True):
        loops[d] = value
    out_at = indices(b, maps[-1], loops)
    acc = b(quick_ops.load(y, out_at))
    for tap, weight in taps:
        for d, k in zip(dw.kernel, tap, strict=True):
            loops[d] = b.index(k)
        value = b(quick_ops.load(x, [affine_index(b, e, loops) for e in maps[0].results]))
        product = b(mul.clone(value_mapper={block.args[0]: value, block.args[1]: weight}))
        acc = b(add.clone(value_mapper={block.args[-1]: acc, mul.results[0]: product}))
    if last and dw.epilogue is not None:
        acc = dw.epilogue.apply(b, loops, acc)
    b.ops.append(quick_ops.store(acc, y, out_at))


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


def depthwise_nest(dw: Depthwise) -> list[Operation]:
    """The loop nest of the module docstring, in place of `dw.op`."""
    w, y = dw.op.inputs[1], dw.op.outputs[0]
    b = Ops()
    zero_i, one = b.index(0), b.index(1)
    extents = [b.dim(y, d) for d in range(len(dw.output_loops))]

    def channel(cb: Ops, t: SSAValue) -> None:
        n, f = cb(arith.DivSIOp(t, extents[1])), cb(arith.RemSIOp(t, extents[1]))
        positions = _taps(dw.sizes)
        weights = [cb(quick_ops.load(w, [f, *(cb.index(k) for k in tap)])) for tap in positions]
        passes = _passes(dw, list(zip(positions, weights, strict=True)))

        def nest(nb: Ops, at: list[SSAValue]) -> None:
            """The loops of the output dims from `len(at)` on; each row in `passes`."""
            if len(at) + 1 == len(extents):
                for p, taps in enumerate(passes):

                    def column(eb: Ops, o: SSAValue, _: Sequence[SSAValue], taps=taps, p=p):
                        _output(eb, dw, [*at, o], taps, p + 1 == len(passes))
                        return []

                    for_loop(nb, zero_i, extents[-1], one, column)
                return

            def inner(ib: Ops, o: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                nest(ib, [*at, o])
                return []

            for_loop(nb, zero_i, extents[len(at)], one, inner)

        nest(cb, [n, f])

    parallel_loop(b, zero_i, b.mul(extents[0], extents[1]), one, channel)
    return b.ops

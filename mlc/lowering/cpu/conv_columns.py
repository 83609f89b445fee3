"""
The rows and columns of X', a convolution's im2col matrix (`mlc.lowering.cpu.conv_gemm`),
as the convolution's loops: a column is a point of the output's spatial loops, a row
one of its reduction loops. Shared by the packings of its B panels.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import VectorType
from xdsl.ir import SSAValue

from mlc.lowering.cpu.matmul_packing import batch_indices
from mlc.lowering.linalg.contraction import Image
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import Ops, for_loop, if_then, less, zero
from mlc.tiling_model import MatmulTiles


def at_column(
    b: Ops, image: Image, loops: Sequence[SSAValue], j: SSAValue, sizes: Sequence[SSAValue]
) -> list[SSAValue]:
    """`loops` with the spatial loops set to those of column `j` of X'."""
    at = list(loops)
    for d, value in zip(image.spatial, batch_indices(b, j, sizes), strict=True):
        at[d] = value
    return at


def over_reductions(
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


def row_pieces(
    b: Ops,
    panel: tuple[SSAValue, list[SSAValue]],
    columns: tuple[SSAValue, SSAValue, SSAValue],
    tiles: MatmulTiles,
    kept: VectorType,
    piece: Callable[[Ops, SSAValue, SSAValue], None],
) -> None:
    """
    A panel of X' from column `j0` (of N, output rows `width` wide) cut at row ends:
    `piece(b, j, hi)` for each run of at most VL columns from `j` to before `hi`, the
    end of its row in the panel. A panel reaching past N is zeroed first. Shared by the
    packers of narrow rows (`conv_packing`) and of padded images (`conv_padded_packing`).
    """
    packed, at_panel = panel
    j0, n, width = columns
    vl, nr, one = b.index(tiles.vector), b.index(tiles.nr), b.index(1)
    end = b.min(b.add(j0, nr), n)

    def zeroed(zb: Ops) -> None:
        zeros = zero(zb, kept)

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

        def run(cb: Ops, j: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            piece(cb, j, hi)
            return []

        for_loop(rb, lo, hi, vl, run)
        return []

    first = b(arith.DivSIOp(j0, width))
    last = b.add(b(arith.DivSIOp(b.sub(end, one), width)), one)
    for_loop(b, first, last, one, row)

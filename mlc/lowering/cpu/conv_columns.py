"""
The rows and columns of X', a convolution's im2col matrix (`mlc.lowering.cpu.conv_gemm`),
as the convolution's loops: a column is a point of the output's spatial loops, a row
one of its reduction loops. Shared by the packings of its B panels.
"""

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue

from mlc.lowering.cpu.matmul_packing import batch_indices
from mlc.lowering.linalg.contraction import Image
from mlc.lowering.support.loop_builder import Ops, for_loop


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

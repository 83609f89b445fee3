"""
The tasks of a convolution run as an implicit GEMM (`mlc.lowering.cpu.conv_gemm`) whose
tasks pack the B panels they consume (`conv_packing.pack_task_image`).

Packed up front, the panels of the whole batch (DenseNet's 3x3 at batch 8: 590 KB) are
written by every thread into one buffer, which the tasks then read back wherever it
landed: from memory the previous layer evicted, or from the other core's cache. Packed
by the task that reads them, each panel is written into a buffer of the task's own
just before its GEMM and read back from the same core's L1 or L2.

So that no panel is packed twice, every task takes all rows of C (M fits one block of
A, as a convolution's output channels do) and a share of one image's panels: a whole
image where the batch splits evenly among the threads, else a group of its panels per
thread.
"""

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from mlc.lowering.linalg.contraction import Matmul
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import Ops
from mlc.tiling_model import TASK_FLOPS, MatmulTiles, TaskSplit


def packs_per_task(mm: Matmul, tiles: MatmulTiles, given: object) -> bool:
    """Whether `mm`'s tasks pack their own panels: a convolution whose panels are not
    `given` (packed at compile time or before a loop), M static and one block of A."""
    m = mm.sizes[0]
    return mm.image is not None and given is None and m is not None and m <= tiles.mc


def task_split(
    b: Ops,
    sizes: tuple[SSAValue, SSAValue, SSAValue],
    split: TaskSplit,
    tiles: MatmulTiles,
) -> tuple[SSAValue, SSAValue]:
    """
    The rows of a task (all of M, rounded up to MR) and the groups of panels of an image
    (`sizes`: M, the panels of an image and the batches): one where the batches are a
    multiple of the threads, else as many as threads (at most the panels), unless an
    image is worth less than `TASK_FLOPS` a thread.
    """
    m, panels, batches = sizes
    mr = b.index(tiles.mr)
    rows = b.mul(b.ceildiv(m, mr), mr)
    if split.threads < 2:
        return rows, b.index(1)
    threads, one = b.index(split.threads), b.index(1)
    uneven = b(quick_ops.cmpi(b(arith.RemSIOp(batches, threads)), b.index(0), "ne"))
    if split.row_flops:
        worth = b(arith.DivSIOp(b.mul(m, b.index(split.row_flops)), b.index(TASK_FLOPS)))
        uneven = b(arith.AndIOp(uneven, b(quick_ops.cmpi(worth, threads, "sge"))))
    groups = b(arith.SelectOp(uneven, b.min(threads, panels), one))
    return rows, b(arith.MaxSIOp(groups, one))

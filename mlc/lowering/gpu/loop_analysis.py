"""
How a `linalg.generic` on memrefs maps onto GPU loops: which of its dims are parallel,
whether its outputs can stay in registers through the reductions, which two dims a
register tile spans, and the static sizes that pick between a tile, a row an iteration
and a warp an output.

`convert-linalg-to-parallel-loops` lowers by these answers and `convert-contractions-to-gpu`
(`mlc.lowering.gpu.contraction.match`) takes only what the loops would register-tile, so
both read them here.
"""

import math
from collections.abc import Sequence

from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir.affine import AffineMap

# Contractions with fewer outputs than this (all sizes static) are not register tiled:
# tiles would leave too few threads to fill a GPU (132 SMs x 2048 threads on an H100),
# while one warp per output (convert-parallel-loops-to-gpu) shares each reduction.
SMALL_OUTPUT = 32768
# Contractions with at most this many columns (static) take a whole row of outputs an
# iteration: a classifier head's x @ w (10 columns) then reads each row of x once, and
# `convert-parallel-loops-to-gpu` shares the row's reduction among a warp's lanes, the
# accumulators side by side. A shared-memory tile would compute 64 columns to keep 10
# and leave most of the GPU idle (128 blocks for 8192 rows): 8.8 us for the MLP's head
# on an H100, against 4.2 with a row an iteration. Two rows (each load of the other
# operand serving both) took 3.9, but one row an iteration is what a softmax over the
# columns joins (`fuse-row-epilogues`), which saves a kernel of 2.4, and its stores
# need no guard.
NARROW_COLUMNS = 16


def split_iterators(op: GenericOp) -> tuple[list[int], list[int]]:
    """The generic's parallel dims and its other (reduction) dims, each in map order."""
    parallel: list[int] = []
    reduction: list[int] = []
    for dim, iterator in enumerate(op.iterator_types):
        (parallel if iterator.data == IteratorType.PARALLEL else reduction).append(dim)
    return parallel, reduction


def outputs_independent_of(op: GenericOp, dims: Sequence[int]) -> bool:
    """Whether no output indexing map reads any of `dims` (so outputs can live in registers)."""
    maps = op.get_indexing_maps().data[len(op.inputs) :]
    return not any(dim in expr.used_dims() for m in maps for expr in m.data.results for dim in dims)


def scan_carried_outputs(op: GenericOp, reduction: Sequence[int]) -> list[int] | None:
    """The outputs a scan generic carries (those whose maps ignore its one reduction dim),
    when `op` is one: some outputs carried, the others at maps reading the dim; else None."""
    if len(reduction) != 1:
        return None
    maps = op.get_indexing_maps().data[len(op.inputs) :]
    carried = [
        i
        for i, m in enumerate(maps)
        if not any(reduction[0] in expr.used_dims() for expr in m.data.results)
    ]
    return carried if 0 < len(carried) < len(maps) else None


def contraction_dims(op: GenericOp, parallel: Sequence[int]) -> tuple[int, int] | None:
    """
    The last two parallel dims when register tiling them saves loads, else None.

    That is when one input ignores the last dim and another ignores the one before it,
    as matmul's `a[i, k]` ignores `j` and `b[k, j]` ignores `i`: each value loaded then
    serves a whole row or column of the tile.
    """
    if len(parallel) < 2:
        return None
    rows, cols = parallel[-2], parallel[-1]
    maps = [m.data for m in op.get_indexing_maps().data[: len(op.inputs)]]

    def ignores(m: AffineMap, dim: int) -> bool:
        return not any(dim in expr.used_dims() for expr in m.results)

    for n, first in enumerate(maps):
        for m, second in enumerate(maps):
            if n != m and ignores(first, cols) and ignores(second, rows):
                return rows, cols
    return None


def static_size(op: GenericOp, dims: Sequence[int]) -> float:
    """The product of the loop sizes of `dims`, or infinity if any is dynamic."""
    sizes = [size for _, _, size in op.get_loop_bound_sources()]
    total = 1
    for dim in dims:
        if sizes[dim] < 0:
            return math.inf
        total *= sizes[dim]
    return total


def narrow_columns(op: GenericOp, cols: int) -> int | None:
    """The column count of a contraction whose columns `cols` are static and few
    (`NARROW_COLUMNS`), else None."""
    count = static_size(op, [cols])
    return int(count) if count <= NARROW_COLUMNS else None

"""
Register tiles of `convert-linalg-to-parallel-loops`: a contraction's iteration computes
several outputs, so that each value it loads serves a row or a column of them.

A large contraction (at least `SMALL_OUTPUT` outputs) takes a `tile_rows x tile_cols`
tile an iteration, its indices clamped into range and its stores guarded; a narrow one
(at most `NARROW_COLUMNS` static columns) takes a whole row of outputs an iteration, with
no loop over the columns and no guard (`mlc.lowering.gpu.loop_analysis`).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import SSAValue

from mlc.lowering.gpu.loop_analysis import (
    SMALL_OUTPUT,
    contraction_dims,
    narrow_columns,
    static_size,
)
from mlc.lowering.gpu.loop_nests.loop_emitter import LoopEmitter


@dataclass
class RegisterTile:
    """`tile_rows` x `tile_cols` outputs per iteration of the parallel loop, in registers."""

    rows: int
    cols: int
    tile_rows: int
    tile_cols: int
    sizes: tuple[SSAValue, SSAValue]
    whole_columns: bool = False  # the tile spans every column (a narrow contraction)

    def points(
        self, emit: LoopEmitter, outer: Sequence[SSAValue]
    ) -> list[tuple[list[SSAValue], SSAValue | None]]:
        """
        Each output of the tile: its indices (clamped into range) and whether it is in
        range (None when it always is: a tile of one row, or one spanning the columns).
        """
        one = emit.index(1)
        coordinates: list[list[tuple[SSAValue, SSAValue | None]]] = []
        for dim, tile, size in zip(
            (self.rows, self.cols), (self.tile_rows, self.tile_cols), self.sizes, strict=True
        ):
            if dim == self.cols and self.whole_columns:
                coordinates.append([(emit.index(offset), None) for offset in range(tile)])
                continue
            if tile == 1:
                coordinates.append([(outer[dim], None)])
                continue
            last = emit(arith.SubiOp(size, one)).results[0]
            first = emit(arith.MuliOp(outer[dim], emit.index(tile))).results[0]
            column = []
            for offset in range(tile):
                index = emit(arith.AddiOp(first, emit.index(offset))).results[0]
                clamped = emit(arith.MinUIOp(index, last)).results[0]
                inside = emit(arith.CmpiOp(index, size, "ult")).results[0]
                column.append((clamped, inside))
            coordinates.append(column)
        points: list[tuple[list[SSAValue], SSAValue | None]] = []
        for row, row_inside in coordinates[0]:
            for col, col_inside in coordinates[1]:
                point = list(outer)
                point[self.rows], point[self.cols] = row, col
                inside = row_inside
                if col_inside is not None:
                    both = None if inside is None else emit(arith.AndIOp(inside, col_inside))
                    inside = col_inside if both is None else both.results[0]
                points.append((point, inside))
        return points


def register_tile(
    op: GenericOp, parallel: Sequence[int], bounds: Sequence[SSAValue], tile: tuple[int, int]
) -> RegisterTile | None:
    """The register tile of a generic whose outputs its reductions carry, or None (one
    output an iteration): `tile` for a large contraction, a row for a narrow one."""
    if tile == (1, 1):
        return None
    if (dims := contraction_dims(op, parallel)) is None:
        return None
    if static_size(op, parallel) < SMALL_OUTPUT:
        return None  # few outputs: one warp each beats fewer, longer threads
    rows, cols = dims
    sizes = (bounds[rows], bounds[cols])
    if (columns := narrow_columns(op, cols)) is not None:
        return RegisterTile(rows, cols, 1, columns, sizes, whole_columns=True)
    return RegisterTile(rows, cols, *tile, sizes)

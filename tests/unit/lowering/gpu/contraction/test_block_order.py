"""The grouped launch order of the tiled contraction kernel's blocks (`block_order`)."""

import operator

import pytest
from xdsl.dialects import arith, gpu
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Region
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from mlc.lowering.gpu.contraction.block_order import grouped
from mlc.lowering.gpu.contraction.emitter import Emitter

_ARITH = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.DivUIOp: operator.floordiv,
    arith.RemUIOp: operator.mod,
    arith.MinUIOp: min,
}


def _order(group: int):
    """The emitted ops and the (bx, by) arguments they decode."""
    block = Block(arg_types=[IndexType(), IndexType()])
    anchor = arith.ConstantOp.from_int_and_width(0, IndexType())
    block.add_op(anchor)
    ModuleOp(Region(block))
    rewriter = PatternRewriter(anchor)
    emit = Emitter(rewriter, InsertPoint.at_end(block), anchor)
    column, row = grouped(emit, block.args[0], block.args[1], group)
    return block, column, row


def _run(block, column, row, bx, by, grid_x, grid_y):
    """The ops of `block` evaluated at one block id and grid size."""
    values = {block.args[0]: bx, block.args[1]: by}
    for op in block.ops:
        if isinstance(op, gpu.GridDimOp):
            x = op.dimension.data == gpu.DimensionEnum.X
            values[op.result] = grid_x if x else grid_y
        elif isinstance(op, arith.ConstantOp):
            values[op.result] = op.value.value.data  # pyright: ignore[reportAttributeAccessIssue]
        else:
            values[op.results[0]] = _ARITH[type(op)](*(values[v] for v in op.operands))
    return values[column], values[row]


@pytest.mark.parametrize("grid_x, grid_y", [(64, 64), (32, 9), (5, 7), (3, 17), (1, 1), (9, 3)])
def test_every_tile_is_taken_once(grid_x, grid_y):
    block, column, row = _order(8)
    tiles = [
        _run(block, column, row, bx, by, grid_x, grid_y)
        for by in range(grid_y)
        for bx in range(grid_x)
    ]
    assert sorted(tiles) == [(x, y) for x in range(grid_x) for y in range(grid_y)]


def test_blocks_go_down_a_column_of_8_rows_first():
    block, column, row = _order(8)
    first = [_run(block, column, row, bx, 0, 64, 64) for bx in range(10)]
    assert first == [(0, r) for r in range(8)] + [(1, 0), (1, 1)]
    # the last group of a 17-row grid has the one row left
    assert [_run(block, column, row, bx, 16, 3, 17) for bx in range(3)] == [
        (0, 16),
        (1, 16),
        (2, 16),
    ]

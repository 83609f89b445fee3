"""
Short column loops unrolled as they join a row body (`fuse-row-epilogues`).

A row body whose results are a few whole columns (a narrow contraction's, each stored at
a constant column) is read by what follows column by column. Such a loop of at most
`UNROLLED_COLUMNS` static iterations that reads what the row stored (a trailing
parallel dim, or an `scf.for` at the top of the loop's body) is unrolled, so that each
load reads a place the row stored and gets its value; softmax's online (max, sum) pair
becomes its two-pass form (`two_pass_softmax`).
"""

from collections.abc import Sequence

from xdsl.builder import Builder, ImplicitBuilder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.gpu.row_fusion.row_places import Row
from mlc.lowering.gpu.row_fusion.two_pass_softmax import is_online_pair, two_pass
from mlc.lowering.support.loop_builder import constant_index

# Column loops of at most this many static iterations that read a row's stored columns
# are unrolled as they join (module docstring): a narrow contraction's columns.
UNROLLED_COLUMNS = 16


def _reads_row_columns(row: Row, ops: Sequence[Operation], column: SSAValue) -> bool:
    """Whether `ops` load something the row stored, at an index that is `column`."""
    return any(
        isinstance(op, memref.LoadOp) and op.memref in row.written and column in op.indices
        for op in ops
    )


def unroll_columns(row: Row, rows: int, loop: scf.ParallelOp) -> scf.ParallelOp | None:
    """
    A copy of `loop` (not inserted) with its short static column loops that read the
    row's stored columns unrolled: a trailing parallel dim, and `scf.for`s at the top of
    its body. None if there are none.
    """
    body = loop.body.block
    dims = len(loop.lowerBound)
    trailing = _short(loop.lowerBound[-1], loop.upperBound[-1], loop.step[-1])
    unroll_dim = (
        dims == rows + 1
        and trailing is not None
        and _reads_row_columns(row, list(body.walk()), body.args[-1])
    )
    inner = [
        op
        for op in body.ops
        if isinstance(op, scf.ForOp)
        and _short(op.lb, op.ub, op.step) is not None
        and not any(o.regions for o in op.body.block.ops)
        and _reads_row_columns(row, list(op.body.block.ops), op.body.block.args[0])
    ]
    if not unroll_dim and not inner:
        return None
    copy = loop.clone()
    positions = [n for n, op in enumerate(loop.body.block.ops) if op in inner]
    copied = list(copy.body.block.ops)
    for position in positions:
        _unroll_for(copied[position])  # pyright: ignore[reportArgumentType]
    if unroll_dim:
        copy = _unroll_last_dim(copy)
    return copy


def _short(lb: SSAValue, ub: SSAValue, step: SSAValue) -> list[int] | None:
    """The iterations of a loop of at most `UNROLLED_COLUMNS` static ones, else None."""
    bounds = [constant_index(v) for v in (lb, ub, step)]
    if any(b is None for b in bounds) or bounds[2] <= 0:  # pyright: ignore[reportOptionalOperand]
        return None
    values = list(range(*bounds))  # pyright: ignore[reportArgumentType]
    return values if len(values) <= UNROLLED_COLUMNS else None


def _unroll_for(loop: scf.ForOp) -> None:
    """
    Replace `loop` with its iterations in sequence, its `iter_args` threaded through;
    softmax's online (max, sum) pair from its identity becomes the two-pass form (a max
    over the row's elements, then the sum of their `exp(x - max)`, trees both), which
    the unrolled row allows: no chain of ten dependent rescaling steps.
    """
    iterations = _short(loop.lb, loop.ub, loop.step)
    assert iterations is not None
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    online = is_online_pair(loop, iterations)
    carried = list(loop.iter_args)
    elements: list[SSAValue] = []  # each iteration's x, where the pair is online
    before = InsertPoint.before(loop)
    for value in iterations:
        index = arith.ConstantOp(IntegerAttr.from_index_int_value(value))
        Rewriter.insert_op(index, before)
        mapping: dict[SSAValue, SSAValue] = {body.args[0]: index.result}
        mapping.update(zip(body.args[1:], carried, strict=True))
        for op in list(body.ops)[:-1]:
            Rewriter.insert_op(op.clone(mapping), before)
        if online:  # the step's own element; the step itself is left unused
            step_max = yielded.operands[0].owner
            elements.append(mapping[step_max.operands[1]])  # pyright: ignore[reportAttributeAccessIssue]
        else:
            carried = [mapping.get(v, v) for v in yielded.operands]
    if online:
        with ImplicitBuilder(Builder(before)):
            carried = two_pass(elements)
    for result, value in zip(loop.results, carried, strict=True):
        result.replace_all_uses_with(value)
    loop.detach()
    loop.erase()


def _unroll_last_dim(loop: scf.ParallelOp) -> scf.ParallelOp:
    """`loop` without its last dim: the body repeated for each of its (static) values."""
    iterations = _short(loop.lowerBound[-1], loop.upperBound[-1], loop.step[-1])
    assert iterations is not None
    body = loop.body.block
    outer = Block(arg_types=[IndexType()] * (len(loop.lowerBound) - 1))
    for value in iterations:
        index = arith.ConstantOp(IntegerAttr.from_index_int_value(value))
        outer.add_op(index)
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, [*outer.args, index.result]))
        for op in body.ops:
            if not isinstance(op, scf.ReduceOp):
                outer.add_op(op.clone(mapping))
    outer.add_op(scf.ReduceOp())
    bounds = (loop.lowerBound[:-1], loop.upperBound[:-1], loop.step[:-1])
    unrolled = scf.ParallelOp(*bounds, Region(outer))
    loop.erase()
    return unrolled

"""
Which argument dims of an `ml` function can be padded without changing a result.

`mlc.jit(dynamic="bucket")` rounds sizes up to a power of two, pads the arguments
and slices the results. That is exact only along a dim whose rows never mix: every
op maps row `i` of its operands' dim to row `i` of its result's dim and reads no
other row. This analysis proves it op by op, with a union-find over `(value, dim)`:
ops that keep rows apart unify the operand dim with the result dim it becomes
(elementwise ops through broadcasting, transposes, the kept dims of a reduction,
matmul rows and columns and batch dims, conv and pool batch dims, loop-carried
values); a dim an op mixes or reads across (reduced, contracted, normalised,
concatenated, sliced, reshaped, gathered, a constant's, one whose size Python
read) taints its whole class. A class is bucketable when it holds an argument dim,
no taint, and no static size 1 (a size-1 dim broadcasts, so padding it would
change what it means).

    %y = ml.add %x, %b       x: ?x4   b: 4       x.0 ~ y.0, x.1 ~ b.0 ~ y.1
    %s = ml.reduce_sum %y {axes = [1]}           y.0 ~ s.0, y.1 tainted
    => x dim 0 is bucketable (results: s dim 0), x dim 1 is not
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from mlc import shapes
from mlc.dialects import ml

Dim = tuple[SSAValue, int]


@dataclass
class DimClass:
    """Argument dims padded together, and the result dims to slice back."""

    args: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    results: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])


def _shape(value: SSAValue) -> shapes.Shape:
    t = value.type
    return t.get_shape() if isinstance(t, TensorType) else ()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


class _Rows:
    """Union-find over (value, dim), with tainted classes."""

    def __init__(self) -> None:
        self.dims = shapes.DimUnifier[Dim]()
        self.tainted: set[Dim] = set()

    def add(self, value: SSAValue) -> None:
        for d, size in enumerate(_shape(value)):
            self.dims.add((value, d), size)

    def same(self, a: Dim, b: Dim) -> None:
        self.dims.add(a)
        self.dims.add(b)
        ra, rb = self.dims.find(a), self.dims.find(b)
        tainted = ra in self.tainted or rb in self.tainted
        if not self.dims.unify(a, b):
            self.tainted.update((ra, rb))  # sizes disagree: nothing to prove here
        elif tainted:
            self.tainted.add(self.dims.find(a))

    def taint(self, value: SSAValue, dims: Iterable[int] | None = None) -> None:
        for d in range(len(_shape(value))) if dims is None else dims:
            self.tainted.add(self.dims.find((value, d)))

    def is_tainted(self, dim: Dim) -> bool:
        return self.dims.find(dim) in self.tainted


def _equalities(op: Operation) -> list[shapes.Equality] | None:
    """Row-preserving dim pairs of an `ml` op; None when it mixes everything."""
    operands = [_shape(v) for v in op.operands]
    rank = len(_shape(op.results[0])) if op.results else 0
    match op:
        case ml.BinaryOp() | ml.CmpOp() | ml.SelectOp():
            return shapes.broadcast_equalities(operands, rank)
        case ml.UnaryOp() | ml.CastOp():
            return shapes.identity_equalities(rank)
        case ml.TransposeOp():
            return shapes.transpose_equalities(op.perm.get_values())
        case ml.ReduceOp():
            axes, keep = op.axes.get_values(), bool(op.keepdims.value.data)
            return shapes.reduce_equalities(len(operands[0]), axes, keep)
        case ml.SoftmaxOp():
            axis = shapes.normalize_axis(op.axis.value.data, rank)
            return [e for e in shapes.identity_equalities(rank) if e[0][1] != axis]
        case ml.LayerNormOp():
            axis = shapes.normalize_axis(op.axis.value.data, rank)
            return [e for e in shapes.identity_equalities(rank) if e[0][1] < axis]
        case ml.BatchNormOp():
            return shapes.batch_norm_equalities(rank)
        case ml.MatmulOp():
            a, b = operands
            inner = ((0, len(a) - 1), (1, len(b) - 2))
            return [e for e in shapes.matmul_equalities(a, b) if e != inner]
        case ml.ConvOp() | ml.PoolOp():
            return [((0, 0), (shapes.RESULT, 0))]
        case _:
            return None


def _visit_op(rows: _Rows, op: Operation) -> None:
    for result in op.results:
        rows.add(result)
    if isinstance(op, ml.MLOp) and (pairs := _equalities(op)) is not None:
        for a, b in pairs:
            rows.same(_dim(op, a), _dim(op, b))
        _taint_unpaired(rows, op, pairs)
        return
    if isinstance(op, scf.ForOp | scf.WhileOp | scf.IfOp):
        _visit_loop_or_branch(rows, op)
        return
    if isinstance(op, scf.YieldOp | scf.ConditionOp | func.ReturnOp):
        return  # tied to their parent's results by the parent's visit
    for value in (*op.operands, *op.results):  # constants, extracts, unknown ops
        rows.add(value)
        rows.taint(value)


def _dim(op: Operation, ref: tuple[int, int]) -> Dim:
    position, axis = ref
    value = op.results[0] if position == shapes.RESULT else op.operands[position]
    return value, axis


def _taint_unpaired(rows: _Rows, op: Operation, pairs: list[shapes.Equality]) -> None:
    """Dims of the op's values that no row-preserving pair accounts for are mixed."""
    paired = {_dim(op, ref) for pair in pairs for ref in pair}
    for value in (*op.operands, op.results[0]):
        rows.add(value)
        for d, size in enumerate(_shape(value)):
            if (value, d) not in paired and size != 1:
                rows.taint(value, [d])


def _tie(rows: _Rows, values: Iterable[Iterable[SSAValue]]) -> None:
    """Values in one position of a loop or branch (init, block arg, yield, result) share dims."""
    for group in zip(*values, strict=True):
        first = group[0]
        rows.add(first)
        for other in group[1:]:
            rows.add(other)
            for d in range(len(_shape(first))):
                rows.same((first, d), (other, d))


def _visit_loop_or_branch(rows: _Rows, op: scf.ForOp | scf.WhileOp | scf.IfOp) -> None:
    for region in op.regions:
        for block in region.blocks:
            _visit_block(rows, block)
    blocks = [b for r in op.regions for b in r.blocks]
    terminators = [list(b.last_op.operands) for b in blocks if b.last_op is not None]
    match op:
        case scf.ForOp():
            rows.taint(op.lb)
            rows.taint(op.ub)
            _tie(rows, [op.iter_args, blocks[0].args[1:], terminators[0], op.results])
        case scf.WhileOp():
            condition = terminators[0]
            rows.taint(condition[0])
            _tie(rows, [op.arguments, blocks[0].args, terminators[1], blocks[1].args])
            _tie(rows, [condition[1:], blocks[1].args, op.results])
        case scf.IfOp():
            rows.taint(op.cond)
            _tie(rows, [*terminators, op.results])


def _visit_block(rows: _Rows, block: Block) -> None:
    for arg in block.args:
        rows.add(arg)
    for op in block.ops:
        _visit_op(rows, op)


def bucketable_dims(function: func.FuncOp, pinned: Iterable[SSAValue] = ()) -> list[DimClass]:
    """
    The argument dims that padding cannot change a result through, grouped in
    classes that must be padded to one size; `pinned` values' dims are all tainted
    (Python read their sizes).
    """
    rows = _Rows()
    _visit_block(rows, function.body.block)
    for value in pinned:
        rows.add(value)
        rows.taint(value)
    classes: dict[Dim, DimClass] = {}
    args = function.body.block.args
    for i, arg in enumerate(args):
        for d, size in enumerate(_shape(arg)):
            if size != 1 and not rows.is_tainted((arg, d)):
                classes.setdefault(rows.dims.find((arg, d)), DimClass()).args.append((i, d))
    terminator = function.body.block.last_op
    outputs = list(terminator.operands) if terminator is not None else []
    for i, value in enumerate(outputs):
        for d in range(len(_shape(value))):
            if (root := rows.dims.find((value, d))) in classes:
                classes[root].results.append((i, d))
    return list(classes.values())

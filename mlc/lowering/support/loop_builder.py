"""
Builders for the loop nests that kernels put in place of a `linalg.generic`: an op
collector (`Ops`) and `scf.for` / `scf.parallel` / `scf.if` whose bodies are Python
callbacks, so a nest reads top-down like the pseudo-code it implements.
"""

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from mlc.lowering.support import quick_ops


class Ops:
    """Collects new ops in order; calling it appends an op and returns its result."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def __call__(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def index(self, value: int) -> SSAValue:
        return self(quick_ops.index(value))

    def dim(self, value: SSAValue, d: int) -> SSAValue:
        type_ = value.type
        assert isinstance(type_, MemRefType)
        size = type_.get_shape()[d]
        return self.index(size) if size >= 0 else self(memref.DimOp(value, self.index(d)))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(quick_ops.binary(arith.MinSIOp, a, b))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(quick_ops.binary(arith.AddiOp, a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(quick_ops.binary(arith.SubiOp, a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(quick_ops.binary(arith.MuliOp, a, b))

    def ceildiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(quick_ops.binary(arith.CeilDivSIOp, a, b))


Body = Callable[[Ops, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]]


def implicit_index(value: int) -> SSAValue:
    """An index `arith.constant`, built under the caller's implicit builder."""
    return arith.ConstantOp(IntegerAttr.from_index_int_value(value)).result


def scalar_constant(value: float | int, type_: Attribute) -> SSAValue:
    """
    An `arith.constant` of a float, integer or i1 type.

    Made where an implicit builder is active (a `build_generic` body); elsewhere,
    insert the owner through the rewriter.
    """
    if isinstance(type_, IntegerType):
        width = type_.width.data
        wrapped = (
            (int(value) + 2 ** (width - 1)) % 2**width - 2 ** (width - 1)
            if width > 1
            else int(value)
        )
        return arith.ConstantOp(IntegerAttr(wrapped, IntegerType(width))).result
    return arith.ConstantOp(FloatAttr(float(value), type_)).result  # pyright: ignore[reportArgumentType]


def constant_index(value: SSAValue) -> int | None:
    """The value of an integer or index `arith.constant`, or None for any other value."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def for_loop(
    b: Ops, lb: SSAValue, ub: SSAValue, step: SSAValue, body: Body, init: Sequence[SSAValue] = ()
) -> Sequence[SSAValue]:
    """`scf.for` whose body `body(ops, iv, carried)` builds and returns the yielded values."""
    block = Block(arg_types=[IndexType(), *(v.type for v in init)])
    inner = Ops()
    yielded = body(inner, block.args[0], block.args[1:])
    block.add_ops([*inner.ops, quick_ops.yield_(*yielded)])
    loop = quick_ops.for_(lb, ub, step, list(init), block)
    b.ops.append(loop)
    return loop.results


def parallel_loop(
    b: Ops, lb: SSAValue, ub: SSAValue, step: SSAValue, body: Callable[[Ops, SSAValue], None]
) -> None:
    """A one-dimensional `scf.parallel` without reductions."""
    block = Block(arg_types=[IndexType()])
    inner = Ops()
    body(inner, block.args[0])
    block.add_ops([*inner.ops, scf.ReduceOp()])
    b.ops.append(scf.ParallelOp([lb], [ub], [step], Region(block)))


def if_then(
    b: Ops,
    condition: SSAValue,
    then: Callable[[Ops], None],
    otherwise: Callable[[Ops], None] | None = None,
) -> None:
    """`scf.if` without results."""
    regions: list[list[Operation]] = []
    for build in (then, otherwise):
        if build is None:
            regions.append([])
            continue
        inner = Ops()
        build(inner)
        regions.append([*inner.ops, quick_ops.yield_()])
    b.ops.append(quick_ops.if_(condition, regions[0], regions[1] or None))


def zero(b: Ops, type_: Attribute) -> SSAValue:
    if isinstance(type_, VectorType):
        element = type_.element_type
        assert isinstance(element, AnyFloat)
        return b(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [0.0])))
    assert isinstance(type_, AnyFloat)
    return b(arith.ConstantOp(FloatAttr(0.0, type_)))


def every_other(even: SSAValue, odd: SSAValue) -> vector.ShuffleOp:
    """Lanes 0, 2, 4, .. of `even` then `odd`, side by side: a stride-2 row's reads."""
    lanes = even.type.get_shape()[0]  # pyright: ignore[reportAttributeAccessIssue]
    pick = DenseArrayBase.from_list(i64, list(range(0, 2 * lanes, 2)))
    return vector.ShuffleOp(even, odd, pick, result_type=even.type)  # pyright: ignore[reportArgumentType]


def side_by_side(first: SSAValue, second: SSAValue) -> vector.ShuffleOp:
    """The lanes of `first` then those of `second`, in one vector twice as long."""
    type_ = first.type
    assert isinstance(type_, VectorType) and type_ == second.type
    lanes = type_.get_shape()[0]
    pick = DenseArrayBase.from_list(i64, list(range(2 * lanes)))
    joined = VectorType(type_.element_type, [2 * lanes])
    return vector.ShuffleOp(first, second, pick, result_type=joined)  # pyright: ignore[reportArgumentType]


def as_float(b: Ops, value: SSAValue, type_: Attribute) -> SSAValue:
    """`value` (a float or a vector of them) as `type_`: widened (`extf`), narrowed
    (`truncf`, rounding to nearest) or, of that type already, itself."""
    if value.type == type_:
        return value
    width = _float_of(value.type).bitwidth
    if width < _float_of(type_).bitwidth:
        return b(arith.ExtFOp(value, type_))
    return b(arith.TruncFOp(value, type_))


def _float_of(type_: Attribute) -> AnyFloat:
    element = type_.element_type if isinstance(type_, VectorType) else type_
    assert isinstance(element, AnyFloat)
    return element


def less(b: Ops, x: SSAValue, y: SSAValue) -> SSAValue:
    return b(quick_ops.cmpi(x, y, "slt"))


def collapse_trailing(b: Ops, value: SSAValue, keep: int) -> SSAValue:
    """An identity-layout memref with its dims from `keep` on merged into one (same data)."""
    type_ = value.type
    assert isinstance(type_, MemRefType)
    shape = type_.get_shape()
    tail = shape[keep:]
    merged = DYNAMIC_INDEX if any(s < 0 for s in tail) else prod(tail)
    groups = [[d] for d in range(keep)] + [list(range(keep, len(shape)))]
    reassociation = ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in g]) for g in groups])
    flat = MemRefType(type_.element_type, [*shape[:keep], merged])
    return b(
        memref.CollapseShapeOp.build(
            operands=[value], result_types=[flat], properties={"reassociation": reassociation}
        )
    )


def affine_index(b: Ops, expr: AffineExpr, loops: Sequence[SSAValue]) -> SSAValue:
    """The value of an affine expression of `loops` (non-negative, no symbols)."""
    if isinstance(expr, AffineDimExpr):
        return loops[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return b.index(expr.value)
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = affine_index(b, expr.lhs, loops), affine_index(b, expr.rhs, loops)
    kinds = {
        AffineBinaryOpKind.Add: arith.AddiOp,
        AffineBinaryOpKind.Mul: arith.MuliOp,
        AffineBinaryOpKind.FloorDiv: arith.DivSIOp,
        AffineBinaryOpKind.CeilDiv: arith.CeilDivSIOp,
        AffineBinaryOpKind.Mod: arith.RemSIOp,
    }
    return b(quick_ops.binary(kinds[expr.kind], lhs, rhs))

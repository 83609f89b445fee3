"""
Constructors for the `arith`, `scf`, `memref` and `vector` ops that the loop-nest
builders make most often, without xDSL's generic op constructor.

An IRDL op's `__init__` (`irdl_op_init`) matches every argument against the op's
definition, about twice what `Operation.create` costs with the operands, result types
and properties spelled out; the CPU kernels of ResNet-50 make ~32k ops, most of them
index arithmetic, compares, `scf.if` and `scf.yield`, then loads, stores, FMAs and
loops. Each function here makes the op that xDSL's constructor makes: the result types
and properties of an op kind are read once, per operand type (and predicate), from an
op that xDSL's own constructor built on placeholder operands, so a default xDSL changes
is picked up, not copied by hand (`tests/unit/lowering/support/test_quick_ops.py`
compares the two).
"""

from collections.abc import Callable, Sequence
from functools import cache

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

# The `arith` ops whose constructor takes (lhs, rhs) and nothing else.
BinaryOp = type[
    arith.AddiOp
    | arith.SubiOp
    | arith.MuliOp
    | arith.DivSIOp
    | arith.RemSIOp
    | arith.CeilDivSIOp
    | arith.MinSIOp
    | arith.MaxSIOp
    | arith.AndIOp
    | arith.AddfOp
    | arith.SubfOp
    | arith.MulfOp
]

Template = tuple[tuple[Attribute, ...], dict[str, Attribute], dict[str, Attribute]]


def _template(build: Callable[[SSAValue, SSAValue], Operation], types: Sequence[Attribute]):
    """The result types, properties and attributes of the op `build` makes with xDSL's
    constructor on placeholder values of `types`."""
    block = Block(arg_types=types)
    op = build(*block.args)
    template = (tuple(op.result_types), dict(op.properties), dict(op.attributes))
    op.drop_all_references()
    return template


@cache
def _index_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, IndexType())


def index(value: int) -> arith.ConstantOp:
    """`arith.constant value : index`."""
    return arith.ConstantOp.create(
        result_types=[IndexType()], properties={"value": _index_attr(value)}
    )


@cache
def _binary_template(cls: BinaryOp, lhs: Attribute, rhs: Attribute) -> Template:
    return _template(lambda a, b: cls(a, b), (lhs, rhs))


def binary(cls: BinaryOp, lhs: SSAValue, rhs: SSAValue) -> Operation:
    """`cls(lhs, rhs)`."""
    result_types, properties, attributes = _binary_template(cls, lhs.type, rhs.type)
    return cls.create(
        operands=[lhs, rhs],
        result_types=result_types,
        properties=properties,
        attributes=attributes,
    )


@cache
def _cmpi_template(predicate: str, lhs: Attribute, rhs: Attribute) -> Template:
    return _template(lambda a, b: arith.CmpiOp(a, b, predicate), (lhs, rhs))


def cmpi(lhs: SSAValue, rhs: SSAValue, predicate: str) -> arith.CmpiOp:
    """`arith.cmpi predicate, lhs, rhs` (`predicate` by name: "slt", "sle", ...)."""
    result_types, properties, attributes = _cmpi_template(predicate, lhs.type, rhs.type)
    return arith.CmpiOp.create(
        operands=[lhs, rhs],
        result_types=result_types,
        properties=properties,
        attributes=attributes,
    )


def yield_(*values: SSAValue) -> scf.YieldOp:
    """`scf.yield values`."""
    return scf.YieldOp.create(operands=values)


def if_(
    condition: SSAValue, then: Sequence[Operation], otherwise: Sequence[Operation] | None
) -> scf.IfOp:
    """`scf.if` without results: `then` (and `otherwise`, else an empty region) as its
    single-block regions, each ending with its `scf.yield`."""
    false_region = Region() if otherwise is None else Region(Block(otherwise))
    return scf.IfOp.create(operands=[condition], regions=[Region(Block(then)), false_region])


def _make(cls: type[Operation], template: Template, operands: Sequence[SSAValue]) -> Operation:
    result_types, properties, attributes = template
    return cls.create(
        operands=operands, result_types=result_types, properties=properties, attributes=attributes
    )


def _indices(count: int) -> tuple[Attribute, ...]:
    return (IndexType(),) * count


@cache
def _load_template(base: Attribute, count: int, result: Attribute | None) -> Template:
    if result is None:
        return _template(lambda m, *at: memref.LoadOp.get(m, at), (base, *_indices(count)))
    return _template(lambda m, *at: vector.LoadOp(m, at, result), (base, *_indices(count)))  # pyright: ignore[reportArgumentType]


def load(base: SSAValue, indices: Sequence[SSAValue]) -> memref.LoadOp:
    """`memref.load base[indices]`."""
    template = _load_template(base.type, len(indices), None)
    return _make(memref.LoadOp, template, [base, *indices])  # pyright: ignore[reportReturnType]


def vector_load(
    base: SSAValue, indices: Sequence[SSAValue], result: vector.VectorType
) -> vector.LoadOp:
    """`vector.load base[indices] : ..., result`."""
    template = _load_template(base.type, len(indices), result)
    return _make(vector.LoadOp, template, [base, *indices])  # pyright: ignore[reportReturnType]


@cache
def _store_template(value: Attribute, base: Attribute, count: int) -> Template:
    if isinstance(value, vector.VectorType):
        build = lambda v, m, *at: vector.StoreOp(v, m, at)  # noqa: E731
    else:
        build = lambda v, m, *at: memref.StoreOp.get(v, m, at)  # noqa: E731
    return _template(build, (value, base, *_indices(count)))


def store(value: SSAValue, base: SSAValue, indices: Sequence[SSAValue]) -> Operation:
    """`memref.store` of a scalar, `vector.store` of a vector, at `base[indices]`."""
    template = _store_template(value.type, base.type, len(indices))
    cls = vector.StoreOp if isinstance(value.type, vector.VectorType) else memref.StoreOp
    return _make(cls, template, [value, base, *indices])


@cache
def _masked_template(base: Attribute, count: int, mask: Attribute, value: Attribute) -> Template:
    def build(m: SSAValue, *rest: SSAValue) -> Operation:
        return vector.MaskedStoreOp(m, rest[:count], rest[count], rest[count + 1])

    return _template(build, (base, *_indices(count), mask, value))


def masked_store(
    base: SSAValue, indices: Sequence[SSAValue], mask: SSAValue, value: SSAValue
) -> vector.MaskedStoreOp:
    """`vector.maskedstore base[indices], mask, value`."""
    template = _masked_template(base.type, len(indices), mask.type, value.type)
    return _make(vector.MaskedStoreOp, template, [base, *indices, mask, value])  # pyright: ignore[reportReturnType]


@cache
def _fma_template(type_: Attribute) -> Template:
    return _template(lambda a, b, c: vector.FMAOp(a, b, c), (type_, type_, type_))


def fma(lhs: SSAValue, rhs: SSAValue, acc: SSAValue) -> vector.FMAOp:
    """`vector.fma lhs, rhs, acc`."""
    return _make(vector.FMAOp, _fma_template(acc.type), [lhs, rhs, acc])  # pyright: ignore[reportReturnType]


@cache
def _broadcast_template(source: Attribute, result: Attribute) -> Template:
    return _template(lambda v: vector.BroadcastOp(v, result), (source,))  # pyright: ignore[reportArgumentType]


def broadcast(value: SSAValue, result: vector.VectorType) -> vector.BroadcastOp:
    """`vector.broadcast value : ... to result`."""
    template = _broadcast_template(value.type, result)
    return _make(vector.BroadcastOp, template, [value])  # pyright: ignore[reportReturnType]


def for_(
    lb: SSAValue, ub: SSAValue, step: SSAValue, init: Sequence[SSAValue], body: Block
) -> scf.ForOp:
    """`scf.for` from `lb` to `ub` by `step` carrying `init`, `body` its one block (its
    arguments the induction variable and the carried values, ending in `scf.yield`).
    xDSL's constructor sets no properties or attributes here (the tests check it)."""
    return scf.ForOp.create(
        operands=[lb, ub, step, *init],
        result_types=[value.type for value in init],
        regions=[Region(body)],
    )

"""
Constructors for the `arith` and `scf` ops that the loop-nest builders make most often,
without xDSL's generic op constructor.

An IRDL op's `__init__` (`irdl_op_init`) matches every argument against the op's
definition, about twice what `Operation.create` costs with the operands, result types
and properties spelled out; the CPU kernels of ResNet-50 make ~32k ops, most of them
index arithmetic, compares, `scf.if` and `scf.yield`. Each function here makes the op
that xDSL's constructor makes: the result types and properties of an op kind are read
once, per operand type (and predicate), from an op that xDSL's own constructor built on
placeholder operands, so a default xDSL changes is picked up, not copied by hand
(`tests/unit/lowering/support/test_quick_ops.py` compares the two).
"""

from collections.abc import Callable, Sequence
from functools import cache

from xdsl.dialects import arith, scf
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

"""
Constructors for the `llvm` ops convert-to-llvm makes most often, without xDSL's
generic op constructor: constants, binary ops, struct fields, GEPs, loads, stores,
branches, `undef`, `icmp`, `fma`, calls and intrinsic calls.

An IRDL op's `__init__` (`irdl_op_init`) matches every argument against the op's
definition: 40-290 us per op on the 2-core machine, against 10-30 us for
`Operation.create` with the operands, result types and properties spelled out. The
transformer block's `llvm` stage makes ~12k ops, so this is most of the pass's time.
Each function here makes the op its xDSL constructor makes (same properties, same
result types); `tests/unit/lowering/convert_to_llvm/test_llvm_ops.py` compares the two.
The properties of each kind of op are read once from an op its own constructor built, so a default
xDSL changes is picked up, not copied by hand.
"""

from collections.abc import Callable, Sequence
from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

_PTR = llvm.LLVMPointerType()
# The base classes of binary ops whose constructor takes (lhs, rhs), typed as lhs.
BINARY_BASES = (
    llvm.ArithmeticBinOperation,
    llvm.ArithmeticBinOpOverflow,
    llvm.ArithmeticBinOpExact,
    llvm.ArithmeticBinOpDisjoint,
    llvm.AbstractFloatArithOp,
)
BinaryOp = type[
    llvm.ArithmeticBinOperation
    | llvm.ArithmeticBinOpOverflow
    | llvm.ArithmeticBinOpExact
    | llvm.ArithmeticBinOpDisjoint
    | llvm.AbstractFloatArithOp
]


def _properties_of(build: Callable[[SSAValue], Operation]) -> dict[str, Attribute]:
    """The properties of the op `build` makes with xDSL's constructor from a probe value."""
    op = build(Block(arg_types=[i64]).args[0])
    op.drop_all_references()
    return dict(op.properties)


@cache
def integer_attr(value: int, type_: Attribute = i64) -> IntegerAttr:
    """`IntegerAttr(value, type_)`, made once (~20 us each otherwise)."""
    return IntegerAttr(value, type_)


def constant(value: int, type_: Attribute = i64) -> llvm.ConstantOp:
    """An integer `llvm.mlir.constant`."""
    return llvm.ConstantOp.create(
        result_types=[type_], properties={"value": integer_attr(value, type_)}
    )


def binary(cls: BinaryOp, lhs: SSAValue, rhs: SSAValue) -> Operation:
    """`cls(lhs, rhs)`: an integer or float binary op, typed as `lhs`."""
    return cls.create(
        operands=[lhs, rhs], result_types=[lhs.type], properties=_binary_properties(cls)
    )


@cache
def _binary_properties(cls: BinaryOp) -> dict[str, Attribute]:
    return _properties_of(lambda v: cls(v, v))


def extract_value(container: SSAValue, type_: Attribute, position: DenseArrayBase) -> Operation:
    """`llvm.extractvalue container[position] : type_`."""
    return llvm.ExtractValueOp.create(
        operands=[container], result_types=[type_], properties={"position": position}
    )


def insert_value(container: SSAValue, value: SSAValue, position: DenseArrayBase) -> Operation:
    """`llvm.insertvalue value, container[position]`."""
    return llvm.InsertValueOp.create(
        operands=[container, value],
        result_types=[container.type],
        properties={"position": position},
    )


@cache
def _gep_properties(element: Attribute, inbounds: bool) -> dict[str, Attribute]:
    return _properties_of(
        lambda v: llvm.GEPOp(v, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[v], inbounds=inbounds)
    )


def element_address(
    pointer: SSAValue, index: SSAValue, element: Attribute, inbounds: bool = True
) -> Operation:
    """`llvm.getelementptr inbounds pointer[index] : element` (one dynamic index); without
    `inbounds` where the address may lie outside the buffer (a masked access's start)."""
    return llvm.GEPOp.create(
        operands=[pointer, index],
        result_types=[_PTR],
        properties=_gep_properties(element, inbounds),
    )


@cache
def _field_properties(index: int, element: Attribute) -> dict[str, Attribute]:
    return _properties_of(lambda v: llvm.GEPOp(v, [index], element))


def field_address(pointer: SSAValue, index: int, element: Attribute) -> Operation:
    """`llvm.getelementptr pointer[index] : element` (one constant index)."""
    return llvm.GEPOp.create(
        operands=[pointer], result_types=[_PTR], properties=_field_properties(index, element)
    )


def load(pointer: SSAValue, type_: Attribute) -> Operation:
    """`llvm.load pointer : type_`."""
    return llvm.LoadOp.create(
        operands=[pointer], result_types=[type_], properties=_memory_properties(llvm.LoadOp)
    )


def store(value: SSAValue, pointer: SSAValue) -> Operation:
    """`llvm.store value, pointer`."""
    return llvm.StoreOp.create(
        operands=[value, pointer], properties=_memory_properties(llvm.StoreOp)
    )


@cache
def _memory_properties(cls: type[llvm.LoadOp | llvm.StoreOp]) -> dict[str, Attribute]:
    if cls is llvm.LoadOp:
        return _properties_of(lambda v: llvm.LoadOp(v, i64))
    return _properties_of(lambda v: llvm.StoreOp(v, v))


def branch(successor: Block, arguments: Sequence[SSAValue]) -> Operation:
    """`llvm.br ^successor(arguments)`."""
    return llvm.BrOp.create(operands=arguments, successors=[successor])


def cond_branch(
    condition: SSAValue,
    then_block: Block,
    then_arguments: Sequence[SSAValue],
    else_block: Block,
    else_arguments: Sequence[SSAValue],
) -> Operation:
    """`llvm.cond_br condition, ^then_block(then_arguments), ^else_block(else_arguments)`."""
    sizes = DenseArrayBase.from_list(i32, [1, len(then_arguments), len(else_arguments)])
    return llvm.CondBrOp.create(
        operands=[condition, *then_arguments, *else_arguments],
        successors=[then_block, else_block],
        properties={"operandSegmentSizes": sizes},
    )


def undef(type_: Attribute) -> Operation:
    """`llvm.mlir.undef : type_`."""
    return llvm.UndefOp.create(result_types=[type_])


def fma(a: SSAValue, b: SSAValue, c: SSAValue) -> Operation:
    """`llvm.intr.fma(a, b, c)`, typed as `a`."""
    return llvm.FMAOp.create(
        operands=[a, b, c], result_types=[a.type], properties=_fma_properties()
    )


@cache
def _fma_properties() -> dict[str, Attribute]:
    return _properties_of(lambda v: llvm.FMAOp(v, v, v))


def icmp(lhs: SSAValue, rhs: SSAValue, predicate: IntegerAttr) -> Operation:
    """`llvm.icmp predicate lhs, rhs`: i1, or a vector of i1 for vector operands."""
    type_ = lhs.type
    result = VectorType(i1, type_.shape) if isinstance(type_, VectorType) else i1
    return llvm.ICmpOp.create(
        operands=[lhs, rhs], result_types=[result], properties={"predicate": predicate}
    )


def call_intrinsic(name: str, args: Sequence[SSAValue], result: Attribute | None) -> Operation:
    """`llvm.call_intrinsic name(args)`, returning `result` (nothing for None)."""
    properties = dict(_call_properties(llvm.CallIntrinsicOp))
    properties["intrin"] = _string(name)
    properties["operandSegmentSizes"] = _segments(len(args))
    return llvm.CallIntrinsicOp.create(
        operands=args, result_types=[] if result is None else [result], properties=properties
    )


def call(callee: str, args: Sequence[SSAValue], result: Attribute | None) -> Operation:
    """`llvm.call @callee(args)` (C calling convention), returning `result` (or nothing)."""
    properties = dict(_call_properties(llvm.CallOp))
    properties["callee"] = _symbol(callee)
    properties["operandSegmentSizes"] = _segments(len(args))
    return llvm.CallOp.create(
        operands=args, result_types=[] if result is None else [result], properties=properties
    )


@cache
def _call_properties(cls: type[llvm.CallOp | llvm.CallIntrinsicOp]) -> dict[str, Attribute]:
    # The probe's own callee and operand sizes are replaced; the rest (calling
    # convention, fast-math flags, bundles, tail-call kind) and their order are kept.
    if cls is llvm.CallOp:
        return _properties_of(lambda v: llvm.CallOp("probe", v))
    return _properties_of(lambda v: llvm.CallIntrinsicOp("llvm.probe", [v], []))


@cache
def _segments(arguments: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, [arguments, 0])


@cache
def _string(text: str) -> StringAttr:
    return StringAttr(text)


@cache
def _symbol(name: str) -> SymbolRefAttr:
    return SymbolRefAttr(name)

"""The fast `llvm` op constructors make exactly the ops xDSL's constructors make."""

import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, VectorType, f32, f64, i1, i8, i32, i64
from xdsl.ir import Block, Operation

from mlc.lowering.convert_to_llvm import llvm_ops
from mlc.lowering.convert_to_llvm.arith import BINARY_OPS
from mlc.lowering.convert_to_llvm.common import PTR, descriptor_type, positions


def same_op(fast: Operation, slow: Operation) -> bool:
    return (
        type(fast) is type(slow)
        and list(fast.operands) == list(slow.operands)
        and [r.type for r in fast.results] == [r.type for r in slow.results]
        and fast.properties == slow.properties
        and fast.attributes == slow.attributes
        and not fast.regions
        and not fast.successors
    )


@pytest.fixture
def values():
    """Block arguments: i64, i64, f32, f64 vector, ptr, 2-D descriptor, i32."""
    types = [i64, i64, f32, VectorType(f64, [4]), PTR, descriptor_type(2), i32]
    return Block(arg_types=types).args


@pytest.mark.parametrize(
    "cls",
    [cls for cls in BINARY_OPS.values() if issubclass(cls, llvm_ops.BINARY_BASES)],
    ids=lambda cls: cls.__name__,
)
def test_binary(values, cls):
    a, b, x, v, *_ = values
    lhs, rhs = (x, x) if issubclass(cls, llvm.AbstractFloatArithOp) else (a, b)
    assert same_op(llvm_ops.binary(cls, lhs, rhs), cls(lhs, rhs))
    if issubclass(cls, llvm.AbstractFloatArithOp):  # vectors keep their type
        assert same_op(llvm_ops.binary(cls, v, v), cls(v, v))


def test_binary_ops_of_every_base_class():
    """Each base class the fast path accepts is used by some converted arith op."""
    used = {
        base
        for cls in BINARY_OPS.values()
        for base in llvm_ops.BINARY_BASES
        if issubclass(cls, base)
    }
    assert used == set(llvm_ops.BINARY_BASES)


@pytest.mark.parametrize(("value", "type_"), [(0, i64), (-7, i64), (1, i1), (255, i8), (3, i32)])
def test_constant(value, type_):
    assert same_op(
        llvm_ops.constant(value, type_), llvm.ConstantOp(IntegerAttr(value, type_), type_)
    )


@pytest.mark.parametrize("indices", [(1,), (3, 1), (4, 0)])
def test_struct_fields(values, indices):
    a, *_, descriptor, _ = values
    field_type = PTR if indices == (1,) else i64
    assert same_op(
        llvm_ops.extract_value(descriptor, field_type, positions(*indices)),
        llvm.ExtractValueOp(positions(*indices), descriptor, field_type),
    )
    assert same_op(
        llvm_ops.insert_value(descriptor, a, positions(*indices)),
        llvm.InsertValueOp(positions(*indices), descriptor, a),
    )


@pytest.mark.parametrize("element", [f32, i8, VectorType(f64, [4])])
def test_memory(values, element):
    a, _, x, *_ = values
    pointer = values[4]
    assert same_op(
        llvm_ops.element_address(pointer, a, element),
        llvm.GEPOp(pointer, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[a], inbounds=True),
    )
    assert same_op(llvm_ops.load(pointer, element), llvm.LoadOp(pointer, element))
    assert same_op(llvm_ops.store(x, pointer), llvm.StoreOp(x, pointer))


def test_undef():
    type_ = descriptor_type(3)
    assert same_op(llvm_ops.undef(type_), llvm.UndefOp(type_))


def test_properties_are_not_shared(values):
    """Each op owns its properties: changing one op's leaves the next one's alone."""
    a, b, *_ = values
    first = llvm_ops.binary(llvm.AddOp, a, b)
    first.properties["overflowFlags"] = IntegerAttr(1, i32)
    assert same_op(llvm_ops.binary(llvm.AddOp, a, b), llvm.AddOp(a, b))


@pytest.mark.parametrize(("index", "element"), [(0, i64), (3, i64), (0, f32)])
def test_field_address(values, index, element):
    pointer = values[4]
    assert same_op(
        llvm_ops.field_address(pointer, index, element), llvm.GEPOp(pointer, [index], element)
    )


def same_branch(fast: Operation, slow: Operation) -> bool:
    return (
        type(fast) is type(slow)
        and list(fast.operands) == list(slow.operands)
        and list(fast.successors) == list(slow.successors)
        and fast.properties == slow.properties
        and fast.attributes == slow.attributes
    )


@pytest.mark.parametrize(("then_count", "else_count"), [(0, 0), (2, 0), (1, 2)])
def test_branches(then_count, else_count):
    entry = Block(arg_types=[i1, i64, i64])
    condition, a, b = entry.args
    then_block, else_block = Block(arg_types=[i64] * then_count), Block()
    then_args, else_args = [a, b][:then_count], [b, a][:else_count]
    assert same_branch(llvm_ops.branch(then_block, then_args), llvm.BrOp(then_block, *then_args))
    assert same_branch(
        llvm_ops.cond_branch(condition, then_block, then_args, else_block, else_args),
        llvm.CondBrOp(condition, then_block, then_args, else_block, else_args),
    )


def same_printed(fast: Operation, slow: Operation) -> bool:
    """Equal ops, properties in the same order (the printer keeps their order)."""
    return same_op(fast, slow) and list(fast.properties) == list(slow.properties)


@pytest.mark.parametrize("predicate", [0, 2, 9])
def test_icmp(values, predicate):
    a, b, *_ = values
    flag = IntegerAttr(predicate, i64)
    assert same_printed(llvm_ops.icmp(a, b, flag), llvm.ICmpOp(a, b, flag))
    lanes = Block(arg_types=[VectorType(i32, [8])] * 2).args
    assert same_printed(llvm_ops.icmp(*lanes, flag), llvm.ICmpOp(*lanes, flag))


def test_fma(values):
    x, v = values[2], values[3]
    assert same_printed(llvm_ops.fma(x, x, x), llvm.FMAOp(x, x, x))
    assert same_printed(llvm_ops.fma(v, v, v), llvm.FMAOp(v, v, v))


@pytest.mark.parametrize("count", [0, 1, 3])
def test_calls(values, count):
    args = [values[0], values[2], values[4]][:count]
    for result in (None, f32):
        assert same_printed(
            llvm_ops.call("callee", args, result), llvm.CallOp("callee", *args, return_type=result)
        )
        intrinsic = llvm_ops.call_intrinsic("llvm.fabs.f32", args, result)
        expected = llvm.CallIntrinsicOp("llvm.fabs.f32", args, [] if result is None else [result])
        assert same_printed(intrinsic, expected)

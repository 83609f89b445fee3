"""The quick `arith`/`scf` constructors make exactly the ops xDSL's constructors make."""

from io import StringIO

import pytest
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    VectorType,
    f16,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Block, Operation
from xdsl.printer import Printer

from mlc.lowering.support import quick_ops


def generic(op: Operation) -> str:
    """The op's generic form, its regions included."""
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(op)
    return out.getvalue()


def same_op(fast: Operation, slow: Operation) -> bool:
    return (
        type(fast) is type(slow)
        and list(fast.operands) == list(slow.operands)
        and [r.type for r in fast.results] == [r.type for r in slow.results]
        and fast.properties == slow.properties
        and fast.attributes == slow.attributes
        and len(fast.regions) == len(slow.regions)
        and generic(fast) == generic(slow)
    )


INTEGER_OPS = [
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.DivSIOp,
    arith.RemSIOp,
    arith.CeilDivSIOp,
    arith.MinSIOp,
    arith.MaxSIOp,
    arith.AndIOp,
]
FLOAT_OPS = [arith.AddfOp, arith.SubfOp, arith.MulfOp]


@pytest.mark.parametrize("cls", INTEGER_OPS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("type_", [IndexType(), i64, i32, VectorType(i32, [8])], ids=str)
def test_integer_binary(cls, type_):
    a, b = Block(arg_types=[type_, type_]).args
    assert same_op(quick_ops.binary(cls, a, b), cls(a, b))


@pytest.mark.parametrize("cls", FLOAT_OPS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("type_", [f32, f16, VectorType(f32, [16])], ids=str)
def test_float_binary(cls, type_):
    a, b = Block(arg_types=[type_, type_]).args
    assert same_op(quick_ops.binary(cls, a, b), cls(a, b))


@pytest.mark.parametrize("value", [0, 1, -3, 4096, 2**40])
def test_index(value):
    assert same_op(quick_ops.index(value), arith.ConstantOp(IntegerAttr(value, IndexType())))


@pytest.mark.parametrize("predicate", ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "uge"])
@pytest.mark.parametrize("type_", [IndexType(), i64, VectorType(i32, [4])], ids=str)
def test_cmpi(predicate, type_):
    a, b = Block(arg_types=[type_, type_]).args
    fast = quick_ops.cmpi(a, b, predicate)
    assert same_op(fast, arith.CmpiOp(a, b, predicate))
    if not isinstance(type_, VectorType):
        assert fast.results[0].type == i1
    # A second op of the same kind shares nothing mutable with the first.
    again = quick_ops.cmpi(b, a, predicate)
    assert again.properties is not fast.properties
    assert list(again.operands) == [b, a]


def test_yield():
    a, b = Block(arg_types=[i64, f32]).args
    assert same_op(quick_ops.yield_(a, b), scf.YieldOp(a, b))
    assert same_op(quick_ops.yield_(), scf.YieldOp())


@pytest.mark.parametrize("with_else", [False, True])
def test_if(with_else):
    (cond, x) = Block(arg_types=[i1, IndexType()]).args

    def body() -> list[Operation]:
        return [arith.AddiOp(x, x), scf.YieldOp()]

    fast = quick_ops.if_(cond, body(), body() if with_else else None)
    slow = scf.IfOp(cond, [], body(), body() if with_else else None)
    assert same_op(fast, slow)
    assert len(fast.false_region.blocks) == int(with_else)


MEMREFS = [
    MemRefType(f32, [4, 16]),
    MemRefType(f16, [2, 3, 8, 16]),
    MemRefType(f32, [-1, 16]),
]


@pytest.mark.parametrize("type_", MEMREFS, ids=str)
def test_loads_and_stores(type_):
    element = type_.element_type
    lanes = VectorType(element, [8])
    block = Block(arg_types=[type_, element, lanes, *[IndexType()] * type_.get_num_dims()])
    base, scalar, vec, *at = block.args
    assert same_op(quick_ops.load(base, at), memref.LoadOp.get(base, at))
    assert same_op(quick_ops.vector_load(base, at, lanes), vector.LoadOp(base, at, lanes))
    assert same_op(quick_ops.store(scalar, base, at), memref.StoreOp.get(scalar, base, at))
    assert same_op(quick_ops.store(vec, base, at), vector.StoreOp(vec, base, at))
    # The template of one index count is not reused for another.
    if len(at) > 1:
        fewer = MemRefType(element, [16])
        (other,) = Block(arg_types=[fewer]).args
        assert same_op(quick_ops.load(other, at[:1]), memref.LoadOp.get(other, at[:1]))


@pytest.mark.parametrize("element", [f32, f16], ids=str)
def test_masked_store_fma_broadcast(element):
    lanes = VectorType(element, [16])
    mask_type = VectorType(i1, [16])
    block = Block(arg_types=[MemRefType(element, [3, 40]), mask_type, lanes, lanes, element])
    base, mask, a, b, scalar = block.args
    i, j = Block(arg_types=[IndexType(), IndexType()]).args
    fast = quick_ops.masked_store(base, [i, j], mask, a)
    assert same_op(fast, vector.MaskedStoreOp(base, [i, j], mask, a))
    assert same_op(quick_ops.fma(a, b, a), vector.FMAOp(a, b, a))
    assert same_op(quick_ops.broadcast(scalar, lanes), vector.BroadcastOp(scalar, lanes))


@pytest.mark.parametrize("carried", [[], [f32], [IndexType(), VectorType(f32, [8])]], ids=str)
def test_for(carried):
    lb, ub, step, *init = Block(arg_types=[IndexType()] * 3 + carried).args

    def body() -> Block:
        block = Block(arg_types=[IndexType(), *carried])
        block.add_op(scf.YieldOp(*block.args[1:]))
        return block

    fast = quick_ops.for_(lb, ub, step, init, body())
    assert same_op(fast, scf.ForOp(lb, ub, step, init, body()))
    assert [r.type for r in fast.results] == carried

"""convert-to-llvm's helpers, and that a failure leaves the module untouched."""

import pytest
from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StridedLayoutAttr,
    TensorType,
    f32,
    f64,
    i1,
    i32,
    i64,
)

from mlc.diagnostics import OpError
from mlc.ir import parse_module, print_module
from mlc.lowering.convert_to_llvm import (
    ConvertToLLVMPass,
    descriptor_type,
    llvm_type,
    unsupported_op_reason,
)
from mlc.lowering.convert_to_llvm.common import static_strides
from mlc.lowering.convert_to_llvm.memref import dropped_dims
from mlc.registry import make_context, parse_pipeline


def test_scalar_types_map_index_to_i64():
    assert llvm_type(IndexType()) == i64
    assert [llvm_type(t) for t in (i1, i32, f32, f64)] == [i1, i32, f32, f64]
    assert llvm_type(TensorType(f32, [4])) is None
    assert llvm_type(MemRefType(f32, [4])) is None


def test_unsupported_op_reason():
    value = arith.ConstantOp(FloatAttr(1.0, f32))
    assert unsupported_op_reason(value) is None
    assert unsupported_op_reason(math.ExpOp(value)) is None
    integer = arith.ConstantOp(IntegerAttr(2, i32))
    assert unsupported_op_reason(math.IPowIOp(integer, integer)) is None
    ctlz = math.CountLeadingZerosOp(integer)
    assert unsupported_op_reason(ctlz) == "is not supported by convert-to-llvm yet"


def test_descriptor_type_has_rank_arrays_except_at_rank_0():
    assert str(descriptor_type(0)) == "!llvm.struct<(!llvm.ptr, !llvm.ptr, i64)>"
    assert str(descriptor_type(2)) == (
        "!llvm.struct<(!llvm.ptr, !llvm.ptr, i64, !llvm.array<2 x i64>, !llvm.array<2 x i64>)>"
    )


def test_static_strides_of_identity_layouts_stop_at_dynamic_sizes():
    assert static_strides(MemRefType(f32, [2, 3, 4])) == [12, 4, 1]
    assert static_strides(MemRefType(f32, [2, -1, 4])) == [None, 4, 1]
    strided = MemRefType(f32, [2, 3], StridedLayoutAttr([None, 1], 5))
    assert static_strides(strided) == [None, 1]


def test_rank_reducing_subview_drops_static_unit_dims():
    source = memref.AllocOp([], [], MemRefType(f32, [1, 4, 1, 8]))
    result = MemRefType(f32, [4, 8], StridedLayoutAttr([8, 1]))
    view = memref.SubviewOp(source, [], [], [], [0] * 4, [1, 4, 1, 8], [1] * 4, result)
    assert dropped_dims(view) == {0, 2}


def test_registered_under_its_contract_name():
    (pass_,) = parse_pipeline("convert-to-llvm")
    assert isinstance(pass_, ConvertToLLVMPass)


def test_failure_leaves_the_module_as_it_was():
    text = """
func.func @ok(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  func.return %0 : f32
}
func.func @bad(%a: i32) -> i32 {
  %0 = math.ctlz %a : i32
  func.return %0 : i32
}
"""
    module = parse_module(text)
    before = print_module(module)
    with pytest.raises(OpError, match=r"'math\.ctlz' op is not supported"):
        ConvertToLLVMPass().apply(make_context(), module)
    assert print_module(module) == before

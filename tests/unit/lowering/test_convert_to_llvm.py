"""convert-to-llvm's helpers, and that a failure leaves the module untouched."""

import pytest
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    MemRefType,
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
    llvm_type,
    unsupported_op_reason,
)
from mlc.registry import make_context, parse_pipeline


def test_scalar_types_map_index_to_i64():
    assert llvm_type(IndexType()) == i64
    assert [llvm_type(t) for t in (i1, i32, f32, f64)] == [i1, i32, f32, f64]
    assert llvm_type(TensorType(f32, [4])) is None
    assert llvm_type(MemRefType(f32, [4])) is None


def test_unsupported_op_reason():
    value = arith.ConstantOp(FloatAttr(1.0, f32))
    assert unsupported_op_reason(value) is None
    assert unsupported_op_reason(math.ExpOp(value)) == "is not supported by convert-to-llvm yet"


def test_registered_under_its_contract_name():
    (pass_,) = parse_pipeline("convert-to-llvm")
    assert isinstance(pass_, ConvertToLLVMPass)


def test_failure_leaves_the_module_as_it_was():
    text = """
func.func @ok(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  func.return %0 : f32
}
func.func @bad(%a: f32) -> f32 {
  %0 = math.exp %a : f32
  func.return %0 : f32
}
"""
    module = parse_module(text)
    before = print_module(module)
    with pytest.raises(OpError, match=r"'math\.exp' op is not supported"):
        ConvertToLLVMPass().apply(make_context(), module)
    assert print_module(module) == before

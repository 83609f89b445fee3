"""The translation of function bodies by op class (`BY_CLASS`, the intrinsic calls) gives
the LLVM IR that xDSL's `convert_op` gives for the same ops."""

import pytest

from mlc.backend import llvm as translation
from mlc.backend.llvm import LLVMTranslationError, ops_to_llvmlite
from mlc.ir import parse_module

BODY = """
llvm.func @k(%p: !llvm.ptr, %i: i64, %c: i1, %v: vector<4xf32>) -> f32 {
  %t = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
  %u = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
  %s = llvm.add %t, %u : i32
  %z = llvm.mlir.constant(0 : i32) : i32
  llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%z) : (i32) -> ()
  %q = llvm.getelementptr inbounds %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %x = llvm.load %q {alignment = 4 : i64} : !llvm.ptr -> f32
  llvm.store %x, %p {alignment = 4 : i64} : f32, !llvm.ptr
  %d = llvm.mlir.undef : !llvm.struct<(ptr, i64)>
  %d1 = llvm.insertvalue %p, %d[0] : !llvm.struct<(ptr, i64)>
  %d2 = llvm.insertvalue %i, %d1[1] : !llvm.struct<(ptr, i64)>
  %f = llvm.extractvalue %d2[1] : !llvm.struct<(ptr, i64)>
  %w = llvm.shufflevector %v, %v [1, 0, 3, 2] : vector<4xf32>
  %y = llvm.select %c, %x, %x : i1, f32
  llvm.cond_br %c, ^a(%y : f32), ^b
^a(%r: f32):
  llvm.return %r : f32
^b:
  llvm.br ^a(%x : f32)
}
"""


def test_same_ir_as_xdsls_convert_op(monkeypatch: pytest.MonkeyPatch):
    ops = list(parse_module(BODY).ops)
    ours = str(ops_to_llvmlite(ops))
    # xDSL's translation of every op: nothing by class, no intrinsic call of mlc's.
    monkeypatch.setattr(translation, "BY_CLASS", {})
    monkeypatch.setattr(translation, "BRANCHES", {})
    extra = {k: v for k, v in translation.EXTRA_OPS.items() if k.name != "llvm.call_intrinsic"}
    monkeypatch.setattr(translation, "EXTRA_OPS", extra)
    assert ours == str(ops_to_llvmlite(ops))
    assert ours.count('declare i32 @"llvm.nvvm.read.ptx.sreg.tid.x"()') == 1
    assert "getelementptr inbounds" in ours and "shufflevector" in ours


def test_refused_intrinsic_calls_keep_xdsls_message():
    flags = "{fastmathFlags = #llvm.fastmath<fast>}"
    call = f'llvm.call_intrinsic "llvm.x"(%a) {flags} : (f32) -> f32'
    source = f"llvm.func @g(%a: f32) -> f32 {{\n  %r = {call}\n  llvm.return %r : f32\n}}\n"
    with pytest.raises(LLVMTranslationError, match="Fast-math flags not supported"):
        ops_to_llvmlite(list(parse_module(source).ops))


def test_fast_math_flags_in_llvms_order():
    """xDSL lists a set, whose order changes with the process's string hashing (and with
    it the PTX cache's key); mlc writes the flags in LLVM's order."""
    flags = "{fastmathFlags = #llvm.fastmath<contract, reassoc, nnan>}"
    body = f"%m = llvm.fmul %a, %a {flags} : f32\n  %s = llvm.fadd %m, %a : f32"
    source = f"llvm.func @h(%a: f32) -> f32 {{\n  {body}\n  llvm.return %s : f32\n}}\n"
    text = str(ops_to_llvmlite(list(parse_module(source).ops)))
    assert "fmul reassoc nnan contract float" in text
    assert 'fadd float %".4", %".1"' in text

"""Tests for `mlc.autodiff.min_cut`: which forward values a backward saves or recomputes."""

import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from mlc.autodiff.min_cut import Unsplittable, min_cut
from mlc.registry import make_context


def cut_of(text: str, cotangents: int = 1, values: int = 1):
    module = Parser(make_context(), text).parse_module()
    f = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks][-1]
    block = f.body.block
    ret = block.last_op
    split = len(block.args) - cotangents
    return min_cut(
        list(block.ops)[:-1],
        list(block.args[:split]),
        list(block.args[split:]),
        list(ret.operands[:values]),
        list(ret.operands[values:]),
    )


CHAIN = """
func.func @j(%x: tensor<64xf32>, %ct: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %a = ml.exp %x : (tensor<64xf32>) -> tensor<64xf32>
  %b = ml.tanh %a : (tensor<64xf32>) -> tensor<64xf32>
  %g1 = ml.mul %ct, %b : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %g2 = ml.mul %g1, %a : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %b, %g2 : tensor<64xf32>, tensor<64xf32>
}
"""


def test_chain_saves_its_input():
    cut = cut_of(CHAIN)
    assert [v.name_hint for v in cut.saved] == ["x"]
    assert [op.name for op in cut.recomputed] == ["ml.exp", "ml.tanh"]
    assert cut.saved_bytes == 256 and cut.read_bytes == 512
    assert [op.name for op in cut.forward] == ["ml.exp", "ml.tanh"]
    assert [op.name for op in cut.backward] == ["ml.exp", "ml.tanh", "ml.mul", "ml.mul"]


def test_wide_input_saves_the_narrow_result():
    """Recomputing from an input 4x bigger would keep more: the result is saved."""
    cut = cut_of(
        """
func.func @j(%x: tensor<4x64xf32>, %ct: tensor<4x64xf32>) -> (tensor<4x64xf32>) {
  %s = ml.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 1, 64>,
                    steps = array<i64: 1, 1>} : (tensor<4x64xf32>) -> tensor<1x64xf32>
  %e = ml.exp %s : (tensor<1x64xf32>) -> tensor<1x64xf32>
  %g = ml.mul %ct, %e : (tensor<4x64xf32>, tensor<1x64xf32>) -> tensor<4x64xf32>
  func.return %g : tensor<4x64xf32>
}""",
        values=0,
    )
    assert [v.name_hint for v in cut.saved] == ["e"]
    assert cut.recomputed == [] and cut.saved_bytes == 256


def test_refused_op_is_saved_not_recomputed():
    cut = cut_of(
        """
func.func @j(%x: tensor<2x3xf32>, %w: tensor<3x64xf32>, %ct: tensor<2x64xf32>)
    -> (tensor<2x64xf32>, tensor<2x64xf32>) {
  %h = ml.matmul %x, %w : (tensor<2x3xf32>, tensor<3x64xf32>) -> tensor<2x64xf32>
  %g = ml.mul %ct, %h : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  func.return %h, %g : tensor<2x64xf32>, tensor<2x64xf32>
}"""
    )
    assert [v.name_hint for v in cut.saved] == ["h"]
    assert "too costly" in cut.refusals[cut.saved[0].owner]


def test_a_needed_index_from_a_call_cannot_be_split():
    """An index is never saved, and a call (side effects) never recomputed."""
    with pytest.raises(Unsplittable, match="index"):
        cut_of(
            """
func.func private @pick() -> index
func.func @j(%x: tensor<4xf32>, %ct: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = func.call @pick() : () -> index
  %e = tensor.extract %ct[%n] : tensor<4xf32>
  %g = tensor.from_elements %e, %e, %e, %e : tensor<4xf32>
  func.return %x, %g : tensor<4xf32>, tensor<4xf32>
}"""
        )

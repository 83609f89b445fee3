"""What each `bufferize` rule says an op reads and may write in place."""

# ruff: noqa: E501  (IR lines as they are written in .mlir files)

from xdsl.dialects import scf, tensor
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation

from mlc.ir import parse_module
from mlc.lowering.linalg.bufferize_rules import RULES

SOURCE = """
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s = tensor.extract_slice %t[1] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %i = tensor.insert_slice %s into %t[0] [2] [1] : tensor<2xf32> into tensor<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = scf.for %k = %c0 to %n step %c1 iter_args(%p = %i) -> (tensor<4xf32>) {
    scf.yield %p : tensor<4xf32>
  }
  func.return %l : tensor<4xf32>
}
"""


def op_of(kind: type[Operation]) -> Operation:
    return next(op for op in parse_module(SOURCE).walk() if isinstance(op, kind))


def reads(op: Operation) -> list[int]:
    return [i for i in range(len(op.operands)) if RULES[type(op)].reads(op, i)]


def writes(op: Operation) -> list[int]:
    return [i for i in range(len(op.operands)) if RULES[type(op)].writes(op, i)]


def test_generic_writes_its_output_or_an_input_read_like_it():
    generic = op_of(GenericOp)
    assert reads(generic) == [0, 1]  # the output's body argument is unused
    assert writes(generic) == [0, 2]  # not the broadcast input


def test_views_read_nothing_and_insert_slice_writes_its_destination():
    assert reads(op_of(tensor.ExtractSliceOp)) == []
    insert = op_of(tensor.InsertSliceOp)
    assert reads(insert) == [0, 1]
    assert writes(insert) == [1]


def test_a_loop_may_write_what_it_carries():
    assert writes(op_of(scf.ForOp)) == [3]

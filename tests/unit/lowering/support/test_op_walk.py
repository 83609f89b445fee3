"""`walk_ops` lists exactly what `Operation.walk` yields, in the same order."""

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i1
from xdsl.ir import Block, Region

from mlc.ir import parse_module
from mlc.lowering.support.op_walk import walk_ops

NESTED = """
func.func @f(%n: index, %c: i1) -> index {
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %zero to %n step %one iter_args(%acc = %zero) -> (index) {
    %s = scf.if %c -> (index) {
      %a = arith.addi %acc, %i : index
      scf.yield %a : index
    } else {
      scf.yield %acc : index
    }
    scf.yield %s : index
  }
  func.return %r : index
}
func.func private @g()
"""


def test_same_order_as_walk():
    module = parse_module(NESTED)
    assert [id(op) for op in walk_ops(module)] == [id(op) for op in module.walk()]
    function = next(iter(module.ops))
    assert [id(op) for op in walk_ops(function)] == [id(op) for op in function.walk()]


def test_leaf_and_empty_regions():
    constant = arith.ConstantOp(IntegerAttr(3, IndexType()))
    assert walk_ops(constant) == [constant]
    empty = ModuleOp([])
    assert walk_ops(empty) == [empty]
    # An `scf.if` with an empty else region, and a region of two blocks.
    condition = Block(arg_types=[i1]).args[0]
    inner = scf.IfOp(condition, [], [scf.YieldOp()], None)
    two = ModuleOp(Region([Block([inner]), Block([])]))
    assert [id(op) for op in walk_ops(two)] == [id(op) for op in two.walk()]

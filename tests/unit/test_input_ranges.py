"""The ranges an `ml` program requires of its integer arguments (gather indices, select masks)."""
# ruff: noqa: E501  (IR lines as they are written in .mlir files)

import pytest
from xdsl.dialects.func import FuncOp

from mlc.diagnostics import verify_module
from mlc.input_ranges import argument_ranges, function_ranges, intersection
from mlc.ir import parse_module


def ranges_of(body: str, signature: str) -> dict[int, range]:
    module = parse_module(f"func.func @main({signature}) {{\n{body}\n  func.return\n}}")
    assert not verify_module(module)
    (function,) = module.ops
    assert isinstance(function, FuncOp)
    return argument_ranges(function)


def test_gather_indices_take_the_size_of_the_gathered_axis():
    body = """
  %t = arith.constant dense<0.0> : tensor<30x8xf32>
  %g = ml.gather %t, %ids {axis = 0 : i64} : (tensor<30x8xf32>, tensor<2x5xi64>) -> tensor<2x5x8xf32>
  %h = ml.gather %t, %cols {axis = -1 : i64} : (tensor<30x8xf32>, tensor<3xi32>) -> tensor<30x3xf32>"""
    signature = "%ids: tensor<2x5xi64>, %x: tensor<4xf32>, %cols: tensor<3xi32>"
    assert ranges_of(body, signature) == {0: range(30), 2: range(8)}


def test_ranges_pass_through_ops_that_move_values():
    body = """
  %t = arith.constant dense<0.0> : tensor<30x8xf32>
  %c = ml.cast %ids : (tensor<2x5xi64>) -> tensor<2x5xi32>
  %r = ml.reshape %c : (tensor<2x5xi32>) -> tensor<10xi32>
  %s = ml.slice %r {starts = array<i64: 0>, ends = array<i64: 4>, steps = array<i64: 1>} : (tensor<10xi32>) -> tensor<4xi32>
  %b = ml.broadcast_to %s : (tensor<4xi32>) -> tensor<2x4xi32>
  %p = ml.transpose %b {perm = array<i64: 1, 0>} : (tensor<2x4xi32>) -> tensor<4x2xi32>
  %j = ml.concat %p, %other {axis = 0 : i64} : (tensor<4x2xi32>, tensor<1x2xi32>) -> tensor<5x2xi32>
  %g = ml.gather %t, %j {axis = 0 : i64} : (tensor<30x8xf32>, tensor<5x2xi32>) -> tensor<5x2x8xf32>"""
    signature = "%ids: tensor<2x5xi64>, %other: tensor<1x2xi32>"
    assert ranges_of(body, signature) == {0: range(30), 1: range(30)}


def test_select_conditions_take_zero_and_one():
    body = """
  %m = ml.cast %mask : (tensor<2x7xi64>) -> tensor<2x7xi1>
  %r = ml.reshape %m : (tensor<2x7xi1>) -> tensor<2x7x1xi1>
  %s = ml.select %r, %x, %x : (tensor<2x7x1xi1>, tensor<2x7x8xf32>, tensor<2x7x8xf32>) -> tensor<2x7x8xf32>
  %b = ml.select %flags, %x, %x : (tensor<2x7x1xi1>, tensor<2x7x8xf32>, tensor<2x7x8xf32>) -> tensor<2x7x8xf32>"""
    signature = "%mask: tensor<2x7xi64>, %x: tensor<2x7x8xf32>, %flags: tensor<2x7x1xi1>"
    assert ranges_of(body, signature) == {0: range(2), 2: range(2)}


def test_several_uses_take_the_intersection():
    body = """
  %words = arith.constant dense<0.0> : tensor<30x8xf32>
  %types = arith.constant dense<0.0> : tensor<2x8xf32>
  %a = ml.gather %words, %ids {axis = 0 : i64} : (tensor<30x8xf32>, tensor<7xi64>) -> tensor<7x8xf32>
  %b = ml.gather %types, %ids {axis = 0 : i64} : (tensor<2x8xf32>, tensor<7xi64>) -> tensor<7x8xf32>"""
    assert ranges_of(body, "%ids: tensor<7xi64>") == {0: range(2)}


def test_values_read_from_a_gathered_table_and_chosen_by_select_pass_on():
    body = """
  %t = arith.constant dense<0.0> : tensor<30x8xf32>
  %picked = ml.gather %table, %i {axis = 0 : i64} : (tensor<10xi64>, tensor<3xi64>) -> tensor<3xi64>
  %either = ml.select %c, %picked, %picked : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %g = ml.gather %t, %either {axis = 0 : i64} : (tensor<30x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>"""
    signature = "%table: tensor<10xi64>, %i: tensor<3xi64>, %c: tensor<3xi1>"
    assert ranges_of(body, signature) == {0: range(30), 1: range(10), 2: range(2)}


@pytest.mark.parametrize(
    ("body", "signature"),
    [
        # a table whose gathered axis is dynamic: no bound
        (
            "%g = ml.gather %t, %ids {axis = 0 : i64} : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>",
            "%t: tensor<?x8xf32>, %ids: tensor<3xi64>",
        ),
        # arithmetic makes new values: the argument itself is unconstrained
        (
            """%t = arith.constant dense<0.0> : tensor<30x8xf32>
  %n = ml.add %ids, %ids : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %g = ml.gather %t, %n {axis = 0 : i64} : (tensor<30x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>""",
            "%ids: tensor<3xi64>",
        ),
        # a float mask, and the shape operand of a reshape, are not drawn from a range
        (
            """%m = ml.cast %mask : (tensor<3xf32>) -> tensor<3xi1>
  %s = ml.select %m, %mask, %mask : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = ml.reshape %mask, %shape : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x?xf32>""",
            "%mask: tensor<3xf32>, %shape: tensor<2xi64>",
        ),
    ],
    ids=["dynamic-table", "arithmetic", "float-and-shape"],
)
def test_no_range(body, signature):
    assert ranges_of(body, signature) == {}


def test_function_ranges_finds_the_function_by_name():
    module = parse_module(
        """
func.func @other(%i: tensor<2xi64>) {
  func.return
}
func.func @main(%i: tensor<2xi64>) {
  %t = arith.constant dense<0.0> : tensor<5xf32>
  %g = ml.gather %t, %i {axis = 0 : i64} : (tensor<5xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}"""
    )
    assert function_ranges(module, "main") == {0: range(5)}
    assert function_ranges(module, "other") == {}
    assert function_ranges(module, "missing") == {}


def test_intersection():
    assert intersection(range(0, 30), range(-10, 11)) == range(0, 11)
    assert intersection(range(0, 2), range(5, 9)) == range(0, 2)  # disjoint: the first

"""`bucketable_dims`: which argument dims padding cannot change a result through."""

# ruff: noqa: E501  (IR lines as they are written in .mlir files)

import pytest
from xdsl.dialects import func

from mlc.frontends.trace.bucketing import bucketable_dims
from mlc.ir import parse_module


def classes(body: str, signature: str) -> list[tuple[list, list]]:
    module = parse_module(f"func.func @f{signature} {{\n{body}\n}}")
    function = next(op for op in module.body.ops if isinstance(op, func.FuncOp))
    return [(c.args, c.results) for c in bucketable_dims(function)]


def test_elementwise_with_a_broadcast_bias_keeps_rows_apart():
    body = """
    %y = ml.add %x, %b : (tensor<5x4xf32>, tensor<4xf32>) -> tensor<5x4xf32>
    %r = ml.relu %y : (tensor<5x4xf32>) -> tensor<5x4xf32>
    func.return %r : tensor<5x4xf32>"""
    got = classes(body, "(%x: tensor<5x4xf32>, %b: tensor<4xf32>) -> tensor<5x4xf32>")
    assert got == [([(0, 0)], [(0, 0)]), ([(0, 1), (1, 0)], [(0, 1)])]


def test_a_reduction_mixes_the_dim_it_reduces_only():
    body = """
    %s = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<5x4xf32>) -> tensor<5xf32>
    func.return %s : tensor<5xf32>"""
    assert classes(body, "(%x: tensor<5x4xf32>) -> tensor<5xf32>") == [([(0, 0)], [(0, 0)])]


def test_softmax_mixes_its_axis_only():
    body = """
    %y = ml.softmax %x {axis = 0 : i64} : (tensor<5x4xf32>) -> tensor<5x4xf32>
    func.return %y : tensor<5x4xf32>"""
    assert classes(body, "(%x: tensor<5x4xf32>) -> tensor<5x4xf32>") == [([(0, 1)], [(0, 1)])]


def test_transpose_moves_rows_to_another_dim():
    body = """
    %y = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
    %s = ml.reduce_max %y {axes = array<i64: 0>, keepdims = true} : (tensor<4x5xf32>) -> tensor<1x5xf32>
    func.return %s : tensor<1x5xf32>"""
    assert classes(body, "(%x: tensor<5x4xf32>) -> tensor<1x5xf32>") == [([(0, 0)], [(0, 1)])]


def test_matmul_rows_and_columns_are_safe_but_not_the_contraction():
    body = """
    %y = ml.matmul %x, %w : (tensor<5x3xf32>, tensor<3x7xf32>) -> tensor<5x7xf32>
    func.return %y : tensor<5x7xf32>"""
    got = classes(body, "(%x: tensor<5x3xf32>, %w: tensor<3x7xf32>) -> tensor<5x7xf32>")
    assert got == [([(0, 0)], [(0, 0)]), ([(1, 1)], [(0, 1)])]


@pytest.mark.parametrize(
    "op",
    [
        "ml.reshape %x : (tensor<6x4xf32>) -> tensor<24xf32>",
        "ml.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 6, 4>, steps = array<i64: 1, 1>}"
        " : (tensor<6x4xf32>) -> tensor<5x4xf32>",
        "ml.concat %x, %x {axis = 0 : i64} : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<12x4xf32>",
    ],
)
def test_reshape_slice_and_concat_mix_everything_they_touch(op):
    result = op.rsplit("-> ", 1)[1]
    body = f"""
    %y = {op}
    func.return %y : {result}"""
    got = classes(body, f"(%x: tensor<6x4xf32>) -> {result}")
    assert all((0, 0) not in args for args, _ in got)


def test_constants_and_size_one_dims_are_never_padded():
    body = """
    %c = arith.constant dense<1.0> : tensor<6x4xf32>
    %y = ml.add %x, %c : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    %z = ml.mul %y, %o : (tensor<6x4xf32>, tensor<1x4xf32>) -> tensor<6x4xf32>
    func.return %z : tensor<6x4xf32>"""
    assert classes(body, "(%x: tensor<6x4xf32>, %o: tensor<1x4xf32>) -> tensor<6x4xf32>") == []


LOOPS = """
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %x) -> (tensor<6x4xf32>) {
      %t = ml.tanh %acc : (tensor<6x4xf32>) -> tensor<6x4xf32>
      scf.yield %t : tensor<6x4xf32>
    }
    %w:2 = scf.while (%v = %r, %k = %k0) : (tensor<6x4xf32>, tensor<f32>) -> (tensor<6x4xf32>, tensor<f32>) {
      %m = CONDITION
      %go = ml.cmp "lt", %m, %k : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %flag = tensor.extract %go[] : tensor<i1>
      scf.condition(%flag) %v, %k : tensor<6x4xf32>, tensor<f32>
    } do {
    ^bb0(%u: tensor<6x4xf32>, %j: tensor<f32>):
      %e = ml.exp %u : (tensor<6x4xf32>) -> tensor<6x4xf32>
      scf.yield %e, %j : tensor<6x4xf32>, tensor<f32>
    }
    func.return %w#0 : tensor<6x4xf32>"""
SIGNATURE = "(%x: tensor<6x4xf32>, %k0: tensor<f32>) -> tensor<6x4xf32>"


def test_loop_carried_values_share_rows():
    body = LOOPS.replace("CONDITION", "ml.neg %k : (tensor<f32>) -> tensor<f32>")
    assert classes(body, SIGNATURE) == [([(0, 0)], [(0, 0)]), ([(0, 1)], [(0, 1)])]


def test_a_loop_condition_reading_across_rows_taints_them():
    reduce = "ml.reduce_max %v {axes = array<i64: 0, 1>, keepdims = false}"
    body = LOOPS.replace("CONDITION", f"{reduce} : (tensor<6x4xf32>) -> tensor<f32>")
    assert classes(body, SIGNATURE) == []


def test_values_python_read_the_size_of_are_pinned():
    module = parse_module(
        """func.func @f(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
      %y = ml.exp %x : (tensor<6x4xf32>) -> tensor<6x4xf32>
      func.return %y : tensor<6x4xf32>
    }"""
    )
    function = next(iter(module.body.ops))
    assert len(bucketable_dims(function)) == 2
    assert bucketable_dims(function, pinned=[function.args[0]]) == []

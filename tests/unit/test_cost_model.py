"""Tests for `mlc.cost_model`: FLOPs and bytes per `ml` op from static shapes."""

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser

from mlc import cost_model
from mlc.cost_model import bytes_moved, flops, matmul_flops
from mlc.dialects.ml import MLOp
from mlc.registry import make_context


def ml_op(text: str) -> Operation:
    """The one `ml` op of a function body written in `text`."""
    module = Parser(make_context(), text).parse_module()
    assert isinstance(module, ModuleOp)
    return next(op for op in module.walk() if isinstance(op, MLOp))


def in_func(args: str, body: str) -> str:
    return f"func.func @f({args}) {{\n  {body}\n  func.return\n}}"


def test_matmul_flops():
    assert matmul_flops(2, 3, 4) == 48
    assert matmul_flops(2, 3, 4, batch=5) == 240


@pytest.mark.parametrize(
    ("args", "body", "expected_flops", "expected_bytes"),
    [
        (
            "%a: tensor<4x8xf32>, %b: tensor<8x16xf32>",
            "%c = ml.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>",
            2 * 4 * 8 * 16,
            4 * (32 + 128 + 64),
        ),
        (
            "%a: tensor<3x4x8xf64>, %b: tensor<8x2xf64>",
            "%c = ml.matmul %a, %b : (tensor<3x4x8xf64>, tensor<8x2xf64>) -> tensor<3x4x2xf64>",
            2 * 3 * 4 * 8 * 2,
            8 * (96 + 16 + 24),
        ),
        (
            "%a: tensor<4x8xf32>, %b: tensor<8xf32>",
            "%c = ml.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>",
            32,
            4 * (32 + 8 + 32),
        ),
        (
            "%a: tensor<4x8xf16>",
            "%c = ml.exp %a : (tensor<4x8xf16>) -> tensor<4x8xf16>",
            32,
            2 * 64,
        ),
        (
            "%a: tensor<4x8xf32>",
            "%c = ml.reduce_sum %a {axes = array<i64: 1>, keepdims = false}"
            " : (tensor<4x8xf32>) -> tensor<4xf32>",
            32,
            4 * (32 + 4),
        ),
        (
            "%a: tensor<4x8xf32>",
            "%c = ml.softmax %a {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>",
            5 * 32,
            4 * 64,
        ),
        (
            "%q: tensor<2x4x5x8xf32>, %k: tensor<2x2x7x8xf32>, %v: tensor<2x2x7x3xf32>",
            "%o = ml.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<2x4x5x8xf32>,"
            " tensor<2x2x7x8xf32>, tensor<2x2x7x3xf32>) -> tensor<2x4x5x3xf32>",
            (2 * 4 * 5 * 7) * (2 * (8 + 3) + 5),
            4 * (320 + 224 + 84 + 120),
        ),
        (
            "%a: tensor<4x8xf32>",
            "%c = ml.transpose %a {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>",
            0,
            4 * 64,
        ),
        (
            "%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>",
            "%y = ml.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)"
            " -> tensor<1x4x6x6xf32>",
            (1 * 4 * 6 * 6) * 2 * 27,
            4 * (192 + 108 + 144),
        ),
        (
            "%x: tensor<1x2x4x4xf32>",
            "%y = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}"
            " : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>",
            8 * 4,
            4 * (32 + 8),
        ),
    ],
)
def test_static_costs(args: str, body: str, expected_flops: int, expected_bytes: int):
    op = ml_op(in_func(args, body))
    assert flops(op) == expected_flops
    assert bytes_moved(op) == expected_bytes


def test_dynamic_dims_give_none():
    op = ml_op(
        in_func(
            "%a: tensor<?x8xf32>, %b: tensor<8x16xf32>",
            "%c = ml.matmul %a, %b : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>",
        )
    )
    assert flops(op) is None
    assert bytes_moved(op) is None


def test_dynamic_contracting_dim_joins_the_static_one():
    op = ml_op(
        in_func(
            "%a: tensor<4x?xf32>, %b: tensor<8x16xf32>",
            "%c = ml.matmul %a, %b : (tensor<4x?xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>",
        )
    )
    assert flops(op) == 2 * 4 * 8 * 16
    assert bytes_moved(op) is None  # the lhs size is still unknown


def test_non_ml_op_gives_none():
    module = Parser(make_context(), in_func("", "%c = arith.constant 1 : i32")).parse_module()
    op = next(op for op in module.walk() if op.name == "arith.constant")
    assert flops(op) is None
    assert bytes_moved(op) is None


# ---------------------------------------------------------------------------
# Symbolic costs
# ---------------------------------------------------------------------------


def test_polynomial_compares_where_every_size_agrees():
    from mlc.cost_model import Polynomial, elements_cost, matmul_cost

    nkm, nm = matmul_cost("n", "k", "m"), elements_cost("n", "m")
    assert nm.provably_le(nkm)
    assert not nkm.provably_le(nm)
    assert elements_cost("n").provably_le(elements_cost("n", "n"))
    assert not elements_cost("n").provably_le(elements_cost("m"))  # undecided either way
    assert not elements_cost("m").provably_le(elements_cost("n"))
    assert Polynomial.product(3).provably_le(Polynomial.product(4))
    assert not Polynomial.product(4).provably_le(Polynomial.product(3))
    assert (nkm + nm + nm) == matmul_cost("n", "k", "m") + Polynomial.product(2, "m", "n")
    assert str(nkm + elements_cost(5)) == "2*k*m*n + 5"
    assert matmul_cost(2, 3, 4).constant() == 48 and nkm.constant() is None


# ---------------------------------------------------------------------------
# Fusion: recompute or materialise
# ---------------------------------------------------------------------------


def test_single_plain_consumer_always_recomputes():
    # Fusing saves the write and the read of the intermediate, whatever the body costs.
    for body_flops in (0, 1, 10, 1000):
        assert cost_model.recompute_is_cheaper(body_flops, 8, 4, [1], kept=False)


def test_cheap_producer_with_two_consumers_recomputes():
    assert cost_model.recompute_is_cheaper(1, 8, 4, [1, 1], kept=False)


def test_expensive_producer_with_many_consumers_materialises():
    assert not cost_model.recompute_is_cheaper(200, 4, 4, [1, 1, 1], kept=False)


def test_broadcast_reads_multiply_the_work():
    assert cost_model.recompute_is_cheaper(1, 4, 4, [2], kept=False)
    assert not cost_model.recompute_is_cheaper(10, 4, 4, [64], kept=False)
    assert not cost_model.recompute_is_cheaper(0, 4, 4, [None], kept=False)


def test_kept_producer_is_read_rather_than_recomputed():
    # Its result is stored anyway: recomputing only adds work.
    assert not cost_model.recompute_is_cheaper(10, 4, 4, [1], kept=True)


# The forward/backward split: what it may recompute, what saving costs.


@pytest.mark.parametrize(
    ("args", "body", "refusal"),
    [
        ("%x: tensor<4x5xf32>", "%y = ml.exp %x : (tensor<4x5xf32>) -> tensor<4x5xf32>", None),
        (
            "%x: tensor<4x5xf32>",
            "%y = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>",
            None,
        ),
        (
            "%x: tensor<4x5xf32>, %w: tensor<5x3xf32>",
            "%y = ml.matmul %x, %w : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>",
            "'ml.matmul' is too costly to recompute",
        ),
        (  # 4 elements into 1: at the ratio, recomputed
            "%x: tensor<4xf32>",
            "%y = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false}"
            " : (tensor<4xf32>) -> tensor<f32>",
            None,
        ),
        (  # 5 into 1: past it
            "%x: tensor<5xf32>",
            "%y = ml.reduce_sum %x {axes = array<i64: 0>, keepdims = false}"
            " : (tensor<5xf32>) -> tensor<f32>",
            "'ml.reduce_sum' reduces a large input",
        ),
        (
            "%x: tensor<4x5xf32>",
            "%y = ml.softmax %x {axis = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>",
            "'ml.softmax' is not elementwise or data movement",
        ),
    ],
)
def test_recompute_refusal(args, body, refusal):
    assert cost_model.recompute_refusal(ml_op(in_func(args, body))) == refusal


def test_recompute_refusal_of_loops_and_side_effects():
    module = Parser(
        make_context(),
        """
        func.func private @draw() -> tensor<4xf32>
        func.func @f(%n: index) {
          %r = func.call @draw() : () -> tensor<4xf32>
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          scf.for %i = %c0 to %n step %c1 { scf.yield }
          func.return
        }""",
    ).parse_module()
    refusals = {op.name: cost_model.recompute_refusal(op) for op in module.walk()}
    assert refusals["func.call"] == "'func.call' has side effects"
    assert refusals["arith.constant"] is None
    assert refusals["scf.for"] == "'scf.for' holds regions (a loop or a branch runs once)"


def test_residual_bytes():
    op = ml_op(
        in_func("%x: tensor<?x3xf16>", "%y = ml.neg %x : (tensor<?x3xf16>) -> tensor<?x3xf16>")
    )
    assert cost_model.residual_bytes(op.results[0]) == 2 * 3 * cost_model.NOMINAL_DYNAMIC_DIM
    module = Parser(make_context(), "func.func @f(%i: index) { func.return }").parse_module()
    function = next(iter(module.ops))
    assert cost_model.residual_bytes(function.regions[0].block.args[0]) is None

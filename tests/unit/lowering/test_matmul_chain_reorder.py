"""
Tests for `matmul-chain-reorder`: the DP helper against brute force, and the pass
on random chains, checked for FLOPs (the optimum) and for numerics (numpy).
"""

from collections.abc import Iterator, Sequence
from functools import cache

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f64
from xdsl.ir import Block, Region, SSAValue

from mlc.cost_model import flops
from mlc.dialects.ml import MatmulOp
from mlc.lowering.matmul_chain_reorder import (
    MatmulChainReorderPass,
    Tree,
    optimal_order,
    tree_cost,
)


def all_trees(first: int, last: int) -> Iterator[Tree]:
    """Every association of leaves first..last (Catalan many)."""
    if first == last:
        yield first
        return
    for k in range(first, last):
        for left in all_trees(first, k):
            for right in all_trees(k + 1, last):
                yield (left, right)


def brute_force_optimum(dims: Sequence[int]) -> int:
    return min(tree_cost(dims, t) for t in all_trees(0, len(dims) - 2))


def test_optimal_order_textbook_example():
    # CLRS-style chain 40x20, 20x30, 30x10, 10x30: 26000 multiply-adds.
    cost, tree = optimal_order([40, 20, 30, 10, 30])
    assert cost == 2 * 26000
    assert tree == ((0, (1, 2)), 3)


def test_optimal_order_two_matrices():
    assert optimal_order([2, 3, 4]) == (48, (0, 1))


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[int], Tree]:
    """Dims of a random chain of 2 to 7 matrices and a random association of it."""
    n = draw(st.integers(2, 7))
    dims = draw(st.lists(st.integers(1, 64), min_size=n + 1, max_size=n + 1))

    def tree(first: int, last: int) -> Tree:
        if first == last:
            return first
        k = draw(st.integers(first, last - 1))
        return (tree(first, k), tree(k + 1, last))

    return dims, tree(0, n - 1)


@given(chains())
@settings(max_examples=60, deadline=None)
def test_optimal_order_matches_brute_force(chain: tuple[list[int], Tree]):
    dims, _ = chain
    cost, tree = optimal_order(dims)
    assert cost == brute_force_optimum(dims)
    assert tree_cost(dims, tree) == cost


def build_module(dims: Sequence[int], tree: Tree) -> ModuleOp:
    """`func.func @chain` multiplying its arguments (matrices dims[i] x dims[i+1]) by `tree`."""
    arg_types = [TensorType(f64, [dims[i], dims[i + 1]]) for i in range(len(dims) - 1)]
    block = Block(arg_types=arg_types)

    def build(node: Tree) -> SSAValue:
        if isinstance(node, int):
            return block.args[node]
        op = MatmulOp(build(node[0]), build(node[1]))
        block.add_op(op)
        return op.result

    result = build(tree)
    block.add_op(func.ReturnOp(result))
    function = func.FuncOp("chain", (arg_types, [result.type]), Region(block))
    return ModuleOp([function])


def evaluate(module: ModuleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Run the chain function with numpy, following the IR."""
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    values: dict[SSAValue, np.ndarray] = dict(zip(function.body.block.args, inputs, strict=True))
    for op in function.body.block.ops:
        if isinstance(op, MatmulOp):
            values[op.result] = values[op.a] @ values[op.b]
        elif isinstance(op, func.ReturnOp):
            return values[op.arguments[0]]
    raise AssertionError("no func.return")


def total_flops(module: ModuleOp) -> int:
    costs = [flops(op) for op in module.walk() if isinstance(op, MatmulOp)]
    assert all(c is not None for c in costs)
    return sum(c for c in costs if c is not None)


@cache
def context() -> Context:
    from mlc.registry import make_context

    return make_context()


@given(chains(), st.integers(0, 2**32 - 1))
@settings(max_examples=150, deadline=None)
def test_pass_reaches_the_optimum_and_keeps_the_value(chain: tuple[list[int], Tree], seed: int):
    dims, tree = chain
    module = build_module(dims, tree)
    original = module.clone()
    MatmulChainReorderPass().apply(context(), module)
    module.verify()

    assert total_flops(module) == brute_force_optimum(dims)
    assert total_flops(module) <= total_flops(original)

    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal((dims[i], dims[i + 1])) for i in range(len(dims) - 1)]
    expected = evaluate(original, inputs)
    # Entries near zero come out of cancellation, so they get an absolute tolerance
    # on the scale of the result; the others are compared at rtol 1e-9.
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(evaluate(module, inputs), expected, rtol=1e-9, atol=1e-9 * scale)


@given(chains())
@settings(max_examples=40, deadline=None)
def test_pass_is_idempotent(chain: tuple[list[int], Tree]):
    module = build_module(*chain)
    MatmulChainReorderPass().apply(context(), module)
    once = str(module)
    MatmulChainReorderPass().apply(context(), module)
    assert str(module) == once

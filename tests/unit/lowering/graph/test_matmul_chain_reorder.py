"""
Tests for `matmul-chain-reorder`: the DP helper against brute force, and the pass
on random chains, checked for FLOPs (the optimum) and for numerics (numpy).
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f64
from xdsl.ir import Block, Operation, Region, SSAValue

from mlc.cost_model import flops
from mlc.dialects.ml import MatmulOp, MulOp, TransposeOp
from mlc.lowering.graph.matmul_chain_order import leaf_span
from mlc.lowering.graph.matmul_chain_reorder import (
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


# ---------------------------------------------------------------------------
# Chains through transposes and scalar multiplications
# ---------------------------------------------------------------------------


def all_spans(tree: Tree) -> Iterator[tuple[int, int]]:
    yield leaf_span(tree)
    if not isinstance(tree, int):
        yield from all_spans(tree[0])
        yield from all_spans(tree[1])


def brute_force_with_scalar(dims: Sequence[int]) -> int:
    """Every association, the scalar on each of its nodes: the cheapest total."""
    return min(
        tree_cost(dims, t) + min(dims[i] * dims[j + 1] for i, j in all_spans(t))
        for t in all_trees(0, len(dims) - 2)
    )


@dataclass
class Expression:
    """A random program for a chain: which leaves are passed transposed, and how
    each node is written (directly, or as the transpose of its transpose)."""

    dims: list[int]
    tree: Tree
    arg_transposed: list[bool]
    wrapped: set[tuple[int, int]]  # spans written as transpose(...)
    scaled: list[tuple[int, int]]  # spans multiplied by a scalar argument, one each
    scalar_shapes: list[tuple[int, ...]]


@st.composite
def expressions(draw: st.DrawFn) -> Expression:
    dims, tree = draw(chains())
    n = len(dims) - 1
    spans = list(all_spans(tree))
    arg_transposed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    wrapped = {s for s in spans if draw(st.booleans())}
    scaled = draw(st.lists(st.sampled_from(spans), max_size=2))
    shapes = [draw(st.sampled_from([(), (1, 1)])) for _ in scaled]
    return Expression(dims, tree, arg_transposed, wrapped, scaled, shapes)


class ExpressionBuilder:
    """Writes an `Expression` as ops in one block."""

    def __init__(self, e: Expression, block: Block, scalars: Sequence[SSAValue]):
        self.e, self.block, self.scalars = e, block, scalars

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def transpose(self, value: SSAValue) -> SSAValue:
        return self.emit(TransposeOp(value, (1, 0)))

    def leaf(self, index: int, want_t: bool) -> SSAValue:
        value = self.block.args[index]
        return self.transpose(value) if self.e.arg_transposed[index] != want_t else value

    def build(self, node: Tree, want_t: bool) -> SSAValue:
        """The node's matrix, or its transpose if `want_t`."""
        span = leaf_span(node)
        if isinstance(node, int):
            value = self.leaf(node, want_t)
        elif span in self.e.wrapped:
            value = self.transpose(self.product(node, not want_t))
        else:
            value = self.product(node, want_t)
        for scalar, scaled in zip(self.scalars, self.e.scaled, strict=True):
            if scaled == span:
                value = self.emit(MulOp(scalar, value))
        return value

    def product(self, node: tuple[Tree, Tree], want_t: bool) -> SSAValue:
        if want_t:  # (L R)^T = R^T L^T
            return self.emit(MatmulOp(self.build(node[1], True), self.build(node[0], True)))
        return self.emit(MatmulOp(self.build(node[0], False), self.build(node[1], False)))


def build_expression(e: Expression) -> ModuleOp:
    """`func.func @chain`: the chain product times every scalar, written as `e` says."""
    mats = [(e.dims[i], e.dims[i + 1]) for i in range(len(e.dims) - 1)]
    arg_types = [
        TensorType(f64, m[::-1] if t else m) for m, t in zip(mats, e.arg_transposed, strict=True)
    ]
    arg_types += [TensorType(f64, s) for s in e.scalar_shapes]
    block = Block(arg_types=arg_types)
    result = ExpressionBuilder(e, block, block.args[len(mats) :]).build(e.tree, False)
    block.add_op(func.ReturnOp(result))
    function = func.FuncOp("chain", (arg_types, [result.type]), Region(block))
    return ModuleOp([function])


def run_numpy(module: ModuleOp, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """Run a chain function of matmul, transpose and mul with numpy, following the IR."""
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    values: dict[SSAValue, np.ndarray] = dict(zip(function.body.block.args, inputs, strict=True))
    for op in function.body.block.ops:
        match op:
            case MatmulOp():
                values[op.result] = values[op.a] @ values[op.b]
            case TransposeOp():
                values[op.result] = np.transpose(values[op.x], op.perm.get_values())
            case MulOp():
                values[op.result] = values[op.lhs] * values[op.rhs]
            case func.ReturnOp():
                return values[op.arguments[0]]
            case _:
                raise AssertionError(f"unexpected {op.name}")
    raise AssertionError("no func.return")


def all_flops(module: ModuleOp) -> int:
    costs = [flops(op) for op in module.walk() if isinstance(op, MatmulOp | MulOp)]
    assert all(c is not None for c in costs)
    return sum(c for c in costs if c is not None)


@given(expressions(), st.integers(0, 2**32 - 1))
@settings(max_examples=150, deadline=None)
def test_chains_through_transposes_and_scalars(e: Expression, seed: int):
    module = build_expression(e)
    original = module.clone()
    MatmulChainReorderPass().apply(context(), module)
    module.verify()

    # The products at the optimum, the scalars multiplied together (k - 1 FLOPs on
    # 1-element tensors) and applied once where cheapest.
    if e.scaled:
        optimum = brute_force_with_scalar(e.dims) + len(e.scaled) - 1
    else:
        optimum = brute_force_optimum(e.dims)
    assert all_flops(module) == optimum <= all_flops(original)

    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(a.type.get_shape()) for a in module.body.block.first_op.args]  # pyright: ignore[reportAttributeAccessIssue, reportOptionalMemberAccess, reportUnknownMemberType, reportUnknownArgumentType]
    expected = run_numpy(original, inputs)
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(run_numpy(module, inputs), expected, rtol=1e-9, atol=1e-9 * scale)

    once = str(module)
    MatmulChainReorderPass().apply(context(), module)
    assert str(module) == once

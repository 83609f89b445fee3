"""
The cheapest association of a matrix chain, with a scalar factor placed where cheapest.

Pure helpers of `matmul-chain-reorder`. A chain multiplies matrices of dims
`d0 x d1, d1 x d2, ..., dn-1 x dn`, times a scalar if it has one. Its cost is the
FLOPs of its products plus the elements of the one node (leaf, intermediate or
result) the scalar multiplies. The dims may be symbols (dynamic sizes, each >= 1):
costs are then `Polynomial`s, and the dynamic programme keeps a choice only where
it is provably no worse than every alternative whatever the sizes; otherwise the
order depends on run-time sizes and `Undecided` is raised.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from mlc.cost_model import Dim, Polynomial, elements_cost, matmul_cost, matmul_flops

# An association of leaves 0..n-1: a leaf index, or the product of two subtrees.
Tree = int | tuple["Tree", "Tree"]
Span = tuple[int, int]  # the first and last leaf of a subtree


class Undecided(Exception):
    """No association is the cheapest for every value of the dynamic dims."""


@dataclass(frozen=True)
class Plan:
    """An association, its cost, and the subtree the scalar multiplies (if any)."""

    cost: Polynomial
    tree: Tree
    scalar_at: Span | None = None


def leaf_span(tree: Tree) -> Span:
    if isinstance(tree, int):
        return tree, tree
    return leaf_span(tree[0])[0], leaf_span(tree[1])[1]


def tree_cost(dims: Sequence[int], tree: Tree) -> int:
    """The FLOPs of evaluating `tree` over static matrices `dims[i] x dims[i+1]`."""
    if isinstance(tree, int):
        return 0
    (first, mid), last = leaf_span(tree[0]), leaf_span(tree[1])[1]
    product = matmul_flops(dims[first], dims[mid + 1], dims[last + 1])
    return tree_cost(dims, tree[0]) + tree_cost(dims, tree[1]) + product


def _cheapest(options: Sequence[Plan]) -> Plan:
    """The first option no worse than all the others for every size; ties go left."""
    for option in options:
        if all(option.cost.provably_le(other.cost) for other in options):
            return option
    raise Undecided


def plan_chain(dims: Sequence[Dim], scalar: bool = False) -> Plan:
    """
    The cheapest plan for `len(dims) - 1` matrices, the scalar placed if `scalar`.

    The O(n^3) matrix-chain DP, with a second state per subchain: whether the
    scalar is applied inside it. Ties go to the leftmost split and to placing the
    scalar deeper, so the answer is deterministic.
    """
    d = tuple(dims)

    @cache
    def best(i: int, j: int, with_scalar: bool) -> Plan:
        size = elements_cost(d[i], d[j + 1])
        if i == j:
            return Plan(size, i, (i, i)) if with_scalar else Plan(Polynomial(), i)
        options: list[Plan] = []
        sides = [(True, False), (False, True)] if with_scalar else [(False, False)]
        for k in range(i, j):
            product = matmul_cost(d[i], d[k + 1], d[j + 1])
            for left_scalar, right_scalar in sides:
                left, right = best(i, k, left_scalar), best(k + 1, j, right_scalar)
                cost = left.cost + right.cost + product
                options.append(
                    Plan(cost, (left.tree, right.tree), left.scalar_at or right.scalar_at)
                )
        if with_scalar:
            plain = best(i, j, False)
            options.append(Plan(plain.cost + size, plain.tree, (i, j)))
        return _cheapest(options)

    return best(0, len(d) - 2, scalar)


def optimal_order(dims: Sequence[int]) -> tuple[int, Tree]:
    """The minimal FLOPs and an association reaching them, for static dims."""
    plan = plan_chain(dims)
    cost = plan.cost.constant()
    assert cost is not None
    return cost, plan.tree

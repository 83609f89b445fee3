"""The chain planner: scalar placement, and symbolic dims decided or not."""

import pytest

from mlc.cost_model import Polynomial
from mlc.lowering.graph.matmul_chain_order import Undecided, plan_chain


def test_scalar_goes_to_the_smallest_node():
    # e (1000x1) @ u (1x1000) @ p (1000x1): the scalar scales the 1x1 u @ p.
    plan = plan_chain([1000, 1, 1000, 1], scalar=True)
    assert plan.tree == (0, (1, 2))
    assert plan.scalar_at == (1, 2)
    assert plan.cost.constant() == 2000 + 2000 + 1


def test_a_symbol_on_both_sides_decides():
    plan = plan_chain(["n", 1, "n", 1])
    assert plan.tree == (0, (1, 2))
    assert plan.cost == Polynomial.product(4, "n")


def test_independent_symbols_leave_the_order_open():
    with pytest.raises(Undecided):
        plan_chain(["a", "b", "c", "d"])


def test_static_dims_match_the_textbook():
    plan = plan_chain([40, 20, 30, 10, 30])
    assert plan.cost.constant() == 2 * 26000
    assert plan.tree == ((0, (1, 2)), 3)

"""Tests of `mlc.shapes.refinement`: `compatible`, `refine`, `join` and `DimUnifier`."""

import pytest

from mlc import shapes
from tests.unit.shapes.shape_cases import D, raises_shape_error


@pytest.mark.parametrize(
    ("declared", "inferred", "ok"),
    [
        ((), (), True),
        ((2, 3), (2, 3), True),
        ((2, 3), (2, D), True),  # a refinement of the inferred type
        ((2, D), (2, 3), True),  # a declared type more dynamic than inferred
        ((D, D), (2, 3), True),
        ((2, 4), (2, 3), False),  # a static contradiction
        ((2, 3), (2, 3, 1), False),  # ranks differ
        ((6,), (2, 3), False),
    ],
)
def test_compatible(declared: tuple[int, ...], inferred: tuple[int, ...], ok: bool):
    assert shapes.compatible(declared, inferred) is ok


def test_refine_keeps_static_and_fills_dynamic():
    assert shapes.refine((D, 4, D), (3, D, D), (7, D, 5)) == (3, 4, 5)


def test_join_keeps_agreeing_dims():
    assert shapes.join((2, 3, D), (2, 4, D)) == (2, D, D)
    with raises_shape_error("ranks 1 and 2"):
        shapes.join((1,), (1, 2))


def test_dim_unifier_merges_and_refuses_conflicts():
    u = shapes.DimUnifier[str]()
    u.add("a")
    u.add("b", 3)
    u.add("c", 5)
    assert u.unify("a", "b")
    assert u.size("a") == 3
    assert not u.unify("a", "c")
    assert u.size("c") == 5

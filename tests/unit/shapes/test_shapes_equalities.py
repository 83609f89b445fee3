"""Tests of `mlc.shapes.equalities`: the dims each shape rule makes equal."""

from hypothesis import given
from hypothesis import strategies as st

from mlc import shapes
from mlc.shapes import ShapeError
from tests.unit.shapes.shape_cases import D, hypothesis_settings, shape_st


@given(st.lists(shape_st, min_size=1, max_size=3))
def test_broadcast_equalities_name_equal_dims(operands: list[tuple[int, ...]]):
    try:
        result = shapes.broadcast(*operands)
    except ShapeError:
        return
    for (p, d), (_, r) in shapes.broadcast_equalities(operands, len(result)):
        assert operands[p][d] == result[r]


def test_matmul_and_gather_equalities():
    assert ((0, 1), (1, 0)) in shapes.matmul_equalities((4, 8), (8, 2))
    eq = shapes.gather_equalities(3, 2, 1)
    assert ((1, 1), (shapes.RESULT, 2)) in eq
    assert ((0, 2), (shapes.RESULT, 3)) in eq


@hypothesis_settings
@given(
    st.lists(st.lists(st.sampled_from([1, 2, 3]), max_size=3), min_size=1, max_size=3),
    st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=3, max_size=3),
)
def test_runtime_broadcast_equalities_hold_for_every_run_time_size(concrete, hidden):
    # Hide some sizes behind `?`: whatever the run-time sizes, the equalities must hold.
    try:
        result = shapes.broadcast(*concrete)
    except ShapeError:
        return
    declared = [
        tuple(D if hide else size for size, hide in zip(shape, hidden[i], strict=False))
        for i, shape in enumerate(concrete)
    ]
    for (p, d), (_, r) in shapes.broadcast_equalities(
        declared, len(result), runtime_broadcast=True
    ):
        assert concrete[p][d] == result[r]


def test_runtime_broadcast_equalities_keep_what_is_certain():
    eq = shapes.broadcast_equalities([(D, 4), (1, 4)], 2, runtime_broadcast=True)
    assert ((0, 0), (shapes.RESULT, 0)) in eq  # the only size in its dim
    eq = shapes.broadcast_equalities([(D, 4), (3, 4)], 2, runtime_broadcast=True)
    assert ((0, 0), (shapes.RESULT, 0)) not in eq  # may be 1
    assert ((1, 0), (shapes.RESULT, 0)) in eq  # a static 3 is the result's


def test_broadcast_to_equalities():
    # Without a shape operand a dynamic result dim follows the operand's.
    assert shapes.broadcast_to_equalities((D, 1), (2, D, 5), False) == [((0, 0), (-1, 1))]
    assert shapes.broadcast_to_equalities((D, 1), (2, D, 5), True) == []
    assert shapes.broadcast_to_equalities((D, 5), (2, 3, 5), False) == [((0, 1), (-1, 2))]

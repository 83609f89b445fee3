"""The SIMT contraction kernel's accumulators as vectors (`register_tile`): which
operand the vectors run along, and that each accumulator is one lane of one vector."""

from types import SimpleNamespace

import pytest

from mlc.lowering.gpu.contraction.register_tile import RegisterTile


def _stagings(a_along_k: bool, b_along_k: bool):
    return SimpleNamespace(tile_along_k=a_along_k), SimpleNamespace(tile_along_k=b_along_k)


@pytest.mark.parametrize(
    ("a_along_k", "b_along_k", "along"),
    [(False, False, "cols"), (True, False, "cols"), (False, True, "rows"), (True, True, None)],
)
def test_vectors_run_along_a_tile_of_rows_or_columns(a_along_k, b_along_k, along):
    tile = RegisterTile.of(8, 4, _stagings(a_along_k, b_along_k))  # pyright: ignore[reportArgumentType]
    assert tile.along == along


@pytest.mark.parametrize(("rows", "cols"), [(4, 4), (8, 4), (4, 8), (8, 8)])
@pytest.mark.parametrize("along", ["cols", "rows", None])
def test_each_accumulator_is_one_lane(rows, cols, along):
    slots = RegisterTile(rows, cols, along).slots
    assert sorted(s for vector in slots for s in vector) == list(range(rows * cols))
    for vector in slots:
        places = [divmod(slot, cols) for slot in vector]  # (row, column)
        if along == "cols":  # 4 consecutive columns of one row
            assert [r for r, _ in places] == [places[0][0]] * 4
            assert [c for _, c in places] == list(range(places[0][1], places[0][1] + 4))
        elif along == "rows":  # 4 consecutive rows of one column
            assert [c for _, c in places] == [places[0][1]] * 4
            assert [r for r, _ in places] == list(range(places[0][0], places[0][0] + 4))
        else:
            assert len(vector) == 1


def test_columns_not_a_multiple_of_four_fall_back():
    assert RegisterTile.of(8, 2, _stagings(True, False)).along is None  # pyright: ignore[reportArgumentType]

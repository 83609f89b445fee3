"""atomic_loops: a scatter's update loops become `red` atomics in PTX that ptxas takes."""

import pytest

import mlc
from mlc.backend.ptx import to_ptx
from tests.gpu.targets import assemble


def scatter(name: str, op: str, attrs: str, data: str, indices: str, updates: str) -> str:
    types = f"tensor<{data}>, tensor<{indices}>, tensor<{updates}>"
    return (
        f"func.func @{name}(%d: tensor<{data}>, %i: tensor<{indices}>, %u: tensor<{updates}>)"
        f" -> tensor<{data}> {{\n"
        f'  %r = "ml.{op}"(%d, %i, %u) {{{attrs}}} : ({types}) -> tensor<{data}>\n'
        f"  func.return %r : tensor<{data}>\n}}\n"
    )


PROGRAM = (
    scatter("nd_add", "scatter_nd", 'reduction = "add"', "6x4xf32", "?x1xi64", "?x4xf32")
    + scatter(
        "elements_max",
        "scatter_elements",
        'axis = 1 : i64, reduction = "max"',
        "5x?xf64",
        "5x?xi32",
        "5x?xf64",
    )
    + scatter(
        "elements_none",
        "scatter_elements",
        'axis = 0 : i64, reduction = "none"',
        "5x7xf32",
        "3x7xi64",
        "3x7xf32",
    )
)


@pytest.fixture(scope="module")
def lowered():
    return mlc.compile(PROGRAM, target="gpu", emit="nvvm")


def test_the_scatters_take_atomics(lowered):
    ptx = to_ptx(lowered, "sm_80")
    assert "red.add.f32" in ptx  # nd_add
    assert "@p red.max.s64" in ptx and "@!p red.min.u64" in ptx  # elements_max on f64 bits
    assert ptx.count("red.max.s64") == 2  # and elements_none's winners


@pytest.mark.parametrize("sm", ["sm_80", "sm_90"])
def test_the_atomics_assemble(lowered, sm):
    assemble(to_ptx(lowered, sm), sm)

"""
The online softmax statistics: `step` and `merge` compiled for the CPU as scalar
functions, against numpy's max and sum of `exp(x - max)` in float64, on fresh random
rows split at random points, and the edge cases (empty parts, +inf, NaN); `is_step`
recognises `step` and nothing that differs from it by one op.
"""

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, FunctionType, IndexType, IntegerAttr, ModuleOp, f32
from xdsl.ir import Block, Region, SSAValue

import mlc
from mlc.lowering.support import online_softmax

INF = np.float32(np.inf)


def scalar_function(arity: int, body: Callable[..., list[SSAValue]]):
    """`body` over `arity` f32 scalars, compiled for the CPU."""
    block = Block(arg_types=[f32] * arity)
    with ImplicitBuilder(block):
        func.ReturnOp(*body(*block.args))
    function = func.FuncOp(
        "main", FunctionType.from_lists([f32] * arity, [f32, f32]), Region(block)
    )
    return mlc.compile(ModuleOp([function]))


@pytest.fixture(scope="module")
def step():
    exe = scalar_function(3, online_softmax.step)
    return lambda x, m, s: tuple(np.float32(v) for v in exe(*map(np.float32, (x, m, s))))


@pytest.fixture(scope="module")
def merge():
    exe = scalar_function(4, online_softmax.merge)
    return lambda a, b: tuple(np.float32(v) for v in exe(*map(np.float32, (*a, *b))))


def statistics(row: np.ndarray) -> tuple[float, float]:
    """numpy's (max, sum of exp(x - max)) in float64; (-inf, 0) for an empty row."""
    if row.size == 0:
        return -np.inf, 0.0
    wide = row.astype(np.float64)
    top = wide.max()
    with np.errstate(invalid="ignore"):
        return top, float(np.exp(wide - top).sum())


def fold(step, row: np.ndarray) -> tuple[np.float32, np.float32]:
    m, s = np.float32(-np.inf), np.float32(0)
    for x in row:
        m, s = step(x, m, s)
    return m, s


def test_step_folds_a_row_to_its_statistics(step):
    rng = np.random.default_rng()
    row = (rng.standard_normal(23) * 8).astype(np.float32)
    m, s = fold(step, row)
    want_m, want_s = statistics(row)
    assert m == want_m
    np.testing.assert_allclose(s, want_s, rtol=1e-5)


@pytest.mark.parametrize("size", [2, 7, 40])
def test_merged_parts_give_the_row(merge, size):
    rng = np.random.default_rng()
    row = (rng.standard_normal(size) * 8).astype(np.float32)
    for cut in {0, 1, int(rng.integers(0, size + 1)), size}:
        parts = [statistics(row[:cut]), statistics(row[cut:])]
        want_m, want_s = statistics(row)
        for a, b in (parts, parts[::-1]):
            m, s = merge(a, b)
            assert m == np.float32(want_m)
            np.testing.assert_allclose(s, want_s, rtol=1e-6)


def test_empty_parts_add_nothing(merge):
    nothing = (-INF, np.float32(0))
    assert merge(nothing, nothing) == nothing
    assert merge(nothing, (np.float32(2), np.float32(3))) == (2, 3)
    assert merge((np.float32(2), np.float32(3)), nothing) == (2, 3)


def test_infinity_and_nan_poison_the_row(step, merge):
    # numpy: exp(inf - inf) is NaN, so a row holding +inf has a NaN sum
    m, s = fold(step, np.array([1, INF, 2], np.float32))
    assert m == INF and np.isnan(s)
    finite = (np.float32(1), np.float32(2))
    for a, b in ((m, s), finite), (finite, (m, s)):
        merged = merge(a, b)
        assert merged[0] == INF and np.isnan(merged[1])
    m, _ = fold(step, np.array([1, np.nan, 2], np.float32))
    assert np.isnan(m)
    assert np.isnan(merge((np.float32(np.nan), np.float32(1)), finite)[0])


def carried(body: Callable[..., list[SSAValue]]) -> scf.ForOp:
    """A loop carrying (max, sum) through `body(x, m, s)`."""
    outer = Block(arg_types=[f32])
    with ImplicitBuilder(outer):
        bounds = [arith.ConstantOp(IntegerAttr.from_index_int_value(v)).result for v in (0, 8, 1)]
        low = arith.ConstantOp(FloatAttr(-np.inf, f32)).result
        zero = arith.ConstantOp(FloatAttr(0.0, f32)).result
        loop_body = Block(arg_types=[IndexType(), f32, f32])
        with ImplicitBuilder(loop_body):
            scf.YieldOp(*body(outer.args[0], *loop_body.args[1:]))
        loop = scf.ForOp(*bounds, [low, zero], loop_body)
    return loop


def carries_step(loop: scf.ForOp) -> bool:
    yielded = loop.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    return online_softmax.is_step(*loop.body.block.args[1:], *yielded.operands)


def test_is_step_recognises_the_step_only():
    assert carries_step(carried(online_softmax.step))
    assert not carries_step(carried(lambda x, m, s: online_softmax.step(x, s, m)))
    assert not carries_step(carried(lambda x, m, s: online_softmax.merge(m, s, x, x)))
    assert not carries_step(
        carried(lambda x, m, s: [arith.MaximumfOp(m, x).result, arith.AddfOp(s, x).result])
    )

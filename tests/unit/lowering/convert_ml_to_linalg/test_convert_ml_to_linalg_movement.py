"""
Tests for the movement and conv/pooling parts of `convert-ml-to-linalg`.

The index formulas the lowerings emit as IR (slice clamping, pooling window counts,
window output sizes) are one Python function each over `IndexCalc`; run on ints they
are plain Python, checked here against numpy and `mlc.shapes` with hypothesis. Then
each op the two modules own goes through the pass, static and dynamic, and must come
out as level-2 IR only (docs/design/lowering.md): no `ml` op left, nothing off the list.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation

from mlc import shapes
from mlc.diagnostics import verify_module
from mlc.ir import parse_module
from mlc.lowering.convert_ml_to_linalg import ConvertMLToLinalgPass
from mlc.lowering.convert_ml_to_linalg.conv import window_count, window_output_size
from mlc.lowering.convert_ml_to_linalg.movement import slice_bounds
from mlc.lowering.support.index_calc import IndexCalc
from mlc.registry import make_context

hypothesis_settings = settings(database=None, max_examples=300, deadline=None)

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# ---------------------------------------------------------------------------
# Index formulas on ints
# ---------------------------------------------------------------------------

bound_st = st.one_of(st.integers(-12, 12), st.sampled_from([INT64_MIN, INT64_MAX]))
step_st = st.one_of(st.integers(-5, 5).filter(bool), st.sampled_from([INT64_MIN + 1, INT64_MAX]))


@hypothesis_settings
@given(st.integers(0, 10), bound_st, bound_st, step_st)
def test_slice_bounds_match_numpy(dim: int, start: int, end: int, step: int):
    expected = np.arange(dim)[start:end:step]
    first, length = slice_bounds(IndexCalc(), dim, start, end, step)
    assert isinstance(first, int) and isinstance(length, int)
    assert length == len(expected) == shapes.slice_dim(dim, start, end, step)
    np.testing.assert_array_equal(first + step * np.arange(length), expected)


@pytest.mark.parametrize(
    ("dim", "start", "end", "step", "first", "length"),
    [
        (4, INT64_MIN, INT64_MAX, 1, 0, 4),  # x[:]
        (4, -1, INT64_MIN, -1, 3, 4),  # x[::-1]
        (6, -10, -1, 3, 0, 2),  # start clamps to 0, end -1 is 5
        (5, 7, 0, -2, 4, 2),  # a start past the end clamps to dim - 1
        (3, 2, 2, 1, 2, 0),  # empty
        (0, -1, INT64_MIN, -1, -1, 0),  # an empty dim, backwards
    ],
)
def test_slice_bounds_cases(dim: int, start: int, end: int, step: int, first: int, length: int):
    assert slice_bounds(IndexCalc(), dim, start, end, step) == (first, length)


@st.composite
def pool_dims(draw: st.DrawFn) -> tuple[int, int, int, int, int]:
    """(size, kernel, stride, pad_lo, pad_hi) that `shapes.pool2d` accepts."""
    kernel = draw(st.integers(1, 5))
    pad_lo, pad_hi = draw(st.integers(0, kernel - 1)), draw(st.integers(0, kernel - 1))
    size = draw(st.integers(max(1, kernel - pad_lo - pad_hi), 12))
    return size, kernel, draw(st.integers(1, 4)), pad_lo, pad_hi


@hypothesis_settings
@given(pool_dims())
def test_window_count_matches_numpy(dims: tuple[int, int, int, int, int]):
    size, kernel, stride, pad_lo, pad_hi = dims
    out = shapes.window_output(size, kernel, stride, 1, pad_lo, pad_hi)
    # The number of real elements each window covers: sum a zero-padded row of ones.
    ones = np.pad(np.ones(size, dtype=int), (pad_lo, pad_hi))
    expected = [ones[o * stride : o * stride + kernel].sum() for o in range(out)]
    counts = [window_count(IndexCalc(), o, size, kernel, stride, pad_lo) for o in range(out)]
    assert counts == expected
    assert min(counts) >= 1  # pads smaller than the kernel: no division by zero


@hypothesis_settings
@given(
    st.integers(1, 20), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3)
)
def test_window_output_size_matches_shapes(
    size: int, kernel: int, stride: int, dilation: int, pad: int
):
    assume(size + 2 * pad >= dilation * (kernel - 1) + 1)  # else no window fits
    expected = shapes.window_output(size, kernel, stride, dilation, pad, pad)
    calc = IndexCalc()
    assert window_output_size(calc, size, kernel, stride, dilation, (pad, pad)) == expected


def test_index_calc_emits_ops_only_for_ssa_values():
    block = Block(arg_types=[IndexType()])
    emitted: list[Operation] = []

    def insert(op: Operation) -> Operation:
        emitted.append(op)
        return op

    calc = IndexCalc(insert)
    assert calc.add(calc.mul(3, 4), 1) == 13
    assert not emitted
    dim = block.args[0]
    assert calc.add(dim, 0) is dim and calc.mul(1, dim) is dim
    first, _ = slice_bounds(calc, dim, 1, INT64_MAX, 1)
    assert isinstance(first.owner, arith.MinSIOp)  # pyright: ignore[reportAttributeAccessIssue]
    assert {op.name for op in emitted} >= {"arith.constant", "arith.minsi"}


# ---------------------------------------------------------------------------
# Every op lowers to level-2 IR
# ---------------------------------------------------------------------------

LEVEL_2_OPS = {
    "builtin.module",
    "func.func",
    "func.return",
    "linalg.generic",
    "linalg.yield",
    "linalg.index",
    "tensor.empty",
    "tensor.dim",
    "tensor.extract",
    "tensor.collapse_shape",
    "tensor.expand_shape",
    "tensor.extract_slice",
    "tensor.insert_slice",
    "cf.assert",  # run-time broadcast checks
}

CASES = {
    "transpose": (
        "(%x: tensor<2x?x4xf32>) -> tensor<4x2x?xf32>",
        "ml.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x?x4xf32>) -> tensor<4x2x?xf32>",
    ),
    "broadcast_to": (
        "(%x: tensor<?x1xf32>, %s: tensor<3xi64>) -> tensor<?x?x5xf32>",
        "ml.broadcast_to %x, %s : (tensor<?x1xf32>, tensor<3xi64>) -> tensor<?x?x5xf32>",
    ),
    "reshape": (
        "(%x: tensor<2x?xf32>, %s: tensor<3xi64>) -> tensor<?x2x?xf32>",
        "ml.reshape %x, %s : (tensor<2x?xf32>, tensor<3xi64>) -> tensor<?x2x?xf32>",
    ),
    "reshape_static": (
        "(%x: tensor<2x3x4xi8>) -> tensor<4x6xi8>",
        "ml.reshape %x : (tensor<2x3x4xi8>) -> tensor<4x6xi8>",
    ),
    "concat": (
        "(%x: tensor<?x3xf32>) -> tensor<?x3xf32>",
        "ml.concat %x, %x {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>",
    ),
    "slice": (
        "(%x: tensor<?x6xf32>) -> tensor<?x3xf32>",
        "ml.slice %x {starts = array<i64: 1, 0>, ends = array<i64: -1, 6>,"
        " steps = array<i64: 2, 2>} : (tensor<?x6xf32>) -> tensor<?x3xf32>",
    ),
    "slice_reversed": (
        "(%x: tensor<?x6xf32>) -> tensor<?x6xf32>",
        "ml.slice %x {starts = array<i64: -1, 0>, ends = array<i64: -9223372036854775808, 6>,"
        " steps = array<i64: -1, 1>} : (tensor<?x6xf32>) -> tensor<?x6xf32>",
    ),
    "gather": (
        "(%d: tensor<?x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32>",
        "ml.gather %d, %i {axis = 0 : i64} : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>",
    ),
    "conv2d": (
        "(%x: tensor<?x4x?x?xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>)"
        " -> tensor<?x6x?x?xf32>",
        "ml.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64}"
        " : (tensor<?x4x?x?xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<?x6x?x?xf32>",
    ),
    "max_pool2d": (
        "(%x: tensor<?x3x?x?xf16>) -> tensor<?x3x?x?xf16>",
        "ml.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,"
        " pads = array<i64: 1, 1, 1, 1>} : (tensor<?x3x?x?xf16>) -> tensor<?x3x?x?xf16>",
    ),
    "avg_pool2d": (
        "(%x: tensor<1x3x7x7xf64>) -> tensor<1x3x4x4xf64>",
        "ml.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,"
        " pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x7x7xf64>) -> tensor<1x3x4x4xf64>",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_lowers_to_level_2(case: str):
    signature, op = CASES[case]
    result_type = signature.rsplit("-> ", 1)[1]
    source = f"func.func @f{signature} {{\n  %0 = {op}\n  func.return %0 : {result_type}\n}}"
    ctx = make_context()
    module = parse_module(source, ctx=ctx)
    ConvertMLToLinalgPass().apply(ctx, module)
    assert verify_module(module) == []
    names = {o.name for o in module.walk()}
    assert not {n for n in names if n.startswith("ml.")}
    assert names - LEVEL_2_OPS <= {n for n in names if n.startswith("arith.")}

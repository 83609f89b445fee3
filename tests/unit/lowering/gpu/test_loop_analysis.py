"""How a generic on memrefs maps onto GPU loops: its dims, register tiles and sizes."""

# ruff: noqa: E501  (IR lines as they are written in .mlir files)

import math

import pytest
from xdsl.dialects.linalg.ops import GenericOp

from mlc.ir import parse_module
from mlc.lowering.gpu.loop_analysis import (
    NARROW_COLUMNS,
    contraction_dims,
    narrow_columns,
    outputs_independent_of,
    split_iterators,
    static_size,
)


def matmul(m: str, k: int, n: int) -> GenericOp:
    """The generic of `a[m, k] @ b[k, n]` (loops i, k, j); `m` may be `?`."""
    source = f"""
    func.func @f(%a: memref<{m}x{k}xf32>, %b: memref<{k}x{n}xf32>, %c: memref<{m}x{n}xf32>) {{
      linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]}} ins(%a, %b : memref<{m}x{k}xf32>, memref<{k}x{n}xf32>) outs(%c : memref<{m}x{n}xf32>) {{
      ^bb0(%u: f32, %w: f32, %acc: f32):
        %p = arith.mulf %u, %w : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      }}
      func.return
    }}"""
    (op,) = [op for op in parse_module(source).walk() if isinstance(op, GenericOp)]
    return op


def test_a_matmul_carries_its_outputs_and_tiles_rows_and_columns():
    op = matmul("64", 32, 48)
    parallel, reduction = split_iterators(op)
    assert (parallel, reduction) == ([0, 2], [1])
    assert outputs_independent_of(op, reduction)
    assert not outputs_independent_of(op, parallel)
    assert contraction_dims(op, parallel) == (0, 2)


def test_static_sizes_multiply_and_a_dynamic_one_is_infinite():
    assert static_size(matmul("64", 32, 48), [0, 2]) == 64 * 48
    assert static_size(matmul("?", 32, 48), [2]) == 48
    assert math.isinf(static_size(matmul("?", 32, 48), [0, 2]))


@pytest.mark.parametrize("n, narrow", [(10, 10), (NARROW_COLUMNS, NARROW_COLUMNS), (17, None)])
def test_narrow_columns_are_static_and_few(n, narrow):
    assert narrow_columns(matmul("?", 32, n), 2) == narrow

"""What a warp can share: the element types its shuffles move and each reduction's
identity (mlc/lowering/gpu/loop_mapping/shuffles.py, warp_reduction.identity)."""

import math

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)

from mlc.lowering.gpu.loop_mapping.shuffles import shuffles
from mlc.lowering.gpu.loop_mapping.warp_reduction import identity


@pytest.mark.parametrize(
    ("element", "moves"),
    [
        (f32, True),
        (f64, True),
        (f16, True),
        (bf16, True),
        (i1, True),
        (i8, True),
        (i64, True),
        (IntegerType(128), False),
        (IndexType(), False),
    ],
)
def test_shuffles_move_scalars_of_at_most_64_bits(element, moves):
    assert shuffles(element) is moves


@pytest.mark.parametrize(
    ("kind", "element", "value"),
    [
        (arith.AddiOp, i64, 0),
        (arith.MaxSIOp, i32, -(2**31)),
        (arith.MinSIOp, i64, 2**63 - 1),
        (arith.MaxUIOp, i8, 0),
        (arith.MinUIOp, i32, -1),  # all ones: the largest unsigned value
    ],
)
def test_integer_identities(kind, element, value):
    assert identity(kind, element) == IntegerAttr(value, element)


@pytest.mark.parametrize(
    ("kind", "element", "value"),
    [
        (arith.AddfOp, f64, 0.0),
        (arith.MaximumfOp, f16, -math.inf),
        (arith.MinimumfOp, f64, math.inf),
    ],
)
def test_float_identities(kind, element, value):
    assert identity(kind, element) == FloatAttr(value, element)


@pytest.mark.parametrize(
    ("kind", "element"),
    [
        (arith.AddiOp, i1),  # a bit's sum is not shared: narrower than 8 bits
        (arith.AddfOp, i32),  # a float combiner on integers
        (arith.MaxSIOp, f32),  # an integer combiner on floats
        (arith.MulfOp, f32),  # a product is no reduction the warp shares
        (arith.AddiOp, IntegerType(128)),  # too wide to shuffle
    ],
)
def test_not_shared(kind, element):
    assert identity(kind, element) is None

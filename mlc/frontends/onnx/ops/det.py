"""
Det: the determinant of each square matrix in the last two dims, by an LU factorisation
with partial pivoting, unrolled over the (static) matrix size at import.

Step k picks the row at or below k with the largest `|a[row, k]|` (the first of equals,
as `argmax` does), swaps it with row k (`gather_elements` with a per-matrix permutation;
the sign flips where it moved), multiplies the running product by the pivot and
subtracts the scaled pivot row from the rows below. A zero pivot (a singular matrix)
makes the product 0 and skips the elimination (its rows are divided by 1).
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    is_float,
    reshape_to,
    shape_of,
    shape_tensor,
    sizes,
    static_or_dynamic,
    types_text,
)
from mlc.frontends.onnx.ops.padding import slice_along
from mlc.frontends.onnx.ops.table import converts

LARGEST = 64  # the largest matrix unrolled: each size adds a dozen ops per step


@converts("Det", since=11)
def det(node: Node) -> Sequence[Value]:
    x = node.input(0)
    shape = shape_of(x)
    rank = len(shape)
    if rank < 2 or not is_float(x):
        raise NodeError("Det takes floats of rank 2 or more")
    n = shape[-1]
    if n < 0 or shape[-2] != n:
        raise node.dynamic_dims(
            0, f"Det needs square matrices of a static size, got {types_text(x)}"
        )
    if n > LARGEST:
        raise NodeError(f"Det is unrolled over the matrix size, at most {LARGEST}, got {n}")
    batch = sizes(node, x)[:-2]
    row, column = rank - 2, rank - 1
    lead = [1] * (rank - 2)
    rows = np.arange(n, dtype=np.int64).reshape(*lead, n, 1)

    def const(array: np.ndarray) -> SSAValue:
        return node.constant(array)

    def where(cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return node.emit(ml.SelectOp(cond, a, b))

    a = x
    one, zero = node.scalar(1, x), node.scalar(0, x)
    product: SSAValue = reshape_to(node, one, [1] * rank)
    index_type = TensorType(i64, static_or_dynamic([*batch, n, n]))
    for k in range(n):
        magnitude = node.emit(ml.AbsOp(slice_along(node, a, column, k, k + 1)))
        below = const(rows >= k)
        candidates = where(below, magnitude, node.scalar(-1, x))
        pivot_row = node.emit(ml.ArgMaxOp(candidates, row, keepdims=True))
        at_k, at_pivot = const(rows == k), node.emit(ml.CmpOp("eq", const(rows), pivot_row))
        k_value = const(np.array(k, np.int64))
        perm = where(at_k, pivot_row, where(at_pivot, k_value, const(rows)))
        perm = node.emit(ml.BroadcastToOp(perm, index_type, shape_tensor(node, [*batch, n, n])))
        a = node.emit(ml.GatherElementsOp(a, perm, row))
        moved = node.emit(ml.CmpOp("ne", pivot_row, k_value))
        product = where(moved, node.emit(ml.NegOp(product)), product)
        pivot = slice_along(node, slice_along(node, a, row, k, k + 1), column, k, k + 1)
        product = node.emit(ml.MulOp(product, pivot))
        if k == n - 1:
            break
        safe = where(node.emit(ml.CmpOp("eq", pivot, zero)), one, pivot)
        factor = node.emit(ml.DivOp(slice_along(node, a, column, k, k + 1), safe))
        factor = where(const(rows > k), factor, zero)
        pivot_rows = slice_along(node, a, row, k, k + 1)
        a = node.emit(ml.SubOp(a, node.emit(ml.MulOp(factor, pivot_rows))))
    return [reshape_to(node, product, batch)]

"""
Ops whose output size depends on their input's values: NonZero.

With its input known at import, the importer evaluates the node (`graph.py`). With an
input known only at run time the result has a run-time size: every element's
coordinates are scattered (`ml.scatter_elements`) to the column given by an exclusive
cumsum of the nonzero mask (row-major order, as numpy and onnxruntime list them), the
zeros' to a spare column past the end, and the columns before the count are sliced out
(`tensor.extract_slice` of a size read from the data). Later ops see a `?` dim as they
see any dynamic one, so the compiled code sizes its buffers when it runs.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType, i1, i64
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    cast,
    element_of,
    reshape_to,
    shape_of,
    shape_tensor,
    sizes,
)
from mlc.frontends.onnx.ops.padding import full, slice_at_run_time
from mlc.frontends.onnx.ops.structure import DYN, arange
from mlc.frontends.onnx.ops.suppression import full_like, rank0
from mlc.frontends.onnx.ops.table import converts


@converts("NonZero", since=9)
def non_zero(node: Node) -> Sequence[Value]:
    x = node.input(0)
    if not shape_of(x):  # a scalar lists as a vector of one element
        x = reshape_to(node, x, [1])
    dims = sizes(node, x)
    rank = len(dims)
    calc = SizeCalc(node)
    count = dims[0]
    for d in dims[1:]:
        count = calc.mul(count, d)
    mask = x if element_of(x) == i1 else node.emit(ml.CmpOp("ne", x, node.scalar(0, x)))
    flat = cast(node, reshape_to(node, mask, [count]), i64)
    column = node.emit(ml.CumSumOp(flat, 0, exclusive=True))
    spare = rank0(node, count)
    column = node.emit(ml.SelectOp(reshape_to(node, mask, [count]), column, spare))
    total = node.emit(tensor.ExtractOp(node.emit(ml.ReduceSumOp(flat, [0])), [], i64))
    coordinates = coordinates_of(node, dims, count)
    columns = full_like(node, reshape_to(node, column, [1, count]), [rank, count])
    zero = node.scalar(0, TensorType(i64, []))
    out = full(node, [rank, calc.add(count, 1)], zero)
    out = node.emit(ml.ScatterElementsOp(out, columns, coordinates, 1, "none"))
    return [slice_at_run_time(node, out, 1, 0, total)]


def arange_row(node: Node, count: Size) -> SSAValue:
    """`[[0, 1, ..., count - 1]]` (i64, [1, count]): a constant, or an exclusive cumsum
    of ones along the row, which lowers to a count that fuses into its reader (a
    reshape of a 1-D `arange` would stand between them: a kernel of its own)."""
    if isinstance(count, int):
        return reshape_to(node, arange(node, count), [1, count])
    one = node.constant(np.array(1, dtype=np.int64))
    shape = shape_tensor(node, [1, count])
    ones = node.emit(ml.BroadcastToOp(one, TensorType(i64, [1, DYN]), shape))
    return node.emit(ml.CumSumOp(ones, 1, exclusive=True))


def coordinates_of(node: Node, dims: Sequence[Size], count: Size) -> SSAValue:
    """`[rank, count]`: each element's index along each axis, in row-major order, as
    `(flat // stride) % dim` of a flat `arange` (one fused elementwise kernel)."""
    calc = SizeCalc(node)
    strides: list[Size] = [1]
    for d in reversed(dims[1:]):
        strides.insert(0, calc.mul(strides[0], d))
    rank = len(dims)
    flat = arange_row(node, count)
    stride = reshape_to(node, shape_tensor(node, strides), [rank, 1])
    size = reshape_to(node, shape_tensor(node, dims), [rank, 1])
    return node.emit(ml.RemOp(node.emit(ml.DivOp(flat, stride)), size))

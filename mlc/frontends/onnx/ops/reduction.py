"""
ONNX reductions: ReduceSum/Mean/Max/Min/Prod and the composed ones (L1, L2, LogSumExp...).

Axes come from the attribute before the opset where they became an input (13 for
ReduceSum, 18 for the others) and from the input after; they must be known at import
time. No axes means all of them, unless `noop_with_empty_axes` is set.
"""

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import i1, i8, i64
from xdsl.ir import SSAValue

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    cast,
    dtype,
    element_of,
    int_list,
    is_float,
    reshape_to,
    shape_of,
    sizes,
)
from mlc.frontends.onnx.ops.padding import slice_along
from mlc.frontends.onnx.ops.table import converts
from mlc.shapes import DYNAMIC

DIRECT: dict[str, type[ml.ReduceOp]] = {
    "ReduceSum": ml.ReduceSumOp,
    "ReduceMean": ml.ReduceMeanOp,
    "ReduceMax": ml.ReduceMaxOp,
    "ReduceMin": ml.ReduceMinOp,
}

Reduction = Callable[[Node, SSAValue, list[int], bool], SSAValue]


def _axes(node: Node, rank: int) -> list[int] | None:
    """The normalised axes, or None for "reduce nothing"."""
    inputs_since = 13 if node.proto.op_type == "ReduceSum" else 18
    if node.opset < inputs_since:
        axes = node.attr("axes")
    elif node.has(1):
        axes = int_list(node.const(1, "axes"))
    else:
        axes = None
    if not axes:
        return None if node.attr("noop_with_empty_axes", 0) else list(range(rank))
    return sorted(shapes.normalize_axes(list(axes), rank))


def _direct(op: type[ml.ReduceOp]) -> Reduction:
    def reduce(node: Node, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        if element_of(x) != i1:
            return node.emit(op(x, axes, keepdims=keepdims))
        # `ml` reduces numbers: booleans go through i8 (max is "any", min is "all"); an
        # empty max is i8's minimum and an empty min its maximum, so test `> 0`.
        wide = node.emit(op(cast(node, x, i8), axes, keepdims=keepdims))
        return node.emit(ml.CmpOp("gt", wide, node.scalar(0, wide)))

    return reduce


def _prod(node: Node, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
    """Products by halving each axis: `x[:h] * x[h:2h]`, plus the odd element."""
    if any(shape_of(x)[axis] == DYNAMIC for axis in axes):
        if not is_float(x):
            raise NodeError("ReduceProd of integers over a dynamic dim is not supported")
        return _finish(node, _prod_by_logs(node, x, axes), axes, keepdims)
    if any(shape_of(x)[axis] == 0 for axis in axes):
        dims = [1 if i in axes else d for i, d in enumerate(shape_of(x))]
        return _finish(node, _ones(node, x, dims), axes, keepdims)
    result = x
    for axis in axes:
        size = shape_of(result)[axis]
        while size > 1:
            half = size // 2
            low, high = (
                slice_along(node, result, axis, 0, half),
                slice_along(node, result, axis, half, 2 * half),
            )
            product = node.emit(ml.MulOp(low, high))
            if size % 2:
                product = node.emit(
                    ml.ConcatOp([product, slice_along(node, result, axis, 2 * half, size)], axis)
                )
            result, size = product, half + size % 2
    return _finish(node, result, axes, keepdims)


def _prod_by_logs(node: Node, x: SSAValue, axes: list[int]) -> SSAValue:
    """
    A float product over dims of unknown size: `exp(sum(log|x|))` with the sign of the
    count of negatives, `(-1) ** n = 1 - 2 * (n - 2 * trunc(n / 2))`.
    """
    element = element_of(x)

    def emit(op: type[ml.BinaryOp], a: SSAValue, b: SSAValue | float) -> SSAValue:
        return node.emit(op(a, b if isinstance(b, SSAValue) else node.scalar(b, a)))

    logs = node.emit(ml.LogOp(node.emit(ml.AbsOp(x))))
    magnitude = node.emit(ml.ExpOp(node.emit(ml.ReduceSumOp(logs, axes, keepdims=True))))
    negative = cast(node, node.emit(ml.CmpOp("lt", x, node.scalar(0, x))), element)
    count = node.emit(ml.ReduceSumOp(negative, axes, keepdims=True))
    halves = cast(node, cast(node, emit(ml.DivOp, count, 2), i64), element)
    odd = emit(ml.SubOp, count, emit(ml.MulOp, halves, 2))
    sign = node.emit(ml.SubOp(node.scalar(1, odd), emit(ml.MulOp, odd, 2)))
    return node.emit(ml.MulOp(magnitude, sign))


def _ones(node: Node, like: SSAValue, dims: list[int]) -> SSAValue:
    return node.constant(np.ones(dims, dtype=dtype(like)))


def _finish(node: Node, reduced: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
    """`reduced` (size 1 along `axes`) without those dims unless `keepdims`."""
    if keepdims:
        return reduced
    return reshape_to(
        node, reduced, [d for i, d in enumerate(sizes(node, reduced)) if i not in axes]
    )


def _composed(node: Node, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
    op_type = node.proto.op_type
    if op_type in ("ReduceSumSquare", "ReduceL2"):
        x = node.emit(ml.MulOp(x, x))
    elif op_type == "ReduceL1":
        x = node.emit(ml.AbsOp(x))
    elif op_type == "ReduceLogSumExp":
        peak = node.emit(ml.ReduceMaxOp(x, axes, keepdims=True))
        total = node.emit(
            ml.ReduceSumOp(node.emit(ml.ExpOp(node.emit(ml.SubOp(x, peak)))), axes, keepdims=True)
        )
        return _finish(node, node.emit(ml.AddOp(node.emit(ml.LogOp(total)), peak)), axes, keepdims)
    total = node.emit(ml.ReduceSumOp(x, axes, keepdims=keepdims))
    if op_type == "ReduceL2":
        return node.emit(ml.SqrtOp(total))
    if op_type == "ReduceLogSum":
        return node.emit(ml.LogOp(total))
    return total


COMPOSED = ("ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp")


@converts(*DIRECT, "ReduceProd", *COMPOSED)
def reduce(node: Node) -> Sequence[Value]:
    x = node.input(0)
    axes = _axes(node, len(shape_of(x)))
    if axes is None:
        return [x]
    keepdims = bool(node.attr("keepdims", 1))
    op_type = node.proto.op_type
    if op_type in DIRECT:
        return [_direct(DIRECT[op_type])(node, x, axes, keepdims)]
    if op_type == "ReduceProd":
        return [_prod(node, x, axes, keepdims)]
    return [_composed(node, x, axes, keepdims)]

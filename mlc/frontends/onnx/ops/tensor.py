"""
Shape and data-movement ONNX ops: reshapes, transposes, slices, gathers, shapes (Pad is
`pad`'s).

Inputs that fix the result's shape (Reshape's shape, Squeeze's axes, Slice's steps)
are read at import time. Where such an input is only known at run time but the model
declares the output's static shape, the declared shape is used instead; Split's sizes
and Slice's bounds (with positive steps) are read at run time instead.
"""

import itertools
from collections.abc import Callable, Sequence

import numpy as np
from onnx import numpy_helper
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import SSAValue

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    element,
    element_of,
    int_list,
    product,
    reshape_to,
    shape_of,
    shape_tensor,
    size_along,
    sizes,
)
from mlc.frontends.onnx.ops.padding import (
    INT64_MAX,
    slice_along,
    slice_at_run_time,
)
from mlc.frontends.onnx.ops.table import converts

DYN = shapes.DYNAMIC


def declared_static(node: Node, index: int, what: str) -> TensorType:
    """The output type the model declares, when input `index` is unknown at import time."""
    declared = node.declared()
    if declared is None or shapes.num_elements(declared.get_shape()) is None:
        raise node.unknown(index, what, ", or the output's shape declared static")
    return declared


@converts("Reshape")
def reshape(node: Node) -> Sequence[Value]:
    x = node.input(0)
    target = node.known(1)
    if target is None:
        return [_reshape_at_run_time(node, x)]
    requested = int_list(target)
    source = shape_of(x)
    dims: list[Size] = list(requested)
    if not node.attr("allowzero", 0) and 0 in requested:
        current = sizes(node, x)
        dims = [current[i] if d == 0 and i < len(source) else d for i, d in enumerate(requested)]
    if -1 in requested:
        rest = [d for d in dims if not (isinstance(d, int) and d == -1)]
        total = shapes.num_elements(source)
        known = shapes.num_elements([d if isinstance(d, int) else DYN for d in rest])
        fill = DYN if total is None or known is None else (total // known if known else 0)
        dims = [fill if isinstance(d, int) and d == -1 else d for d in dims]
    return [reshape_to(node, x, dims)]


def _reshape_at_run_time(node: Node, x: SSAValue) -> SSAValue:
    """Reshape to a shape computed at run time (its 0s copy `x`'s dims unless allowzero)."""
    declared = node.declared()
    if declared is not None and shapes.num_elements(declared.get_shape()) is not None:
        return node.emit(ml.ReshapeOp(x, result_type=declared))
    target = node.input(1)
    (rank,) = shape_of(target)
    if rank < 0:  # the result's rank is unknown: only a value known now will do
        node.const(1, "shape")
    current = sizes(node, x)
    if not node.attr("allowzero", 0) and rank <= len(current):
        zero = node.emit(ml.CmpOp("eq", target, node.scalar(0, target)))
        target = node.emit(ml.SelectOp(zero, shape_tensor(node, current[:rank]), target))
    dims = [DYN] * rank
    if declared is not None and declared.get_num_dims() == rank:
        dims = list(declared.get_shape())
    return node.emit(ml.ReshapeOp(x, shape=target, result_type=TensorType(element_of(x), dims)))


@converts("Flatten")
def flatten(node: Node) -> Sequence[Value]:
    x = node.input(0)
    source = shape_of(x)
    axis = node.attr("axis", 1)
    axis = axis + len(source) if axis < 0 else axis  # in [-rank, rank]
    current = sizes(node, x)
    return [reshape_to(node, x, [product(node, current[:axis]), product(node, current[axis:])])]


def _reshape_by_axes(
    node: Node, dims_of: Callable[[SSAValue, list[int] | None], list[Size]]
) -> Sequence[Value]:
    """
    Squeeze and Unsqueeze: a reshape to `dims_of(x, axes)`, the axes from the attribute
    (before opset 13) or the optional input. Axes known only at run time take the
    output shape the model declares.
    """
    x = node.input(0)
    if node.opset < 13:
        axes = node.attr("axes")
    elif node.has(1):
        known = node.known(1)
        if known is None:
            return [node.emit(ml.ReshapeOp(x, result_type=declared_static(node, 1, "axes")))]
        axes = int_list(known)
    else:
        axes = None
    return [reshape_to(node, x, dims_of(x, None if axes is None else list(axes)))]


@converts("Squeeze")
def squeeze(node: Node) -> Sequence[Value]:
    def squeezed(x: SSAValue, axes: list[int] | None) -> list[Size]:
        source = shape_of(x)
        if axes is None:
            if DYN in source:
                raise NodeError("squeezing without axes needs a static input shape")
            axes = [i for i, d in enumerate(source) if d == 1]
        axes = list(shapes.normalize_axes(axes, len(source)))
        for axis in axes:
            if source[axis] not in (1, DYN):
                raise NodeError(f"cannot squeeze dim {axis} of size {source[axis]}")
        return [d for i, d in enumerate(sizes(node, x)) if i not in axes]

    return _reshape_by_axes(node, squeezed)


@converts("Unsqueeze")
def unsqueeze(node: Node) -> Sequence[Value]:
    def unsqueezed(x: SSAValue, axes: list[int] | None) -> list[Size]:
        if axes is None:
            raise NodeError("Unsqueeze needs axes")
        dims = sizes(node, x)
        for axis in sorted(shapes.normalize_axes(axes, len(dims) + len(axes))):
            dims.insert(axis, 1)
        return dims

    return _reshape_by_axes(node, unsqueezed)


@converts("Transpose")
def transpose(node: Node) -> Sequence[Value]:
    x = node.input(0)
    perm = node.attr("perm") or list(reversed(range(len(shape_of(x)))))
    return [node.emit(ml.TransposeOp(x, list(perm)))]


@converts("Concat")
def concat(node: Node) -> Sequence[Value]:
    inputs = [node.input(i) for i in range(len(node.proto.input)) if node.has(i)]
    if len(inputs) == 1:
        return inputs
    return [node.emit(ml.ConcatOp(inputs, node.attr("axis")))]


@converts("Split")
def split(node: Node) -> Sequence[Value]:
    x = node.input(0)
    source = shape_of(x)
    axis = shapes.normalize_axis(node.attr("axis", 0), len(source))
    if node.opset < 13:
        parts = node.attr("split")
    elif node.has(1):
        if node.known(1) is None:
            return _split_at_run_time(node, x, axis)
        parts = int_list(node.const(1, "split sizes"))
    else:
        parts = None
    if parts is not None:
        starts = list(itertools.accumulate(parts, initial=0))
        return [slice_along(node, x, axis, a, b) for a, b in itertools.pairwise(starts)]
    # Equal parts, the last one smaller if the size does not divide (num_outputs).
    count = node.attr("num_outputs", len(node.proto.output))
    calc = SizeCalc(node)
    size = size_along(node, x, axis)
    chunk = calc.ceildiv(size, count)
    bounds = [calc.min(calc.mul(chunk, i), size) for i in range(count + 1)]
    outputs: list[Value] = []
    for start, end in itertools.pairwise(bounds):
        if isinstance(start, int) and isinstance(end, int):
            outputs.append(slice_along(node, x, axis, start, end))
        else:
            outputs.append(slice_at_run_time(node, x, axis, start, end))
    return outputs


def _split_at_run_time(node: Node, x: SSAValue, axis: int) -> list[Value]:
    """
    Split by sizes known only at run time: one output per size, each `?` long along
    `axis`, at the running sum of the sizes before it. Every bound is clamped into
    `[0, dim]` (a negative size gives an empty part, sizes past the dim a shorter
    last part), so no part reads outside `x` when the sizes do not add up to the dim.
    """
    count = len(node.proto.output)
    if node.rank(1) != 1:
        raise node.error("split sizes must be 1-D")
    if (given := node.shape(1)[0]) not in (count, DYN):
        raise node.error(f"{given} split sizes for {count} outputs")
    calc = SizeCalc(node)
    dim = size_along(node, x, axis)
    start: Size = 0
    outputs: list[Value] = []
    for k in range(count):
        end = calc.min(calc.max(calc.add(start, element(node, node.input(1), k)), start), dim)
        outputs.append(slice_at_run_time(node, x, axis, start, end))
        start = end
    return outputs


@converts("Slice", since=10)
def slice_(node: Node) -> Sequence[Value]:
    x = node.input(0)
    rank = len(shape_of(x))
    if node.known(1) is None or node.known(2) is None:
        return [_slice_at_run_time(node, x, rank)]
    starts = int_list(node.const(1, "starts"))
    ends = int_list(node.const(2, "ends"))
    axes = int_list(node.const(3, "axes")) if node.has(3) else list(range(len(starts)))
    steps = int_list(node.const(4, "steps")) if node.has(4) else [1] * len(starts)
    return [_slice_axes(node, x, rank, starts, ends, axes, steps)]


def _slice_at_run_time(node: Node, x: SSAValue, rank: int) -> SSAValue:
    """
    Slice with starts or ends computed at run time (`x[:, :seq]` of a position table,
    with `seq` read from a dynamic dim; `x[..., 1:dim:2]` of an interleaved rotary
    embedding): each bound is read from its tensor, counted from the end if negative and
    clamped into the dim, as ONNX says. The steps must be known at import, and with a
    negative step the bounds too.
    """
    if node.rank(1) != 1 or node.rank(2) != 1:
        raise node.error("slice starts and ends must be 1-D")
    count = node.shape(1)[0]
    if count < 0:  # how many axes are sliced decides the IR: the bounds must be bound
        raise node.unknown(1, "starts") if node.known(1) is None else node.unknown(2, "ends")
    axes = int_list(node.const(3, "axes")) if node.has(3) else list(range(count))
    steps = int_list(node.const(4, "steps")) if node.has(4) else [1] * count
    if any(step < 1 for step in steps):
        # Backwards: the bounds must be known (a graph input's value is then bound).
        raise node.unknown(1, "starts") if node.known(1) is None else node.unknown(2, "ends")
    calc = SizeCalc(node)
    for k, axis in enumerate(axes):
        axis = shapes.normalize_axis(axis, rank)
        dim = size_along(node, x, axis)
        start, end = (_bound(node, calc, i, k, dim) for i in (1, 2))
        x = slice_at_run_time(node, x, axis, start, calc.max(start, end), steps[k])
    return x


def _bound(node: Node, calc: SizeCalc, i: int, k: int, dim: Size) -> Size:
    """Element `k` of bounds input `i`, from the end if negative, clamped into [0, dim]."""
    if (known := node.known(i)) is not None:
        value: Size = int(known.reshape(-1)[k])
        if value < 0:
            value = calc.add(value, dim)
        return calc.min(calc.max(value, 0), dim)
    value = element(node, node.input(i), k)
    negative = node.emit(arith.CmpiOp(value, calc.value(0), "slt"))
    from_end = calc.value(calc.add(value, dim))
    value = node.emit(arith.SelectOp(negative, from_end, value))
    return calc.min(calc.max(value, 0), dim)


@converts("Slice", since=1)
def slice_attributes(node: Node) -> Sequence[Value]:
    x = node.input(0)
    rank = len(shape_of(x))
    starts, ends = list(node.attr("starts")), list(node.attr("ends"))
    axes = list(node.attr("axes", range(len(starts))))
    return [_slice_axes(node, x, rank, starts, ends, axes, [1] * len(starts))]


def _slice_axes(
    node: Node,
    x: SSAValue,
    rank: int,
    starts: list[int],
    ends: list[int],
    axes: list[int],
    steps: list[int],
) -> SSAValue:
    full_starts, full_ends, full_steps = [0] * rank, [INT64_MAX] * rank, [1] * rank
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        axis = shapes.normalize_axis(axis, rank)
        if step == 0:
            raise NodeError("slice steps must not be 0")
        full_starts[axis], full_ends[axis], full_steps[axis] = start, end, step
    return node.emit(ml.SliceOp(x, full_starts, full_ends, full_steps))


@converts("Gather")
def gather(node: Node) -> Sequence[Value]:
    return [node.emit(ml.GatherOp(node.input(0), node.input(1), node.attr("axis", 0)))]


@converts("Expand", since=8)
def expand(node: Node) -> Sequence[Value]:
    x = node.input(0)
    target = node.known(1)
    if target is None:
        return [broadcast_at_run_time(node, x, 1)]
    dims = shapes.broadcast(shape_of(x), int_list(target))
    if tuple(dims) == shape_of(x):
        return [x]
    return [node.emit(ml.BroadcastToOp(x, TensorType(element_of(x), dims)))]


@converts("Tile", since=6)
def tile(node: Node) -> Sequence[Value]:
    x = node.input(0)
    source = shape_of(x)
    known = node.known(1)
    if known is not None:
        repeats = int_list(known)
    else:
        declared = declared_static(node, 1, "repeats").get_shape()
        if DYN in source:
            raise node.unknown(1, "repeats", " for an input of dynamic shape")
        repeats = [out // size if size else 1 for out, size in zip(declared, source, strict=True)]
    result = x
    for axis, count in enumerate(repeats):
        if count == 0:
            result = slice_along(node, result, axis, 0, 0)
        elif count > 1:
            result = node.emit(ml.ConcatOp([result] * count, axis))
    return [result]


@converts("Shape")
def shape(node: Node) -> Sequence[Value]:
    source = node.shape(0)
    start, end = node.attr("start", 0), node.attr("end", len(source))
    wanted = source[slice(start, end)]
    if DYN in wanted:
        return [shape_tensor(node, sizes(node, node.input(0))[slice(start, end)])]
    return [np.array(wanted, dtype=np.int64)]


@converts("Size")
def size(node: Node) -> Sequence[Value]:
    count = shapes.num_elements(node.shape(0))
    if count is None:
        total = product(node, sizes(node, node.input(0)))
        assert isinstance(total, SSAValue)
        return [node.emit(tensor.FromElementsOp(total, result_type=TensorType(i64, [])))]
    return [np.array(count, dtype=np.int64)]


def _attribute_value(node: Node) -> np.ndarray:
    """The value of a Constant (or ConstantOfShape's fill) from whichever attribute holds it."""
    proto = node.proto
    for attr in proto.attribute:
        match attr.name:
            case "value":
                return numpy_helper.to_array(attr.t)
            case "value_float":
                return np.array(attr.f, dtype=np.float32)
            case "value_floats":
                return np.array(list(attr.floats), dtype=np.float32)
            case "value_int":
                return np.array(attr.i, dtype=np.int64)
            case "value_ints":
                return np.array(list(attr.ints), dtype=np.int64)
            case _:
                raise NodeError(f"a Constant holding '{attr.name}' is not supported")
    raise NodeError("the Constant has no value")


@converts("Constant")
def constant(node: Node) -> Sequence[Value]:
    return [_attribute_value(node)]


@converts("ConstantOfShape", since=9)
def constant_of_shape(node: Node) -> Sequence[Value]:
    fill = _attribute_value(node) if node.proto.attribute else np.zeros(1, np.float32)
    fill = fill.reshape(-1)[:1].reshape(())
    known = node.known(0)
    if known is not None:
        return [np.full(int_list(known), fill, dtype=fill.dtype)]
    return [broadcast_at_run_time(node, node.constant(fill), 0)]


def broadcast_at_run_time(node: Node, x: SSAValue, index: int) -> SSAValue:
    """
    `x` broadcast (numpy's rule, as Expand) with the shape input `index` holds at run
    time; the model's declared output type where it is static.
    """
    declared = node.declared()
    if declared is not None and shapes.num_elements(declared.get_shape()) is not None:
        return node.emit(ml.BroadcastToOp(x, declared))
    target = node.input(index)
    (rank,) = shape_of(target)
    source = shape_of(x)
    if rank < len(source):  # the rank is unknown, or the shape has fewer dims than x
        declared_static(node, index, "shape")
    dims = [DYN] * rank
    if declared is not None and declared.get_num_dims() == rank:
        dims = list(declared.get_shape())
    if source:  # a 1 in the shape keeps x's size
        own = [1] * (rank - len(source)) + sizes(node, x)
        target = node.emit(ml.MaxOp(target, shape_tensor(node, own)))
        dims = [d if isinstance(d, int) and d > 1 else dims[i] for i, d in enumerate(own)]
    return node.emit(ml.BroadcastToOp(x, TensorType(element_of(x), dims), target))

"""
ONNX sequence ops whose sequences are known at import: the elements and their number.

torch's dynamo exporter unbinds a tensor into a sequence and picks its pieces with
constant positions (`SplitToSequence` then `SequenceAt`); `torch.stack`/`cat` of a list
become `SequenceConstruct` then `ConcatFromSequence`. Each sequence here is a
`TensorSequence`, a tuple of tensor values, so every op on it folds at import and only
slices, reshapes and concats reach the IR. Unbinding a dim whose size is known only at
run time gives an `Unbound` sequence, whose elements are sliced out as positions ask for
them. A position known only at run time is refused with the input that is not known.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, SequenceValue, TensorSequence, Value
from mlc.frontends.onnx.ops.build import int_list, reshape_to, shape_of, sizes
from mlc.frontends.onnx.ops.padding import slice_along
from mlc.frontends.onnx.ops.table import converts


@dataclass(frozen=True)
class Unbound(SequenceValue):
    """The slices of `x` along `axis` (its size known at run time), each without the axis."""

    x: SSAValue
    axis: int

    def at(self, node: Node, index: int) -> SSAValue:
        return unbind_one(node, self.x, self.axis, index)


def unbind_one(node: Node, x: SSAValue, axis: int, index: int) -> SSAValue:
    piece = slice_along(node, x, axis, index, index + 1)
    dims = sizes(node, piece)
    return reshape_to(node, piece, dims[:axis] + dims[axis + 1 :])


def sequence(node: Node, i: int) -> TensorSequence:
    """Input `i`, a sequence whose elements are known at import."""
    value = node.graph.values[node.proto.input[i]]
    if isinstance(value, Unbound):
        raise node.error(
            f"input {i} ('{node.proto.input[i]}') unbinds a dim known only at run time; "
            "only SequenceAt at a constant position reads such a sequence"
        )
    if not isinstance(value, TensorSequence):
        raise node.error(f"input {i} ('{node.proto.input[i]}') is not a sequence")
    return value


def position(node: Node, i: int, length: int, *, insert: bool = False) -> int:
    """A position input in `[-length, length)` (`insert`: up to `length` itself)."""
    at = int(node.const(i, "position").reshape(-1)[0])
    if not (-length <= at <= length if insert else -length <= at < length):
        raise node.error(f"position {at} is out of range for a sequence of {length}")
    return at + length if at < 0 else at


@converts("SplitToSequence", since=11)
def split_to_sequence(node: Node) -> Sequence[Value]:
    x = node.input(0)
    dims = shape_of(x)
    axis = shapes.normalize_axis(node.attr("axis", 0), len(dims))
    size = dims[axis]
    if node.has(1):
        split = node.const(1, "split")
        if size == shapes.DYNAMIC:
            raise node.error("splitting a dynamic dim into a sequence is not supported")
        if split.ndim == 0:
            chunk = int(split)
            parts = [min(chunk, size - start) for start in range(0, size, chunk)]
        else:
            parts = int_list(split)
        bounds = list(itertools.accumulate(parts, initial=0))
        return [
            TensorSequence(slice_along(node, x, axis, a, b) for a, b in itertools.pairwise(bounds))
        ]
    keep = node.attr("keepdims", 1)
    if size == shapes.DYNAMIC:
        if keep:
            raise node.error("splitting a dynamic dim into a sequence is not supported")
        return [Unbound(x, axis)]
    if keep:
        return [TensorSequence(slice_along(node, x, axis, i, i + 1) for i in range(size))]
    return [TensorSequence(unbind_one(node, x, axis, i) for i in range(size))]


@converts("SequenceAt", since=11)
def sequence_at(node: Node) -> Sequence[Value]:
    value = node.graph.values[node.proto.input[0]]
    if isinstance(value, Unbound):
        at = int(node.const(1, "position").reshape(-1)[0])
        if at < 0:
            raise node.error(f"position {at} counts from the end of a run-time length")
        return [value.at(node, at)]
    items = sequence(node, 0)
    return [items[position(node, 1, len(items))]]


@converts("SequenceConstruct", since=11)
def sequence_construct(node: Node) -> Sequence[Value]:
    return [TensorSequence(node.input(i) for i in range(len(node.proto.input)))]


@converts("SequenceLength", since=11)
def sequence_length(node: Node) -> Sequence[Value]:
    return [np.array(len(sequence(node, 0)), np.int64)]


@converts("SequenceInsert", since=11)
def sequence_insert(node: Node) -> Sequence[Value]:
    items = list(sequence(node, 0))
    at = position(node, 2, len(items), insert=True) if node.has(2) else len(items)
    items.insert(at, node.input(1))
    return [TensorSequence(items)]


@converts("SequenceErase", since=11)
def sequence_erase(node: Node) -> Sequence[Value]:
    items = list(sequence(node, 0))
    at = position(node, 1, len(items)) if node.has(1) else len(items) - 1
    del items[at]
    return [TensorSequence(items)]


@converts("ConcatFromSequence", since=11)
def concat_from_sequence(node: Node) -> Sequence[Value]:
    items = [node.constant(v) if isinstance(v, np.ndarray) else v for v in sequence(node, 0)]
    if not items:
        raise node.error("concatenating an empty sequence")
    axis = node.attr("axis")
    if node.attr("new_axis", 0):
        rank = len(shape_of(items[0])) + 1
        axis = shapes.normalize_axis(axis, rank)
        items = [
            reshape_to(node, v, [*sizes(node, v)[:axis], 1, *sizes(node, v)[axis:]]) for v in items
        ]
    if len(items) == 1:
        return items
    return [node.emit(ml.ConcatOp(items, axis))]

"""Converters of onnx's indexing ops: GatherElements, GatherND, ScatterElements (and the
older Scatter), ScatterND and TopK (whose k must be known at import)."""

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.dialects.ml.indexing import REDUCTIONS
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.build import (
    element_of,
    shape_of,
    shape_tensor,
    sizes,
    static_or_dynamic,
)
from mlc.frontends.onnx.ops.table import converts


@converts("GatherElements", since=11)
def gather_elements(node: Node) -> Sequence[Value]:
    op = ml.GatherElementsOp(node.input(0), node.input(1), node.attr("axis", 0))
    return [node.emit(op)]


@converts("GatherND", since=11)
def gather_nd(node: Node) -> Sequence[Value]:
    data, indices = node.input(0), node.input(1)
    batch = node.attr("batch_dims", 0)
    if (declared := node.declared()) is not None:
        # out rank = indices rank - 1 + data rank - batch dims - index depth
        depth = len(shape_of(indices)) - 1 + len(shape_of(data)) - batch - declared.get_num_dims()
        indices = static_depth(node, indices, depth)
    return [node.emit(ml.GatherNdOp(data, indices, batch))]


def static_depth(node: Node, indices: SSAValue, depth: int) -> SSAValue:
    """
    `indices` with its last dim (how many dims each index addresses) static: the `depth`
    the ranks of the other operands and results imply, where it is `?`. A broadcast to
    it checks at run time that the dim is that (`mlc.RuntimeCheckError` if not), so no
    index reads past the tensor.
    """
    dims = sizes(node, indices)
    if not dims or isinstance(dims[-1], int) or depth < 1:
        return indices
    dims[-1] = depth
    result = TensorType(element_of(indices), static_or_dynamic(dims))
    return node.emit(ml.BroadcastToOp(indices, result, shape_tensor(node, dims)))


@converts("TopK", since=1)
def top_k(node: Node) -> Sequence[Value]:
    if node.has(1):
        known = node.const(1, "k")
        if known.size != 1:
            raise node.error(f"expects k to hold one value, got {known.size}")
        k = int(known.reshape(-1)[0])
    else:
        k = node.attr("k")  # opset 1-9
    largest, sorted_ = bool(node.attr("largest", 1)), bool(node.attr("sorted", 1))
    op = ml.TopKOp(node.input(0), k, node.attr("axis", -1), largest, sorted_)
    node.emit(op)
    return [op.values, op.indices]


def reduction(node: Node) -> str:
    value = node.attr("reduction", "none")
    if value not in REDUCTIONS:
        raise node.error(f"unsupported reduction '{value}'")
    return value


@converts("Scatter", "ScatterElements", since=9)
def scatter_elements(node: Node) -> Sequence[Value]:
    data, indices, updates = node.input(0), node.input(1), node.input(2)
    op = ml.ScatterElementsOp(data, indices, updates, node.attr("axis", 0), reduction(node))
    return [node.emit(op)]


@converts("ScatterND", since=11)
def scatter_nd(node: Node) -> Sequence[Value]:
    data, indices, updates = node.input(0), node.input(1), node.input(2)
    # updates rank = indices rank - 1 + data rank - index depth
    depth = len(shape_of(indices)) - 1 + len(shape_of(data)) - len(shape_of(updates))
    indices = static_depth(node, indices, depth)
    return [node.emit(ml.ScatterNdOp(data, indices, updates, reduction(node)))]

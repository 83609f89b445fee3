"""Converters of onnx's indexing ops: GatherElements, GatherND, ScatterElements (and the
older Scatter), ScatterND and TopK (whose k must be known at import)."""

from collections.abc import Sequence

from mlc.dialects import ml
from mlc.dialects.ml.indexing import REDUCTIONS
from mlc.frontends.onnx.node import Node, Value
from mlc.frontends.onnx.ops.table import converts


@converts("GatherElements", since=11)
def gather_elements(node: Node) -> Sequence[Value]:
    op = ml.GatherElementsOp(node.input(0), node.input(1), node.attr("axis", 0))
    return [node.emit(op)]


@converts("GatherND", since=11)
def gather_nd(node: Node) -> Sequence[Value]:
    op = ml.GatherNdOp(node.input(0), node.input(1), node.attr("batch_dims", 0))
    return [node.emit(op)]


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
    op = ml.ScatterNdOp(node.input(0), node.input(1), node.input(2), reduction(node))
    return [node.emit(op)]

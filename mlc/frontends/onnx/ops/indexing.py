"""Converters of onnx's indexing ops: GatherElements and GatherND."""

from collections.abc import Sequence

from mlc.dialects import ml
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

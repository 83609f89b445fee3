"""
The op table: ONNX op type -> converter, per opset.

A converter takes the `Node` being imported and returns one value per output (an SSA
value, or a numpy array when the result is known at import time). Where an op's
semantics changed between opsets, a converter is registered per version it handles,
with the opset it applies from (`@converts("Softmax", since=13)`); the model's opset
picks the newest registration not newer than it.
"""

from collections.abc import Callable, Sequence

from mlc.frontends.onnx.node import Node, Value

Converter = Callable[[Node], Sequence[Value | None]]

TABLE: dict[str, list[tuple[int, Converter]]] = {}


def converts(*op_types: str, since: int = 1) -> Callable[[Converter], Converter]:
    """Register a converter for `op_types` from opset `since` on."""

    def register(function: Converter) -> Converter:
        for op_type in op_types:
            TABLE.setdefault(op_type, []).append((since, function))
            TABLE[op_type].sort(key=lambda entry: entry[0])
        return function

    return register


def converter_for(op_type: str, opset: int) -> Converter | None:
    """The converter of `op_type` at `opset`, or None if the op is not supported there."""
    found = None
    for since, function in TABLE.get(op_type, []):
        if since <= opset:
            found = function
    return found


def supported_ops() -> list[str]:
    return sorted(TABLE)

"""
One ONNX node being converted, and the graph values it reads and writes.

The converters (`ops/`) see a graph only through `Node`: its inputs (SSA values, or
numpy arrays known at import time), its attributes, the output types the model
declares, and `emit`, which appends an op at the node's location. `GraphImporter`
(`graph`) is a `GraphValues` that drives the nodes through the op table; with both
depending on this module, `ops/` never imports `graph`.
"""

import copy
from collections.abc import MutableMapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, NameLoc, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from mlc import resources
from mlc.frontends.onnx import types
from mlc.frontends.onnx.model import OnnxImportError, fail, node_name

Value = SSAValue | np.ndarray


class SequenceValue:
    """An ONNX sequence value, which lives only during import."""


class TensorSequence(SequenceValue, tuple):
    """
    An ONNX sequence whose length and elements are known at import: a tuple of tensor
    values. Exporters emit sequences to unbind a tensor and index the pieces with
    constant positions; those fold away at import. A sequence never reaches the IR.
    """


class NodeError(Exception):
    """A node cannot be converted: the message says why (the importer adds the node).
    Converters, which have the node, raise `node.error(message)` instead."""


class UnknownAtImportError(NodeError):
    """A converter needs the value of graph value `name` (a node's input) at import time,
    and it is not known then: a graph input, or computed from one. `Node.unknown` makes
    it and records `name` in the graph's `needed_at_import`."""

    def __init__(self, message: str, name: str):
        super().__init__(message)
        self.name = name


class GraphValues:
    """
    The values of the graph being imported, by ONNX name, and the block ops go to.

    A value is an SSA value or a numpy array known at import time; `ssa` and
    `materialize` emit a known one as an `arith.constant`, once per array.

    A subgraph (a Loop's body, an If's branch) is converted in a scope `nested` in the
    one of its node: it reads the values of the scopes around it (its captures), and
    the names it defines, shadowing outer ones or not, stay in it.
    """

    def __init__(
        self,
        model_name: str,
        opset: int,
        declared_types: MutableMapping[str, TensorType[Attribute]],
    ):
        self.model_name = model_name
        self.opset = opset
        self.declared_types = declared_types
        self.values: MutableMapping[str, Value] = {}
        self.block = Block()
        self.materialized: dict[int, tuple[np.ndarray, SSAValue]] = {}
        # Values converters needed at import time and did not find known, in order.
        self.needed_at_import: list[str] = []
        # Values whose dims converters needed static and found dynamic, in order.
        self.needed_static: list[str] = []
        # The scope around this one (a subgraph's), and the prefix of its unnamed nodes.
        self.outer: GraphValues | None = None
        self.scope = ""

    def nested(self, block: Block, scope: str) -> "GraphValues":
        """A scope inside this one whose ops go to `block` (this scope's own block to
        inline a subgraph); `scope` prefixes the names of its unnamed nodes."""
        raise NotImplementedError  # the importer (`graph.NodeConverter`) converts nodes

    def convert_graph(self, graph: onnx.GraphProto, inputs: Sequence[Value]) -> list[Value]:
        """Convert subgraph `graph` in this scope, its inputs bound to `inputs`: the
        values of its outputs."""
        raise NotImplementedError

    def ssa(self, name: str, location: Attribute) -> SSAValue:
        value = self.values[name]
        if isinstance(value, SequenceValue):
            raise NodeError(f"'{name}' is a sequence, where a tensor is expected")
        if isinstance(value, np.ndarray):
            return self.materialize(value, location, name)
        return value

    def materialize(self, array: np.ndarray, location: Attribute, name: str = "") -> SSAValue:
        """An `arith.constant` for a known value, emitted once per array."""
        scope: GraphValues | None = self
        while scope is not None:  # a constant of an outer block dominates this one
            if (found := scope.materialized.get(id(array))) is not None:
                return found[1]
            scope = scope.outer
        try:
            attr = resources.elements_attr(array, name)
        except types.UnsupportedType as error:
            raise NodeError(str(error)) from None
        op = arith.ConstantOp(attr, attr.type)  # pyright: ignore[reportArgumentType]
        op.location = location
        self.block.add_op(op)
        # Holding the array keeps its id from being reused by a later array.
        self.materialized[id(array)] = (array, op.result)
        return op.result


class Node:
    """One ONNX node being converted: its inputs, attributes, and where ops go."""

    def __init__(self, graph: GraphValues, proto: onnx.NodeProto, index: int):
        self.graph = graph
        self.proto = proto
        self.index = index
        self.opset = graph.opset
        self.name = node_name(proto, index)
        if graph.scope and not proto.name:
            self.name = f"{graph.scope}/{self.name}"
        # A node has no line in its file: 0:0 is MLIR's "no line" (see diagnostics).
        self.location = NameLoc(
            StringAttr(self.name),
            FileLineColLoc(StringAttr(graph.model_name), IntAttr(0), IntAttr(0)),
        )
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}

    def error(self, message: str) -> OnnxImportError:
        """The error to raise when the node cannot be converted; `message` says why."""
        return fail(self.graph.model_name, message, self.proto, self.opset, self.index, self.name)

    def within(self, graph: GraphValues) -> "Node":
        """This node emitting into `graph`'s block (a subgraph's scope), at its location."""
        inner = copy.copy(self)
        inner.graph = graph
        return inner

    # -- attributes and inputs ------------------------------------------------

    def attr(self, name: str, default: Any = None) -> Any:
        value = self.attrs.get(name, default)
        return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value

    def has(self, i: int) -> bool:
        """Whether optional input `i` is given (present and not the empty name)."""
        return i < len(self.proto.input) and bool(self.proto.input[i])

    def known(self, i: int) -> np.ndarray | None:
        """Input `i`'s value if it is known at import time."""
        value = self.graph.values[self.proto.input[i]]
        return value if isinstance(value, np.ndarray) else None

    def const(self, i: int, what: str) -> np.ndarray:
        """Input `i`'s value, which the conversion needs at import time."""
        value = self.known(i)
        if value is None:
            raise self.unknown(i, what)
        return value

    def unknown(self, i: int, what: str, otherwise: str = "") -> UnknownAtImportError:
        """The error for input `i` (the `what`), needed at import time and not known then
        (`otherwise`: what else would do), its name recorded in the graph."""
        name = self.proto.input[i]
        self.graph.needed_at_import.append(name)
        return UnknownAtImportError(
            f"input {i} ('{name}', the {what}) must be known at import time (an "
            f"initializer, a Constant, or computed from static shapes){otherwise}",
            name,
        )

    def dynamic_dims(self, i: int, message: str) -> NodeError:
        """The error for input `i`, whose dims the conversion needs static and are not
        (`message` says which); its name recorded in the graph's `needed_static`, so
        that `mlc.compile` may specialise the model on those dims at run time."""
        self.graph.needed_static.append(self.proto.input[i])
        return NodeError(message)

    def input(self, i: int) -> SSAValue:
        """Input `i` as an SSA value (known values become constants)."""
        return self.graph.ssa(self.proto.input[i], self.location)

    def type(self, i: int) -> TensorType[Attribute]:
        value = self.graph.values[self.proto.input[i]]
        if isinstance(value, np.ndarray):
            return types.tensor_type_of(value)
        assert isinstance(value.type, TensorType)
        return value.type  # pyright: ignore[reportUnknownVariableType]

    def shape(self, i: int) -> tuple[int, ...]:
        return tuple(self.type(i).get_shape())

    def rank(self, i: int) -> int:
        return len(self.shape(i))

    def declared(self, output: int = 0) -> TensorType[Attribute] | None:
        """Output `output`'s type as the model (or onnx shape inference) declares it."""
        return self.graph.declared_types.get(self.proto.output[output])

    # -- building ops ---------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        """Append `op` at the node's location; its (first) result."""
        op.location = self.location
        self.graph.block.add_op(op)
        return op.results[0]

    def constant(self, array: np.ndarray) -> SSAValue:
        return self.graph.materialize(array, self.location)

    def scalar(self, value: float | int | bool, like: SSAValue | TensorType[Attribute]) -> SSAValue:
        """A rank-0 constant of the element type of `like`."""
        type_ = like if isinstance(like, TensorType) else like.type
        assert isinstance(type_, TensorType)
        try:
            dtype = types.dtype_of(type_.element_type)  # pyright: ignore[reportUnknownMemberType]
        except types.UnsupportedType as error:
            raise NodeError(str(error)) from None
        return self.constant(np.array(value, dtype=dtype))

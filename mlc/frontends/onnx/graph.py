"""
The importer core: an ONNX graph becomes one `func.func @main` of `ml` ops.

    float initializer, params_as_args ->  leading function argument, in initializer order
    graph input (not an initializer)  ->  function argument, in order
    graph output                      ->  function result, in order
    initializer, Constant             ->  a known numpy value, emitted as `arith.constant`
                                          where an op needs it as an SSA value
    node                              ->  the ops its converter emits (`ops/`)

Values are either SSA values or *known* numpy arrays. A node whose inputs are all
known is evaluated at import time with onnx's numpy reference implementation, so the
shape subgraphs exporters write (Shape -> Gather -> Unsqueeze -> Concat -> Reshape)
fold to constants when the shapes are static, and converters can read shapes, axes
and pads as plain numbers.

Types come from the model: element types and static sizes; a `dim_param` dim becomes
`?`, its symbol kept in the argument's `ml.dim_names` attribute (`shape-inference`
unifies equal names). Every op carries `loc("<node name>"("<model>":0:0))`: the node's
name (`<OpType>_<index>` when it has none) around the model path, with no line (a
binary file has none), so diagnostics of later passes read `<model>: node '<name>':
error: ...`. Errors are raised through `model.fail` (`Node.error` for a node's).
"""

import re
from collections import ChainMap
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from mlc import diagnostics
from mlc.dialects import ml
from mlc.frontends.onnx import shape_folds, types
from mlc.frontends.onnx.model import LoadedModel, OnnxImportError, fail
from mlc.frontends.onnx.node import GraphValues, Node, NodeError, TensorSequence, Value
from mlc.frontends.onnx.ops import converter_for
from mlc.shapes import ShapeError

# Ops that are not evaluated at import time even when their inputs are known (the
# control-flow ops' subgraphs read values that are not their inputs).
NOT_FOLDED = frozenset(
    {
        "Bernoulli",
        "If",
        "Loop",
        "Scan",
        "Multinomial",
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
    }
)


def value_name(name: str) -> str:
    """An SSA name hint for an ONNX value name (`input.1` -> `input.1`, `0` -> `v0`)."""
    text = re.sub(r"[^\w$.]", "_", name)
    return text if re.match(r"[A-Za-z_]", text) else f"v{text}"


class NodeConverter(GraphValues):
    """Converts nodes into a block: the graph's, or a subgraph's (see `GraphValues`)."""

    def convert_nodes(self, nodes: Sequence[onnx.NodeProto]) -> None:
        """Convert `nodes` in order, each one's new ops verified as they are made."""
        for index, proto in enumerate(nodes):
            node = Node(self, proto, index)
            last = self.block.last_op
            try:
                self._convert(node)
            except (NodeError, types.UnsupportedType) as error:
                raise node.error(str(error)) from None
            new_ops = self.block.ops if last is None else _ops_after(last)
            for op in new_ops:
                if problem := diagnostics.verify_op(op):
                    raise node.error(problem.message) from None

    def nested(self, block: Block, scope: str) -> GraphValues:
        inner = NodeConverter(self.model_name, self.opset, ChainMap({}, self.declared_types))
        inner.values = ChainMap({}, self.values)
        inner.block = block
        inner.outer = self
        inner.scope = scope
        inner.needed_at_import = self.needed_at_import
        inner.needed_static = self.needed_static
        return inner

    def convert_graph(self, graph: onnx.GraphProto, inputs: Sequence[Value]) -> list[Value]:
        if len(inputs) != len(graph.input):
            raise NodeError(
                f"subgraph '{graph.name}' takes {len(graph.input)} inputs, given {len(inputs)}"
            )
        self.declared_types.update(declared_types(graph))
        for init in graph.initializer:
            # onnxruntime and onnx's reference keep an outer value of the same name
            if init.name not in self.values:
                self.values[init.name] = onnx.numpy_helper.to_array(init)
        for info, value in zip(graph.input, inputs, strict=True):
            self.values[info.name] = value
        self.convert_nodes(graph.node)
        missing = [out.name for out in graph.output if out.name not in self.values]
        if missing:
            raise NodeError(
                f"output '{missing[0]}' of subgraph '{graph.name}' is not computed by any node"
            )
        return [self.values[out.name] for out in graph.output]

    def _convert(self, node: Node) -> None:
        proto = node.proto
        inputs = [n for n in proto.input if n]
        for name in inputs:
            if name not in self.values:
                raise NodeError(
                    f"input '{name}' is not produced by any node, initializer or graph input"
                )
        if (
            inputs
            and proto.op_type not in NOT_FOLDED
            and all(isinstance(self.values[n], np.ndarray) for n in inputs)
        ):
            outputs: Sequence[Value] = self._evaluate(proto)
        else:
            converter = converter_for(proto.op_type, self.opset)
            if converter is None:  # in a subgraph: the model's check sees the top level only
                raise NodeError(f"mlc does not convert {proto.op_type} at opset {self.opset}")
            try:
                outputs = converter(node)
            except (ShapeError, VerifyException, ValueError) as error:
                raise NodeError(diagnostics.one_line(str(error))) from None
        for i, name in enumerate(proto.output):
            if not name:
                continue
            if i >= len(outputs) or outputs[i] is None:
                raise NodeError(f"output {i} ('{name}') is not supported")
            self.values[name] = outputs[i]

    def _evaluate(self, proto: onnx.NodeProto) -> list[Value]:
        """Run a node on known inputs: shape arithmetic in numpy, else with onnx's
        reference implementation."""
        if all(proto.input) and (
            folded := shape_folds.fold(proto, [self.values[n] for n in proto.input])
        ):
            return list(folded)  # a list of arrays, as the evaluator returns
        from onnx.reference import ReferenceEvaluator

        inputs = {n: self.values[n] for n in proto.input if n}
        try:
            evaluator = ReferenceEvaluator(proto, opsets={"": self.opset})
            results = evaluator.run(None, inputs)
        except Exception as error:  # the reference evaluator raises anything
            raise NodeError(
                f"cannot evaluate on constant inputs: {diagnostics.one_line(str(error))}"
            ) from None
        # A sequence (a list) stays one, of known tensors: not an array stacked from it.
        return [
            TensorSequence(np.asarray(e) for e in v) if isinstance(v, list) else np.asarray(v)
            for v in results
        ]


class GraphImporter(NodeConverter):
    """Builds the `ml` function of one model (see the module docstring)."""

    def __init__(self, model: LoadedModel, params: "ParamFilter | None" = None):
        super().__init__(model.name, model.opset, declared_types(model.proto.graph))
        self.model = model.proto
        self.params = params

    # -- the graph ------------------------------------------------------------

    def run(self) -> ModuleOp:
        graph = self.model.graph
        for init in graph.initializer:
            self.values[init.name] = onnx.numpy_helper.to_array(init)
        param_types = self._parameters(graph)
        arg_types, arg_attrs = self._arguments(graph)
        arg_types = [*param_types, *arg_types]
        arg_attrs = [*(DictionaryAttr({}) for _ in param_types), *arg_attrs]
        self.convert_nodes(graph.node)
        results = [self._result(out.name) for out in graph.output]
        self.block.add_op(func.ReturnOp(*results))
        function = func.FuncOp(
            "main",
            (arg_types, [r.type for r in results]),
            Region(self.block),
            arg_attrs=ArrayAttr(arg_attrs),
        )
        function.location = self.model_location()
        module = ModuleOp([function])
        # The nodes' ops were verified as they were made; what is left is the frame.
        for op in (module, function, function.body.block.last_op):
            if op is not None and (problem := diagnostics.verify_op(op)):
                raise OnnxImportError([problem])
        return module

    def model_location(self) -> FileLineColLoc:
        """The model as a whole: its file, no line (0:0)."""
        return FileLineColLoc(StringAttr(self.model_name), IntAttr(0), IntAttr(0))

    def _parameters(self, graph: onnx.GraphProto) -> list[Attribute]:
        """The initializers `self.params` picks, as the function's leading arguments."""
        if self.params is None:
            return []
        found: list[Attribute] = []
        for name, array in parameters(graph, self.params).items():
            type_ = types.tensor_type_of(array)
            arg = self.block.insert_arg(type_, len(self.block.args))
            arg.name_hint = value_name(name)
            self.values[name] = arg
            found.append(type_)
        return found

    def _arguments(self, graph: onnx.GraphProto) -> tuple[list[Attribute], list[DictionaryAttr]]:
        initializers = {init.name for init in graph.initializer}
        arg_types: list[Attribute] = []
        arg_attrs: list[DictionaryAttr] = []
        for info in graph.input:
            if info.name in initializers:
                continue
            try:
                type_, names = types.tensor_type(info)
            except types.UnsupportedType as error:
                raise fail(self.model_name, f"graph input '{info.name}': {error}") from None
            arg = self.block.insert_arg(type_, len(self.block.args))
            arg.name_hint = value_name(info.name)
            self.values[info.name] = arg
            arg_types.append(type_)
            attrs: dict[str, Attribute] = {}
            if any(names):
                attrs[ml.DIM_NAMES] = ArrayAttr([StringAttr(n) for n in names])
            arg_attrs.append(DictionaryAttr(attrs))
        return arg_types, arg_attrs

    def _result(self, name: str) -> SSAValue:
        if name not in self.values:
            raise fail(self.model_name, f"graph output '{name}' is not computed by any node")
        return self.ssa(name, self.model_location())


ParamFilter = Callable[[str, np.ndarray], bool]


def parameters(graph: onnx.GraphProto, pick: ParamFilter) -> dict[str, np.ndarray]:
    """The floating-point initializers `pick` accepts, by name, in the graph's order."""
    found: dict[str, np.ndarray] = {}
    for init in graph.initializer:
        array = onnx.numpy_helper.to_array(init)
        if array.dtype.kind == "f" and pick(init.name, array):
            found[init.name] = array
    return found


def declared_types(graph: onnx.GraphProto) -> dict[str, TensorType[Attribute]]:
    """The tensor types a graph (or onnx shape inference) gives its values, where valid."""
    found: dict[str, TensorType[Attribute]] = {}
    for info in [*graph.value_info, *graph.output]:
        try:
            type_, _ = types.tensor_type(info)
        except types.UnsupportedType:
            continue
        found[info.name] = type_
    return found


def supports(node: onnx.NodeProto, opset: int) -> bool:
    """Whether the op table has a converter for the node's op at `opset`."""
    return converter_for(node.op_type, opset) is not None


def _ops_after(op: Operation) -> Iterator[Operation]:
    while (op := op.next_op) is not None:  # pyright: ignore[reportAssignmentType]
        yield op

"""
The importer core: an ONNX graph becomes one `func.func @main` of `ml` ops.

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
unifies equal names). Every op carries `loc("<node name>"("<model>":<node#>:1))`: the
node's name (`<OpType>_<index>` when it has none) around the model path and the node's
1-based position in the graph, so diagnostics of later passes point at the node.
"""

import re
from collections.abc import Sequence

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
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from mlc import diagnostics
from mlc.diagnostics import Diagnostic, SourceLoc
from mlc.dialects import ml
from mlc.frontends.onnx import shape_folds, types
from mlc.frontends.onnx.model import DEFAULT_DOMAINS, LoadedModel, OnnxImportError, fail
from mlc.frontends.onnx.node import GraphValues, Node, NodeError, Value
from mlc.frontends.onnx.ops import converter_for
from mlc.shapes import DYNAMIC, ShapeError

# Ops that are not evaluated at import time even when their inputs are known.
NOT_FOLDED = frozenset(
    {
        "Bernoulli",
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


class GraphImporter(GraphValues):
    """Builds the `ml` function of one model (see the module docstring)."""

    def __init__(self, model: LoadedModel):
        super().__init__(model.name, model.opset, declared_types(model.proto))
        self.model = model.proto

    # -- the graph ------------------------------------------------------------

    def run(self) -> ModuleOp:
        graph = self.model.graph
        for init in graph.initializer:
            self.values[init.name] = onnx.numpy_helper.to_array(init)
        arg_types, arg_attrs = self._arguments(graph)
        self._check_supported(graph.node)
        errors: list[Diagnostic] = []
        for index, node in enumerate(graph.node):
            try:
                self._convert(Node(self, node, index))
            except NodeError as error:
                errors.append(self._node_diagnostic(node, index, str(error)))
                break
        if errors:
            raise OnnxImportError(errors)
        results = [self._result(out.name) for out in graph.output]
        self.block.add_op(func.ReturnOp(*results))
        function = func.FuncOp(
            "main",
            (arg_types, [r.type for r in results]),
            Region(self.block),
            arg_attrs=ArrayAttr(arg_attrs),
        )
        function.location = FileLineColLoc(StringAttr(self.model_name), IntAttr(0), IntAttr(0))
        module = ModuleOp([function])
        if problems := diagnostics.verify_module(module):
            raise OnnxImportError(problems)
        return module

    def _arguments(self, graph: onnx.GraphProto) -> tuple[list[Attribute], list[DictionaryAttr]]:
        initializers = {init.name for init in graph.initializer}
        arg_types: list[Attribute] = []
        arg_attrs: list[DictionaryAttr] = []
        for info in graph.input:
            if info.name in initializers:
                continue
            try:
                type_, names = tensor_type(info)
            except (NodeError, types.UnsupportedType) as error:
                raise fail(
                    f"graph input '{info.name}': {error}", SourceLoc(self.model_name)
                ) from None
            arg = self.block.insert_arg(type_, len(self.block.args))
            arg.name_hint = value_name(info.name)
            self.values[info.name] = arg
            arg_types.append(type_)
            attrs: dict[str, Attribute] = {}
            if any(names):
                attrs[ml.DIM_NAMES] = ArrayAttr([StringAttr(n) for n in names])
            arg_attrs.append(DictionaryAttr(attrs))
        return arg_types, arg_attrs

    def _check_supported(self, nodes: Sequence[onnx.NodeProto]) -> None:
        """One error listing every op type the importer cannot convert, with its nodes."""
        missing: dict[str, list[str]] = {}
        for index, node in enumerate(nodes):
            if node.domain in DEFAULT_DOMAINS and converter_for(node.op_type, self.opset):
                continue
            kind = (
                node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"
            )
            missing.setdefault(kind, []).append(f"'{node.name or f'{node.op_type}_{index}'}'")
        if not missing:
            return
        listed = "; ".join(f"{kind} (nodes {', '.join(names)})" for kind, names in missing.items())
        raise fail(
            f"unsupported ONNX ops at opset {self.opset}: {listed}", SourceLoc(self.model_name)
        )

    def _convert(self, node: Node) -> None:
        proto = node.proto
        inputs = [n for n in proto.input if n]
        for name in inputs:
            if name not in self.values:
                raise NodeError(f"input '{name}' is not defined before the node")
        if (
            inputs
            and proto.op_type not in NOT_FOLDED
            and all(isinstance(self.values[n], np.ndarray) for n in inputs)
        ):
            outputs: Sequence[Value] = self._evaluate(proto)
        else:
            try:
                outputs = converter_for(proto.op_type, self.opset)(node)  # pyright: ignore[reportOptionalCall]
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
            return [np.asarray(v) for v in evaluator.run(None, inputs)]
        except Exception as error:  # the reference evaluator raises anything
            raise NodeError(
                f"cannot evaluate on constant inputs: {diagnostics.one_line(str(error))}"
            ) from None

    def _result(self, name: str) -> SSAValue:
        if name not in self.values:
            raise fail(
                f"graph output '{name}' is not computed by any node", SourceLoc(self.model_name)
            )
        return self.ssa(name, FileLineColLoc(StringAttr(self.model_name), IntAttr(0), IntAttr(0)))

    def _node_diagnostic(self, node: onnx.NodeProto, index: int, message: str) -> Diagnostic:
        name = node.name or f"{node.op_type}_{index}"
        return Diagnostic(
            "error",
            f"node '{name}' ({node.op_type}, opset {self.opset}): {message}",
            SourceLoc(self.model_name, index + 1, 1),
        )


def declared_types(model: onnx.ModelProto) -> dict[str, TensorType[Attribute]]:
    """The tensor types the model (or onnx shape inference) gives its values, where valid."""
    graph = model.graph
    found: dict[str, TensorType[Attribute]] = {}
    for info in [*graph.value_info, *graph.output]:
        try:
            type_, _ = tensor_type(info)
        except (NodeError, types.UnsupportedType):
            continue
        found[info.name] = type_
    return found


def tensor_type(info: onnx.ValueInfoProto) -> tuple[TensorType[Attribute], list[str]]:
    """The tensor type of a graph value and the symbol of each dim ("" if none)."""
    kind = info.type.WhichOneof("value")
    if kind != "tensor_type":
        raise NodeError(f"{kind or 'an untyped value'} is not supported, only tensors")
    tensor = info.type.tensor_type
    element = types.element_type(tensor.elem_type)
    if not tensor.HasField("shape"):
        raise NodeError("the rank is unknown (the model gives no shape)")
    sizes: list[int] = []
    names: list[str] = []
    for dim in tensor.shape.dim:
        sizes.append(dim.dim_value if dim.HasField("dim_value") else DYNAMIC)
        names.append(dim.dim_param if dim.HasField("dim_param") else "")
    return TensorType(element, sizes), names

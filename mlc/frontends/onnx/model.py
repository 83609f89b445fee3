"""
Reading an ONNX model: from a path or a `ModelProto` to a checked, shape-inferred model,
and the one way the frontend reports a problem (`fail`).

Everything a user can get wrong here (a missing or truncated file, a file that is not
ONNX, missing external data, an opset newer than the installed onnx package knows, a
node input nothing produces, ops mlc cannot convert, shapes that contradict each other)
is one `OnnxImportError` diagnostic, never a traceback. mlc checks the graph's
structure itself first, so its messages name the node at fault; onnx's checker and
shape inference do the rest, their messages attributed to the node they name.
"""

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import onnx
import onnx.checker
import onnx.shape_inference
from google.protobuf.message import DecodeError

from mlc.diagnostics import CompileError, Diagnostic, SourceLoc, one_line
from mlc.frontends.onnx import types
from mlc.frontends.onnx.weightless import with_weights, without_weights

DEFAULT_DOMAINS = ("", "ai.onnx")


class OnnxImportError(CompileError):
    """The model could not be imported: a one-line diagnostic, `.node` the node at fault."""


def fail(
    model: str,
    message: str,
    node: onnx.NodeProto | None = None,
    opset: int = 0,
    index: int = 0,
    name: str = "",
) -> OnnxImportError:
    """
    The error for a problem with `model` (its path, or a `ModelProto`'s graph name):
    `model.onnx: error: message`, or where `node` (the `index`-th) is at fault,
    `model.onnx: node 'name' (OpType, opset N): error: message` (`name`: the node's
    name where the caller knows better, e.g. an unnamed node of a subgraph).
    """
    location = SourceLoc(model)
    if node is not None:
        label = name or node_name(node, index)
        location = SourceLoc(model, node=label, detail=node_kind(node, opset))
    return OnnxImportError([Diagnostic("error", message, location)])


def node_name(node: onnx.NodeProto, index: int) -> str:
    """A node's name, `<OpType>_<index>` when it has none."""
    return node.name or f"{node.op_type}_{index}"


def node_kind(node: onnx.NodeProto, opset: int) -> str:
    """`OpType, opset N` (`domain.OpType` outside the default domain)."""
    kind = node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"
    return f"{kind}, opset {opset}" if opset else kind


@dataclass(frozen=True)
class LoadedModel:
    """A checked model, the name its locations use, and its default-domain opset."""

    proto: onnx.ModelProto
    name: str
    opset: int


# Whether mlc converts a node at an opset: decided by the op table, which the caller has.
Supports = Callable[[onnx.NodeProto, int], bool]


# onnx's strict shape inference of Resize with a `sizes` or `scales` of unknown length.
UNKNOWN_LENGTH = re.compile(r"op_type:Resize\).*Number of elements of input '\w+' \(0\)")


def load(src: "str | os.PathLike[str] | onnx.ModelProto", supports: Supports) -> LoadedModel:
    """Read, check and shape-infer a model; an `OnnxImportError` for bad input."""
    if isinstance(src, onnx.ModelProto):
        proto, name = src, ""
    else:
        name = str(src)
        proto = _read(Path(src), name)
    if _decode_names(proto, apply=False):
        if not name:  # the caller's model: repair a copy
            proto, original = onnx.ModelProto(), proto
            proto.CopyFrom(original)
        _decode_names(proto, apply=True)
    name = name or proto.graph.name or "<onnx>"
    if not proto.HasField("graph") or proto.ir_version == 0:
        raise fail(name, "not an ONNX model (no graph or IR version)")
    opset = default_opset(proto, name)
    check_structure(proto.graph, name, opset)
    check_supported(proto.graph, name, opset, supports)
    try:
        light = without_weights(proto)  # the checker and inference copy all they get
        onnx.checker.check_model(light)
    except onnx.checker.ValidationError as error:
        raise _attributed(proto.graph, name, opset, str(error), "", "invalid ONNX model") from None
    try:
        inferred = onnx.shape_inference.infer_shapes(light, strict_mode=True, data_prop=True)
    except onnx.shape_inference.InferenceError as error:
        if not UNKNOWN_LENGTH.search(str(error)):
            what = "shape inference failed"
            raise _attributed(proto.graph, name, opset, str(error), what, what) from None
        # onnx's Resize inference counts a `sizes` or `scales` of unknown length as empty
        # and fails in strict mode; onnxruntime runs such a model. Infer what it can.
        inferred = onnx.shape_inference.infer_shapes(light, strict_mode=False, data_prop=True)
    return LoadedModel(inferred if light is proto else with_weights(inferred, proto), name, opset)


def _read(path: Path, name: str) -> onnx.ModelProto:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise fail(name, f"cannot read the file: {error.strerror}") from None
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except DecodeError:
        raise fail(name, "not an ONNX model (truncated, or not a protobuf)") from None
    if not proto.HasField("graph"):
        raise fail(name, "not an ONNX model (no graph)")
    try:
        onnx.load_external_data_for_model(proto, str(path.parent))
    except (OSError, ValueError, onnx.checker.ValidationError) as error:
        raise fail(name, f"cannot load the external data: {_first_line(error)}") from None
    return proto


def default_opset(proto: onnx.ModelProto, name: str) -> int:
    """The model's default-domain opset; an error if onnx does not know it."""
    newest = onnx.defs.onnx_opset_version()
    versions = [o.version for o in proto.opset_import if o.domain in DEFAULT_DOMAINS]
    if not versions:
        raise fail(name, "the model imports no opset of the default ONNX domain")
    opset = max(versions)
    if opset > newest or opset < 1:
        raise fail(
            name,
            f"unknown opset {opset} of the default domain (the installed onnx "
            f"{onnx.__version__} knows opsets 1 to {newest})",
        )
    return opset


def check_structure(graph: onnx.GraphProto, name: str, opset: int) -> None:
    """
    What onnx's checker would report in its own words, said in mlc's: graph inputs of
    types mlc cannot take, node inputs nothing produces before the node, values
    defined twice, graph outputs no node computes.
    """
    defined: dict[str, str] = {init.name: "an initializer" for init in graph.initializer}
    for info in graph.input:
        if info.name not in defined:
            try:
                types.tensor_type(info)
            except types.UnsupportedType as error:
                raise fail(name, f"graph input '{info.name}': {error}") from None
        defined[info.name] = "a graph input"
    producers = {out: i for i, node in enumerate(graph.node) for out in node.output if out}
    for index, node in enumerate(graph.node):
        if problem := _node_problem(graph, index, defined, producers):
            raise fail(name, problem, node, opset, index)
    for info in graph.output:
        if info.name not in defined:
            raise fail(name, f"graph output '{info.name}' is not computed by any node")


def _node_problem(
    graph: onnx.GraphProto, index: int, defined: dict[str, str], producers: dict[str, int]
) -> str | None:
    """What is wrong with the inputs or outputs of node `index`; records its outputs."""
    node = graph.node[index]
    for value in node.input:
        if not value or value in defined:
            continue
        later = producers.get(value, -1)
        if later > index:
            return (
                f"input '{value}' is computed by a later node, "
                f"'{node_name(graph.node[later], later)}' (the nodes are not in order)"
            )
        return f"input '{value}' is not produced by any node, initializer or graph input"
    for value in node.output:
        if value in defined:
            return f"output '{value}' is already {defined[value]}"
        if value:
            defined[value] = f"the output of node '{node_name(node, index)}'"
    return None


def check_supported(graph: onnx.GraphProto, name: str, opset: int, supports: Supports) -> None:
    """One error for the nodes mlc cannot convert: the node itself if there is only one,
    else a list of every op type with its nodes."""
    missing: dict[str, list[int]] = {}
    for index, node in enumerate(graph.node):
        if node.domain not in DEFAULT_DOMAINS or not supports(node, opset):
            missing.setdefault(node_kind(node, 0), []).append(index)
    if not missing:
        return
    if len(missing) == 1 and len(indices := next(iter(missing.values()))) == 1:
        index = indices[0]
        node = graph.node[index]
        if node.domain in DEFAULT_DOMAINS and onnx.defs.has(node.op_type):
            why = f"mlc does not convert {node.op_type} at opset {opset}"
        else:
            why = f"no operator {node_kind(node, 0)} in onnx {onnx.__version__}"
        raise fail(name, why, node, opset, index)
    listed = "; ".join(
        f"{kind} (nodes {', '.join(repr(node_name(graph.node[i], i)) for i in indices)})"
        for kind, indices in missing.items()
    )
    raise fail(name, f"unsupported ONNX ops at opset {opset}: {listed}")


# onnx names the node a message is about as "Name: <name> OpType: <op>" (the checker)
# or "(op_type:<op>, node name: <name>)" (shape inference; no name for unnamed nodes).
_CHECKER_NODE = re.compile(r"Bad node spec for node\. Name: (.*?) OpType: (\S+)")
_INFERENCE_NODE = re.compile(r"\(op_type:([^,)]+)(?:, node name: ([^)]*))?\):\s*")


def _attributed(
    graph: onnx.GraphProto, name: str, opset: int, text: str, on_node: str, alone: str
) -> OnnxImportError:
    """
    onnx's message as mlc's error, on the node it names when that node is unique; what
    it is about goes before it (`on_node` on a node, `alone` else; "" for nothing).
    """
    op_type, node, message = "", "", _first_line(text)
    if found := _CHECKER_NODE.search(text):
        node, op_type = found.group(1), found.group(2)
    elif found := _INFERENCE_NODE.search(text):
        op_type, node = found.group(1), found.group(2) or ""
        message = _first_line(text[found.end() :])
    candidates = [
        i for i, n in enumerate(graph.node) if n.op_type == op_type and (not node or n.name == node)
    ]
    if op_type and len(candidates) == 1:
        index = candidates[0]
        text = f"{on_node}: {message}" if on_node else one_line(message)
        return fail(name, text, graph.node[index], opset, index)
    return fail(name, f"{alone}: {message}")


def _first_line(error: BaseException | str) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    for prefix in ("[ShapeInferenceError] ", "[TypeInferenceError] ", "Inference error(s): "):
        text = text.removeprefix(prefix)
    return text


# ---------------------------------------------------------------------------
# Names that are not valid UTF-8
# ---------------------------------------------------------------------------


def _decode_names(proto: onnx.ModelProto, apply: bool) -> bool:
    """
    Whether some name of the model is not valid UTF-8 (protobuf then hands out bytes);
    with `apply`, replace each such name by its text with the bad bytes escaped
    (`r\\xff`), so names print, locate ops and key values as text.
    """
    found = False
    for owner, field in _name_fields(proto):
        value = getattr(owner, field) if isinstance(field, str) else owner[field]
        if isinstance(value, bytes):
            found = True
            if not apply:
                return True
            text = value.decode("utf-8", "backslashreplace")
            if isinstance(field, str):
                setattr(owner, field, text)
            else:
                owner[field] = text
    return found


def _name_fields(proto: onnx.ModelProto) -> Iterator[tuple[object, str | int]]:
    graph = proto.graph
    yield graph, "name"
    for info in [*graph.input, *graph.output, *graph.value_info]:
        yield info, "name"
        if info.type.HasField("tensor_type"):
            for dim in info.type.tensor_type.shape.dim:
                if dim.HasField("dim_param"):
                    yield dim, "dim_param"
    for init in graph.initializer:
        yield init, "name"
    for node in graph.node:
        yield from ((node, f) for f in ("name", "op_type", "domain"))
        yield from ((node.input, i) for i in range(len(node.input)))
        yield from ((node.output, i) for i in range(len(node.output)))
        yield from ((a, "name") for a in node.attribute)

"""
Reading an ONNX model: from a path or a `ModelProto` to a checked, shape-inferred model.

Everything a user can get wrong here (a missing or truncated file, a file that is not
ONNX, missing external data, an opset newer than the installed onnx package knows,
shapes that contradict each other) is one `ImportError_` diagnostic, never a
traceback. onnx's own checker and shape inference do the checking.
"""

import os
from dataclasses import dataclass
from pathlib import Path

import onnx
import onnx.checker
import onnx.shape_inference
from google.protobuf.message import DecodeError

from mlc.diagnostics import Diagnostic, DiagnosticError, SourceLoc

DEFAULT_DOMAINS = ("", "ai.onnx")


class OnnxImportError(DiagnosticError):
    """The model could not be imported: one-line diagnostics."""


def fail(message: str, location: SourceLoc | None = None) -> OnnxImportError:
    return OnnxImportError([Diagnostic("error", message, location)])


@dataclass(frozen=True)
class LoadedModel:
    """A checked model, the name its locations use, and its default-domain opset."""

    proto: onnx.ModelProto
    name: str
    opset: int


def load(src: "str | os.PathLike[str] | onnx.ModelProto") -> LoadedModel:
    """Read, check and shape-infer a model; an `OnnxImportError` for bad input."""
    if isinstance(src, onnx.ModelProto):
        proto, name = src, src.graph.name or "<onnx>"
    else:
        proto, name = _read(Path(src)), str(src)
    if not proto.HasField("graph") or proto.ir_version == 0:
        raise fail("not an ONNX model (no graph or IR version)", SourceLoc(name))
    opset = default_opset(proto, name)
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as error:
        raise fail(f"invalid ONNX model: {_first_line(error)}", SourceLoc(name)) from None
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, strict_mode=True, data_prop=True)
    except onnx.shape_inference.InferenceError as error:
        raise fail(f"inconsistent shapes: {_first_line(error)}", SourceLoc(name)) from None
    return LoadedModel(inferred, name, opset)


def _read(path: Path) -> onnx.ModelProto:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise fail(f"cannot read '{path}': {error.strerror}") from None
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except DecodeError:
        raise fail(f"'{path}' is not an ONNX model (truncated or not a protobuf)") from None
    if not proto.HasField("graph"):
        raise fail(f"'{path}' is not an ONNX model (no graph)")
    try:
        onnx.load_external_data_for_model(proto, str(path.parent))
    except (OSError, ValueError, onnx.checker.ValidationError) as error:
        raise fail(f"cannot load the external data of '{path}': {_first_line(error)}") from None
    return proto


def default_opset(proto: onnx.ModelProto, name: str) -> int:
    """The model's default-domain opset; an error if onnx does not know it."""
    newest = onnx.defs.onnx_opset_version()
    versions = [o.version for o in proto.opset_import if o.domain in DEFAULT_DOMAINS]
    if not versions:
        raise fail("the model imports no opset of the default ONNX domain", SourceLoc(name))
    opset = max(versions)
    if opset > newest or opset < 1:
        raise fail(
            f"unknown opset {opset} of the default domain (the installed onnx "
            f"{onnx.__version__} knows opsets 1 to {newest})",
            SourceLoc(name),
        )
    return opset


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    return text.removeprefix("[ShapeInferenceError] ").removeprefix("[TypeInferenceError] ")

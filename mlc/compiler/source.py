"""
What `mlc.compile` was given, classified once: MLIR text, a path to a .mlir or .onnx
file, an ONNX `ModelProto`, or an xDSL `ModuleOp`.

A `Source` knows the bytes that decide its program before any parsing (`data`: the
text, the file, the serialised model), which key the compile cache, so a cache hit
runs no frontend at all; and it turns into a verified module (`load`) on a miss.
"""

import hashlib
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    ComplexType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    ShapedType,
    VectorType,
)
from xdsl.ir import Attribute, OpResult
from xdsl.utils.exceptions import ParseError

from mlc import diagnostics, resources
from mlc.backend import cache, runtime
from mlc.compiler.errors import CompileError
from mlc.ir import parse_module, type_text


class SourceKind(Enum):
    MLIR_TEXT = "MLIR text"
    MLIR_FILE = "a .mlir file"
    ONNX_FILE = "an .onnx file"
    ONNX_MODEL = "an ONNX ModelProto"
    MODULE = "a ModuleOp"


@dataclass(frozen=True, eq=False)
class Source:
    """A program as given, with what kind of thing it is."""

    kind: SourceKind
    value: Any

    @staticmethod
    def of(src: Any) -> "Source":
        """Classify `src`; a `TypeError` for anything `mlc.compile` does not take."""
        if isinstance(src, ModuleOp):
            return Source(SourceKind.MODULE, src)
        if isinstance(src, str | os.PathLike):
            if str(src).endswith(".onnx"):
                return Source(SourceKind.ONNX_FILE, src)
            if isinstance(src, os.PathLike) or _looks_like_path(src):
                return Source(SourceKind.MLIR_FILE, src)
            return Source(SourceKind.MLIR_TEXT, src)
        if type(src).__name__ == "ModelProto":
            return Source(SourceKind.ONNX_MODEL, src)
        raise TypeError(
            "mlc.compile takes MLIR text, a .mlir or .onnx path, an ONNX ModelProto or a "
            f"ModuleOp, got {type(src).__name__}"
        )

    def data(self) -> bytes | None:
        """
        What determines the program, before any parsing: MLIR text, a file's bytes, a
        serialised ModelProto. None for a `ModuleOp`, an unreadable file (`load`
        reports it), or an ONNX model that may keep weights in external files.
        """
        try:
            match self.kind:
                case SourceKind.MODULE:
                    return None
                case SourceKind.MLIR_TEXT:
                    return b"mlir\0" + self.value.encode()
                case SourceKind.MLIR_FILE:
                    return b"mlir\0" + Path(self.value).read_bytes()
                case SourceKind.ONNX_FILE:
                    data = Path(self.value).read_bytes()
                case SourceKind.ONNX_MODEL:
                    data = self.value.SerializeToString(deterministic=True)
        except OSError:
            return None
        # an external tensor names its file under the key "location"
        return None if b"location" in data else b"onnx\0" + data

    def label(self) -> str:
        """What to call the program in a progress line: its file's name, else its kind."""
        if self.kind in (SourceKind.MLIR_FILE, SourceKind.ONNX_FILE):
            return os.path.basename(self.value)
        return self.kind.value

    def digest(self) -> str | None:
        """
        The sha256 of `data()` (hex), None where `data()` is. A file's is remembered in
        the disk cache with the file's stamp (size, times, inode: `cache.remembered`),
        so a warm compile of a 100 MB model reads the model file no more: any write to
        the file changes the stamp, and the file is read and hashed again.
        """
        if self.kind not in (SourceKind.MLIR_FILE, SourceKind.ONNX_FILE):
            data = self.data()
            return None if data is None else hashlib.sha256(data).hexdigest()
        try:
            path = os.path.realpath(self.value)
            stamp = cache.stamp(path)
        except OSError:
            return None  # `load` reports it

        def content_digest() -> str:
            data = self.data()
            return "-" if data is None else hashlib.sha256(data).hexdigest()

        name = hashlib.sha256(path.encode()).hexdigest()[:32]
        stamps = repr((path, stamp))
        digest = cache.remembered(f"file-{name}", stamps, content_digest, stamp[3])
        return None if digest == "-" else digest

    def load(self) -> ModuleOp:
        """The program as a verified module (a copy of a given `ModuleOp`)."""
        if self.kind is SourceKind.MODULE:
            module = self.value.clone()
            check_compilable(module)
            return module
        if self.kind in (SourceKind.ONNX_FILE, SourceKind.ONNX_MODEL):
            return _import_onnx(self.value)
        name, text = "<string>", self.value
        if self.kind is SourceKind.MLIR_FILE:
            path = Path(self.value)
            try:
                text = path.read_text()
            except OSError as error:
                raise CompileError(
                    [diagnostics.Diagnostic("error", f"cannot read {path}: {error.strerror}")]
                ) from None
            name = str(path)
        try:
            module = parse_module(text, name)
        except ParseError as error:
            raise CompileError([diagnostics.from_parse_error(error)]) from None
        if errors := diagnostics.verify_module(module):
            raise CompileError(errors)
        check_compilable(module)
        return module


def load(src: "str | os.PathLike[str] | ModuleOp") -> ModuleOp:
    """A verified module from MLIR text, a path to a .mlir or .onnx file, or a module."""
    return Source.of(src).load()


def check_resources_held(module: ModuleOp) -> None:
    """Compiled code reads its `dense_resource` constants from this process's store."""
    if unheld := resources.first_without_data(module):
        op, handle = unheld
        message = (
            f"dense_resource<{handle}> has no data: the text has no `dialect_resources` "
            "blob for it, and no frontend in this process made it"
        )
        raise CompileError([diagnostics.op_diagnostic(op, message)])


# Element types mlc compiles; others parse (and mlc-opt transforms them) but have no
# lowering, or no numpy dtype at a public function's boundary.
FLOATS = (Float16Type, BFloat16Type, Float32Type, Float64Type)
INTEGER_WIDTHS = (1, 8, 16, 32, 64)


def check_compilable(module: ModuleOp) -> None:
    """`check_types`, then each public function's boundary (`check_boundary`)."""
    check_types(module)
    for op in module.body.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks and op.sym_visibility is None:
            check_boundary(op)


def check_types(module: ModuleOp) -> None:
    """A `CompileError` at the first op with a value of an element type mlc cannot
    compile (f80, f128, float8, complex, integers wider than 64 bits)."""
    for op in module.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for value in values:
            if (problem := type_problem(value.type)) is not None:
                kind = "result" if isinstance(value, OpResult) else "argument"
                message = f"{kind} #{value.index} has {problem}"
                raise CompileError([diagnostics.op_diagnostic(op, message)])


def check_boundary(function: func.FuncOp) -> None:
    """A `CompileError` unless each argument and result of a public function has a
    numpy counterpart (not a vector, not i4)."""
    signature = function.function_type
    for kind, types in (("argument", signature.inputs), ("result", signature.outputs)):
        for i, type_ in enumerate(types.data):
            element = type_.element_type if isinstance(type_, ShapedType) else type_  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
            if isinstance(type_, VectorType):
                problem = f"is a vector ({type_text(type_)}), which a caller cannot pass"
            elif isinstance(element, BFloat16Type):
                continue  # checked at the call: bf16 arrays are cast by the caller
            else:
                try:
                    runtime.dtype_of(element)
                    continue
                except runtime.RuntimeTypeError as error:
                    problem = f"has {error}"
            message = f"{kind} #{i} of a public function {problem}"
            raise CompileError([diagnostics.op_diagnostic(function, message)])


def type_problem(type_: Attribute) -> str | None:
    """Why mlc cannot compile values of `type_` (None if it can, or does not judge)."""
    element = type_.element_type if isinstance(type_, ShapedType) else type_  # pyright: ignore[reportUnknownMemberType, reportAttributeAccessIssue]
    if isinstance(element, AnyFloat) and not isinstance(element, FLOATS):
        name = element.name
    elif isinstance(element, ComplexType):
        name = "complex"
    elif isinstance(element, IntegerType) and element.width.data > 64:
        name = f"i{element.width.data}"
    else:
        return None
    return (
        f"element type {name}, which mlc does not compile "
        "(f16, bf16, f32, f64, i1 to i64 and index)"
    )


def _import_onnx(model: Any) -> ModuleOp:
    # Imported here: the ONNX frontend needs the optional `onnx` package, and importing
    # it takes a while; only ONNX sources need it. Its errors are `CompileError`s.
    from mlc.frontends.onnx import import_onnx

    return import_onnx(model)


def _looks_like_path(text: str) -> bool:
    return (
        "\n" not in text and ("{" not in text) and (text.endswith(".mlir") or os.path.exists(text))
    )

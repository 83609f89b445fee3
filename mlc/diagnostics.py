"""
User-facing diagnostics: the one way mlc reports an error, a warning or a remark.

A diagnostic reads as MLIR's do: `file:line:col: error: 'ml.add' op message`,
then the offending source line and a caret under the column. Passes report
through `op_error` (fatal) and `op_warning` / `op_remark` (not fatal); parse and
verification failures become diagnostics through `from_parse_error` and
`verify_module`. Whoever drives the compiler decides where diagnostics go: by
default warnings print to stderr and remarks (a pass explaining what it did or
declined to do) are dropped unless `remarks_enabled()` is in force (as under
`mlc-opt --remarks`); `capture()` collects all of them instead (as
`mlc-opt --verify-diagnostics` does).
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn

from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    NameLoc,
    StringAttr,
)
from xdsl.ir import Attribute, Operation
from xdsl.traits import NoTerminator, SymbolTable
from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException

from mlc.op_signatures import SignatureVerifier


@dataclass(frozen=True)
class SourceLoc:
    """
    Where a diagnostic points: a line and column of a text file (`file:3:7`), a named
    node of a binary file such as an ONNX model (`model.onnx: node 'cut' (Slice, opset
    17)`: `node` is its name, `detail` what else identifies it), or just a file.
    """

    file: str
    line: int = 0
    column: int = 0
    node: str | None = None
    detail: str = ""

    def __str__(self) -> str:
        text = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        if self.node is not None:
            text += f": node '{self.node}'" + (f" ({self.detail})" if self.detail else "")
        return text


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error", "warning", "remark" or "note"
    message: str
    location: SourceLoc | None = None

    def render(self, sources: dict[str, str] | None = None) -> str:
        """The MLIR-style text, with the source line and a caret where known."""
        head = f"{self.location}: " if self.location else ""
        text = f"{head}{self.severity}: {self.message}"
        loc = self.location
        source = (sources or {}).get(loc.file) if loc and loc.line else None
        if loc is None or source is None:
            return text
        lines = source.splitlines()
        if not 0 < loc.line <= len(lines):
            return text
        line = lines[loc.line - 1]
        caret = " " * (loc.column - 1) + "^"
        return f"{text}\n{line}\n{caret}"


class DiagnosticError(Exception):
    """One or more error diagnostics; what the drivers report and exit 1 on."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("\n".join(d.render() for d in diagnostics))
        self.diagnostics = diagnostics

    @property
    def node(self) -> str | None:
        """The name of the model node the first diagnostic points at, if any."""
        located = [d.location for d in self.diagnostics if d.location is not None]
        return located[0].node if located else None


class CompileError(DiagnosticError):
    """
    The program could not be compiled: one-line diagnostics with locations. What
    `mlc.compile` and the frontends raise (`mlc.CompileError`); `node` names the model
    node at fault, where one is.
    """


class OpError(PassFailedException):
    """A pass could not go on because of this op (raised by `op_error`)."""

    def __init__(self, op: Operation, message: str):
        super().__init__(f"'{op.name}' op {message}")
        self.op = op
        self.message = message

    def diagnostic(self) -> Diagnostic:
        return op_diagnostic(self.op, self.message)


def source_loc(location: Attribute) -> SourceLoc | None:
    """The first file position (or name) a location attribute holds."""
    match location:
        case FileLineColLoc():
            return SourceLoc(location.filename.data, location.line.data, location.column.data)
        case NameLoc():
            inner = source_loc(location.location)
            if inner is None:
                return SourceLoc(f'"{location.desc.data}"')
            if not inner.line and inner.node is None:
                # A named thing of a file without lines: an imported model's node.
                return SourceLoc(inner.file, node=location.desc.data)
            return inner
        case CallSiteLoc():
            return source_loc(location.callee) or source_loc(location.caller)
        case FusedLoc():
            for inner in location.locations.data:  # pyright: ignore[reportAttributeAccessIssue, reportUnknownVariableType, reportUnknownMemberType]
                if found := source_loc(inner):  # pyright: ignore[reportUnknownArgumentType]
                    return found
            return None
        case _:
            return None


def op_location(op: Operation) -> SourceLoc | None:
    """The op's own location, or that of the nearest enclosing op that has one."""
    current: Operation | None = op
    while current is not None:
        if found := source_loc(current.location):
            return found
        current = current.parent_op()
    return None


def op_diagnostic(op: Operation, message: str, severity: str = "error") -> Diagnostic:
    return Diagnostic(severity, f"'{op.name}' op {message}", op_location(op))


def op_error(op: Operation, message: str) -> NoReturn:
    """Stop the current pass: `op` is not something it can handle, and `message` says why."""
    raise OpError(op, message)


# ---------------------------------------------------------------------------
# Non-fatal diagnostics and where they go
# ---------------------------------------------------------------------------

Handler = Callable[[Diagnostic], None]


_print_remarks = False


def _print_to_stderr(diagnostic: Diagnostic) -> None:
    import sys

    if diagnostic.severity == "remark" and not _print_remarks:
        return
    print(diagnostic.render(), file=sys.stderr)


_handlers: list[Handler] = [_print_to_stderr]


@contextmanager
def remarks_enabled(enabled: bool = True) -> Iterator[None]:
    """Let the default handler print remarks in the block (it drops them otherwise)."""
    global _print_remarks
    previous, _print_remarks = _print_remarks, enabled
    try:
        yield
    finally:
        _print_remarks = previous


def emit(diagnostic: Diagnostic) -> None:
    _handlers[-1](diagnostic)


def op_warning(op: Operation, message: str) -> None:
    emit(op_diagnostic(op, message, "warning"))


def op_remark(op: Operation, message: str) -> None:
    emit(op_diagnostic(op, message, "remark"))


@contextmanager
def capture() -> Iterator[list[Diagnostic]]:
    """Collect the non-fatal diagnostics emitted in the block instead of printing them."""
    collected: list[Diagnostic] = []
    _handlers.append(collected.append)
    try:
        yield collected
    finally:
        _handlers.pop()


# ---------------------------------------------------------------------------
# Parse and verification failures as diagnostics
# ---------------------------------------------------------------------------


def from_parse_error(error: ParseError) -> Diagnostic:
    where = error.span.get_location()
    return Diagnostic("error", one_line(error.msg), SourceLoc(where.file, where.line, where.col))


def one_line(message: str) -> str:
    """
    Reword an xDSL message as an MLIR diagnostic: one line, starting in lower case.

    xDSL's constraint messages span lines ("... does not verify:\n<reason>").
    """
    parts = [p.strip().removesuffix(":") for p in str(message).splitlines() if p.strip()]
    text = ": ".join(parts)
    if text[:1].isupper() and text[1:2].islower():
        text = text[0].lower() + text[1:]
    return text


def verify_op(op: Operation, verifier: SignatureVerifier | None = None) -> Diagnostic | None:
    """Verify one op, not its nested ops; a diagnostic if it is invalid. A `verifier`
    shared by the ops of a module checks each signature against its definition once."""
    if op.has_trait(SymbolTable) and (duplicate := redefined_symbol(op)):
        return duplicate
    try:
        if verifier is None:
            op.verify(verify_nested_ops=False)
        else:
            verifier.verify(op)
        for region in op.regions:
            for block in region.blocks:
                if block.ops or len(region.blocks) != 1 or op.has_trait(NoTerminator):
                    continue
                raise DiagnosticException(
                    "contains an empty block in a single-block region that expects "
                    "at least a terminator"
                )
    except DiagnosticException as error:
        message = one_line(str(error).removeprefix("Operation does not verify: "))
        return op_diagnostic(op, message)
    except ValueError as error:  # how xDSL reports broken structure (erased operands)
        return op_diagnostic(op, one_line(str(error)))
    return None


def redefined_symbol(table: Operation) -> Diagnostic | None:
    """
    A symbol defined twice in a symbol table, reported at the second definition (xDSL
    reports it on the table, which has no location of its own when parsed).
    """
    seen: dict[str, Operation] = {}
    for region in table.regions:
        for block in region.blocks:
            for op in block.ops:
                name = op.properties.get("sym_name") or op.attributes.get("sym_name")
                if not isinstance(name, StringAttr):
                    continue
                if (first := seen.setdefault(name.data, op)) is not op:
                    where = op_location(first)
                    message = f'redefinition of symbol "{name.data}"'
                    return op_diagnostic(op, message + (f" (first at {where})" if where else ""))
    return None


def verify_module(module: Operation) -> list[Diagnostic]:
    """Every verification failure in the module, in textual order, one per op."""
    verifier = SignatureVerifier()
    return [d for op in module.walk() if (d := verify_op(op, verifier)) is not None]
